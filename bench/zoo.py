#!/usr/bin/python3
"""Compile time and step time of each zoo model, against PyTorch eager's
step time on the same machine, in the same run.

The models and inputs are test/e2e/model_zoo.py's (export_models.ZOO: the
same configurations, micro-batches and element types), trained with AdamW
(lr 1e-3, weight decay 0.01). zero-opt compiles with --no-object-cache
(every kernel compiled); zero-run and PyTorch each run --warmup + --steps
steps on one OpenBLAS thread, and the median step after warm-up is
reported. PyTorch is timed around zero_grad + forward + backward + step.

Usage: /usr/bin/python3 bench/zoo.py [--build build] [--steps 10] [--only NAME]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e", "models"))
import export_models  # noqa: E402


def torch_steps(name, data_path, count):
    """Per-step milliseconds of PyTorch eager over `count` steps."""
    model, batch, _ = export_models.build(name)
    data = {k: torch.from_numpy(v) for k, v in np.load(data_path).items()}
    n = next(iter(data.values())).shape[0]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    times = []
    for s in range(count):
        rows = [(s * batch + i) % n for i in range(batch)]
        args = [v[rows] for v in data.values()]
        t0 = time.perf_counter()
        opt.zero_grad()
        model(*args)[0].backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--only", choices=sorted(export_models.ZOO))
    args = ap.parse_args()
    torch.set_num_threads(1)
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    count = args.warmup + args.steps
    print("| model | parameters | dtype | micro-batch | compile | zero-run step "
          "| PyTorch eager step | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="zero-zoo-bench-") as tmp:
        for name in [args.only] if args.only else list(export_models.ZOO):
            subprocess.run(["/usr/bin/python3",
                            os.path.join(ROOT, "test/e2e/models/export_models.py"),
                            tmp, "--only", name], check=True, capture_output=True)
            model = os.path.join(tmp, f"{name}.onnx")
            data = os.path.join(tmp, f"{name}.data.npz")
            out = os.path.join(tmp, name)
            t0 = time.time()
            subprocess.run([os.path.join(bindir, "zero-opt"), model, "-o", out,
                            "--no-object-cache", "--optimizer=adamw", "--lr=1e-3",
                            "--weight-decay=0.01"], check=True, capture_output=True)
            compile_s = time.time() - t0
            log = os.path.join(tmp, f"{name}.jsonl")
            subprocess.run([os.path.join(bindir, "zero-run"), out, "--data", data,
                            "--steps", str(count), "--log", log],
                           check=True, capture_output=True)
            ours = statistics.median(
                [json.loads(l)["time_ms"] for l in open(log)][args.warmup:])
            theirs = statistics.median(torch_steps(name, data, count)[args.warmup:])
            m, batch, _ = export_models.build(name)
            nparams = sum(p.numel() for p in m.parameters())
            dtype = str(next(m.parameters()).dtype).replace("torch.", "")
            print(f"| {name} | {nparams / 1e6:.2f}M | {dtype} | {batch} | "
                  f"{compile_s:.1f} s | {ours:.1f} ms | {theirs:.1f} ms | "
                  f"{ours / theirs:.2f} |", flush=True)


if __name__ == "__main__":
    main()
