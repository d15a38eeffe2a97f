#!/usr/bin/python3
"""The main job, end to end: a GPT exported from PyTorch, compiled by
zero-opt, run and trained by zero-run on this CPU, and checked against ONNX
Runtime (forward) and PyTorch (training); then compiled for ZeRO stage 3 on
2 ranks, trained under mpirun, and checked against one rank at the same
global batch.

Usage: /usr/bin/python3 bench/demo.py [--build build] [--keep DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def step(msg):
    print(f"\n== {msg}")


def run(cmd, show=True):
    if show:
        print("$ " + " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd))
    t = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        sys.exit(r.returncode)
    out = (r.stdout + r.stderr).strip()
    if show and out:
        print(out)
    return time.time() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--keep", help="keep the files in this folder")
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    work = args.keep or tempfile.mkdtemp(prefix="zero-demo-")
    os.makedirs(work, exist_ok=True)
    try:
        step("1. Export a small GPT from PyTorch (tied embeddings, causal mask, loss output)")
        run(["/usr/bin/python3", os.path.join(ROOT, "test/e2e/models/export_models.py"),
             work, "--only", "gpt"], show=False)
        model = os.path.join(work, "gpt.onnx")
        data = os.path.join(work, "gpt.data.npz")
        print(f"model: {model} ({os.path.getsize(model)} bytes), data: {data}")

        step("2. Compile it: import ONNX -> TOSA -> autodiff + AdamW -> linalg -> LLVM")
        out = os.path.join(work, "gpt.out")
        secs = run([os.path.join(bindir, "zero-opt"), model, "-o", out,
                    "--optimizer=adamw", "--lr=1e-3", "--weight-decay=0.01"])
        plan = json.load(open(os.path.join(out, "plan.json")))
        fwd = plan["functions"]["forward"]
        params = [a for a in fwd["arguments"] if a["role"] == "parameter"]
        inputs = [a for a in fwd["arguments"] if a["role"] == "input"]
        n = sum(int(np.prod(a["shape"])) for a in params)
        print(f"compiled in {secs:.1f}s: {len(params)} parameter tensors ({n} values), "
              f"inputs {', '.join(a['name'] + str(a['shape']) for a in inputs)}, "
              f"outputs {', '.join(r['name'] + str(r['shape']) for r in fwd['results'])}")
        mem = plan["functions"]["train_step"]["memory"]
        print(f"training step: {', '.join(sorted(plan['functions']))} compiled; "
              f"peak memory {mem['peak']} bytes (parameters "
              f"{mem['arguments']['parameter']}, optimizer state "
              f"{mem['arguments']['optimizer_state']}, temporaries {mem['temporaries_peak']})")
        print(f"{out}/ holds: {', '.join(sorted(os.listdir(out)))}")

        step("3. Run the forward pass over every batch of the data")
        ours = os.path.join(work, "gpt.zero.npz")
        run([os.path.join(bindir, "zero-run"), out, "--infer", "--data", data, "--out", ours])
        loss = np.load(ours)["loss"]
        print("loss per batch: " + ", ".join(f"{v:.6f}" for v in loss))

        step("4. Check against ONNX Runtime on the same batches")
        ref = os.path.join(work, "gpt.ort.npz")
        run(["node", os.path.join(ROOT, "test/tools/run_ort.js"), model, data, ref], show=False)
        run(["/usr/bin/python3", os.path.join(ROOT, "test/tools/compare_npz.py"), ours, ref,
             "--rtol", "1e-5", "--atol", "1e-6"])
        print("zero-opt's compiled forward pass matches ONNX Runtime.")

        step("5. Train 10 AdamW steps, and the same in PyTorch from the same weights")
        log = os.path.join(work, "gpt.log.jsonl")
        weights = os.path.join(work, "gpt.final.npz")
        run([os.path.join(bindir, "zero-run"), out, "--data", data, "--steps", "10",
             "--log", log, "--save-weights", weights])
        ref = os.path.join(work, "gpt.torch.npz")
        run(["/usr/bin/python3", os.path.join(ROOT, "test/e2e/models/train_torch.py"),
             "gpt", model, data, ref, "--steps", "10", "--optimizer", "adamw",
             "--lr", "1e-3", "--weight-decay", "0.01"], show=False)
        ours = [json.loads(l) for l in open(log)]
        theirs = np.load(ref)
        print(" step   loss (zero-opt)   loss (PyTorch)   grad norm   ms/step")
        for e, l in zip(ours, theirs["losses"]):
            print(f" {e['step']:4d}   {e['loss']:15.6f}   {l:14.6f}   {e['grad_norm']:9.4f}   "
                  f"{e['time_ms']:7.2f}")
        final = np.load(weights)
        werr = max(float(np.abs(final[k[6:]] - theirs[k]).max())
                   for k in theirs.files if k.startswith("param:"))
        lerr = max(abs(e["loss"] - l) / abs(l) for e, l in zip(ours, theirs["losses"]))
        print(f"\nlosses agree with PyTorch to {lerr:.1e} (relative), final weights to "
              f"{werr:.1e} (absolute)")

        step("6. ZeRO stage 3 on 2 ranks: parameters, gradients and Adam state sharded")
        sharded = os.path.join(work, "gpt.s3n2.out")
        run([os.path.join(bindir, "zero-opt"), model, "-o", sharded, "--stage=3",
             "--world-size=2", "--persistence-threshold=0", "--optimizer=adamw",
             "--lr=1e-3", "--weight-decay=0.01"])
        ts = json.load(open(os.path.join(sharded, "plan.json")))["functions"]["train_step"]
        m, comm = ts["memory"], ts["communication"]["bytes_sent_per_rank"]
        print(f"per rank: parameters {m['arguments']['parameter']} bytes, optimizer state "
              f"{m['arguments']['optimizer_state']} bytes (one rank held "
              f"{mem['arguments']['parameter']} and {mem['arguments']['optimizer_state']}); "
              f"planned bytes sent per step: " + ", ".join(f"{k} {v}" for k, v in comm.items()))
        slog = os.path.join(work, "gpt.s3n2.log.jsonl")
        sweights = os.path.join(work, "gpt.s3n2.final.npz")
        stats = os.path.join(work, "gpt.s3n2.stats.json")
        run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
             os.path.join(bindir, "zero-run"), sharded, "--data", data, "--steps", "5",
             "--log", slog, "--save-weights", sweights, "--stats", stats])
        # One rank with 2 accumulated micro-batches sees the same global batch.
        single = os.path.join(work, "gpt.g2.out")
        run([os.path.join(bindir, "zero-opt"), model, "-o", single,
             "--gradient-accumulation-steps=2", "--optimizer=adamw", "--lr=1e-3",
             "--weight-decay=0.01"], show=False)
        glog = os.path.join(work, "gpt.g2.log.jsonl")
        gweights = os.path.join(work, "gpt.g2.final.npz")
        run([os.path.join(bindir, "zero-run"), single, "--data", data, "--steps", "5",
             "--log", glog, "--save-weights", gweights], show=False)
        a = [json.loads(l)["loss"] for l in open(slog)]
        b = [json.loads(l)["loss"] for l in open(glog)]
        print(" step   loss (2 ranks, stage 3)   loss (1 rank, accumulation 2)")
        for i, (x, y) in enumerate(zip(a, b)):
            print(f" {i + 1:4d}   {x:23.6f}   {y:29.6f}")
        wa, wb = np.load(sweights), np.load(gweights)
        werr = max(float(np.abs(wa[k] - wb[k]).max()) for k in wb.files)
        lerr = max(abs(x - y) / abs(y) for x, y in zip(a, b))
        sent = json.load(open(stats))["bytes_sent_per_rank"]
        print(f"\nthe sharded run equals the single-rank run to {lerr:.1e} (losses, relative) "
              f"and {werr:.1e} (weights, absolute); rank 0 sent " +
              ", ".join(f"{k} {v}" for k, v in sent.items()) + " bytes in 5 steps, "
              "as planned")
        if lerr > 1e-5 or werr > 1e-5 or any(sent[k] != 5 * comm[k] for k in comm):
            sys.exit("the sharded run does not match")
        if args.keep:
            print(f"trained weights: {weights}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
