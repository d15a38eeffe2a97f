#!/usr/bin/python3
"""Compile time and device arena of `zero-opt --target=cuda` on the bench
GPT (bench/gpt_step.py's model: 4 layers, d = 256, T = 64, vocab 512,
micro-batch 8), against the CPU target's compile of the same step.

For each configuration: the median wall time of --runs compiles of each
target (no object cache, so every kernel is compiled), the GPU launches
and kernels, and the arena that plan.json lays out next to the memory
plan's peak of temporaries (what the arena cannot go below).

Usage: /usr/bin/python3 bench/cuda_compile.py [--build build] [--runs 3]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e", "models"))
import export_models  # noqa: E402
import gpt_step  # noqa: E402

CONFIGS = [
    ("fp32, stage 0, 1 rank", ["--stage=0", "--world-size=1"]),
    ("bf16, stage 0, 1 rank", ["--precision=bf16", "--stage=0", "--world-size=1"]),
    ("fp32, stage 2, 8 ranks", ["--stage=2", "--world-size=8"]),
    ("bf16, stage 3, 8 ranks", ["--precision=bf16", "--stage=3", "--world-size=8"]),
]


def compile_once(zopt, onnx, out, flags):
    start = time.perf_counter()
    r = subprocess.run([zopt, onnx, "-o", out, "--no-object-cache",
                        "--time-report"] + flags, capture_output=True, text=True)
    if r.returncode:
        sys.exit(r.stderr)
    return time.perf_counter() - start, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    zopt = os.path.join(os.path.abspath(args.build), "bin", "zero-opt")
    torch.manual_seed(0)
    V, D, H, L, T, B = (gpt_step.V, gpt_step.D, gpt_step.H, gpt_step.L,
                        gpt_step.T, gpt_step.B)
    model = export_models.GPT(vocab=V, d=D, n_head=H, n_layer=L, block_size=T)
    model.train()
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(1))
    with tempfile.TemporaryDirectory(prefix="zero-cuda-compile-") as tmp:
        onnx = gpt_step.export(model, tokens, tokens, tmp)
        print("| configuration | CPU compile (s) | CUDA compile (s) | GPU launches "
              "| kernels | arena (B) | temporaries peak (B) | arena / peak |")
        print("|---|---|---|---|---|---|---|---|")
        for name, flags in CONFIGS:
            out = os.path.join(tmp, "out")
            cpu = statistics.median(compile_once(zopt, onnx, out, flags)[0]
                                    for _ in range(args.runs))
            times = []
            for _ in range(args.runs):
                t, report = compile_once(zopt, onnx, out,
                                         flags + ["--target=cuda", "--gpu-arch=sm_90"])
                times.append(t)
            launches = re.search(r"mapped to (\d+) GPU launches", report).group(1)
            unique = re.search(r"(\d+) after deduplication", report).group(1)
            plan = json.load(open(os.path.join(out, "plan.json")))
            mem = plan["functions"]["train_step"]["memory"]
            arena, peak = mem["arena"]["bytes"], mem["temporaries_peak"]
            print(f"| {name} | {cpu:.2f} | {statistics.median(times):.2f} | "
                  f"{launches} | {unique} | {arena:,} | {peak:,} | "
                  f"{arena / peak:.3f} |")


if __name__ == "__main__":
    main()
