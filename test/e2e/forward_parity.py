#!/usr/bin/python3
"""Forward parity with ONNX Runtime on models exported from PyTorch.

Exports the MLP, CNN and tied-embedding causal GPT of test/e2e/models,
compiles each with zero-opt, evaluates it with `zero-run --infer` and
compares every output with ONNX Runtime (onnxruntime-node, CPU) on the same
batches. Tolerance: rtol 1e-5, plus atol 1e-6 for values near zero, where
float32 rounding alone exceeds any relative bound (both references differ
from float64 by that much there).

Usage: /usr/bin/python3 test/e2e/forward_parity.py --build build
"""
import argparse
import os
import subprocess
import sys
import tempfile

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RTOL, ATOL = 1e-5, 1e-6


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"command failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        sys.exit(1)
    return r.stdout


def check_gpt_structure(path):
    """The GPT must really tie its embedding and apply a causal mask."""
    m = onnx.load(path)
    inits = {t.name for t in m.graph.initializer}
    uses = {}
    for n in m.graph.node:
        for i in n.input:
            if i in inits:
                uses.setdefault(i, set()).add(n.op_type)
    tied = [k for k, v in uses.items() if "Gather" in v and len(v) > 1]
    masks = [t for t in m.graph.initializer if t.data_type == onnx.TensorProto.BOOL]
    assert tied, "no initializer is used by both Gather and another op"
    assert masks, "no causal mask buffer"
    return tied[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    tools = os.path.join(ROOT, "test", "tools")
    with tempfile.TemporaryDirectory(prefix="zero-parity-") as tmp:
        run(["/usr/bin/python3", os.path.join(ROOT, "test/e2e/models/export_models.py"), tmp])
        tied = check_gpt_structure(os.path.join(tmp, "gpt.onnx"))
        print(f"gpt: '{tied}' is shared by the embedding Gather and the output MatMul")
        failed = False
        for name in ["mlp", "cnn", "gpt"]:
            model = os.path.join(tmp, f"{name}.onnx")
            data = os.path.join(tmp, f"{name}.data.npz")
            out = os.path.join(tmp, f"{name}.out")
            ours = os.path.join(tmp, f"{name}.zero.npz")
            ref = os.path.join(tmp, f"{name}.ort.npz")
            run([os.path.join(bindir, "zero-opt"), model, "-o", out])
            run([os.path.join(bindir, "zero-run"), out, "--infer", "--data", data, "--out", ours])
            run(["node", os.path.join(tools, "run_ort.js"), model, data, ref])
            r = subprocess.run(["/usr/bin/python3", os.path.join(tools, "compare_npz.py"),
                                ours, ref, "--rtol", str(RTOL), "--atol", str(ATOL)],
                               capture_output=True, text=True)
            for line in r.stdout.splitlines():
                print(f"{name}: {line}")
            failed |= r.returncode != 0
        if failed:
            print("forward parity with ONNX Runtime: FAILED")
            return 1
        print(f"forward parity with ONNX Runtime: mlp, cnn, gpt agree (rtol {RTOL}, atol {ATOL})")
        return 0


if __name__ == "__main__":
    sys.exit(main())
