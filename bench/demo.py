#!/usr/bin/python3
"""The main job, end to end: a GPT exported from PyTorch, compiled by
zero-opt and run by zero-run on this CPU, checked against ONNX Runtime.

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

        step("2. Compile it: import ONNX -> TOSA -> linalg -> LLVM -> shared library")
        out = os.path.join(work, "gpt.out")
        secs = run([os.path.join(bindir, "zero-opt"), model, "-o", out])
        plan = json.load(open(os.path.join(out, "plan.json")))
        params = [a for a in plan["arguments"] if a["role"] == "parameter"]
        inputs = [a for a in plan["arguments"] if a["role"] == "input"]
        n = sum(int(np.prod(a["shape"])) for a in params)
        print(f"compiled in {secs:.1f}s: {len(params)} parameter tensors ({n} values), "
              f"inputs {', '.join(a['name'] + str(a['shape']) for a in inputs)}, "
              f"outputs {', '.join(r['name'] + str(r['shape']) for r in plan['results'])}")
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
        print("\nzero-opt's compiled forward pass matches ONNX Runtime.")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
