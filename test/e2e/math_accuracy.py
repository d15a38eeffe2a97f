#!/usr/bin/python3
"""Error of the compiled exp, log, tanh and erf against libm.

Compiled float32 kernels evaluate exp, tanh and erf as polynomial
approximations that vectorize (zero-cpu-approximate-math) instead of
calling libm; log stays with libm and is measured as the control. This compiles a graph of the four ONNX ops with zero-opt,
evaluates it with `zero-run --infer` on about 200,000 points per function
(wide ranges, dense near the places where approximations break: 0, the
over- and underflow bounds of exp, the subnormals of log) and compares each
result with libm's double-precision value (Python's math module) rounded to
float32. It reports the largest error in float32 ulps, and fails if one
exceeds MAX_ULP or a special value (inf, 0, NaN) differs. One departure is
accepted and counted: exp results that libm gives as subnormal numbers
(x below -87.3) may flush to zero, as they do under flush-to-zero
arithmetic.

Usage: /usr/bin/python3 test/e2e/math_accuracy.py --build build
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Largest error accepted, in float32 ulps of the correctly rounded result:
# an order of magnitude under forward parity's 1e-5 relative (about 80 ulps).
# Measured: exp 5 (near overflow), tanh 4, erf 4; libm's log 1.
MAX_ULP = 8.0
N = 200_000


def points(rng):
    f32 = np.float32
    exp_x = np.concatenate([
        np.linspace(-87.0, 88.0, N // 2), rng.uniform(-1.0, 1.0, N // 4),
        rng.uniform(-104.0, -87.0, N // 8), rng.uniform(88.0, 89.0, N // 8 - 6),
        [0.0, -0.0, 100.0, -110.0, np.inf, -np.inf]]).astype(f32)
    log_x = np.concatenate([
        np.exp(rng.uniform(math.log(1e-37), math.log(3e38), N // 2)),
        rng.uniform(0.5, 2.0, N // 4),
        rng.uniform(1e-45, 1e-38, N // 4 - 5),
        [1.0, 0.0, np.inf, np.finfo(f32).tiny, np.finfo(f32).max]]).astype(f32)
    tanh_x = np.concatenate([
        np.linspace(-20.0, 20.0, N // 2), rng.uniform(-1e-3, 1e-3, N // 4),
        rng.uniform(-4.0, 4.0, N // 4 - 4), [0.0, 1e-30, np.inf, -np.inf]]).astype(f32)
    erf_x = np.concatenate([
        np.linspace(-6.0, 6.0, N // 2), rng.uniform(-1e-3, 1e-3, N // 4),
        rng.uniform(-3.0, 3.0, N // 4 - 4), [0.0, 1e-30, np.inf, -np.inf]]).astype(f32)
    return {"exp": exp_x, "log": log_x, "tanh": tanh_x, "erf": erf_x}


def libm(name, x):
    f = {"exp": math.exp, "log": math.log, "tanh": math.tanh, "erf": math.erf}[name]
    out = np.empty(x.shape, np.float64)
    for i, v in enumerate(x.astype(np.float64)):
        try:
            out[i] = f(v) if not (name == "log" and v == 0.0) else -math.inf
        except OverflowError:
            out[i] = math.inf
    with np.errstate(over="ignore"):
        return out.astype(np.float32)


def ulp_error(ours, ref):
    """|ours - ref| in ulps of ref (float32); special values must match."""
    special = ~np.isfinite(ref) | (ref == 0)
    bad = special & ~((ours == ref) | (np.isnan(ours) & np.isnan(ref)))
    finite = ~special
    err = np.zeros(ref.shape, np.float64)
    # Results that flush to zero or round to a subnormal are measured in
    # the smallest normal's ulp, as float32 arithmetic itself resolves them.
    scale = np.maximum(np.abs(ref[finite]), np.finfo(np.float32).tiny)
    spacing = np.spacing(scale.astype(np.float32)).astype(np.float64)
    err[finite] = np.abs(ours[finite].astype(np.float64) - ref[finite].astype(np.float64)) / spacing
    return err, bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    xs = points(np.random.default_rng(0))
    ops = {"exp": "Exp", "log": "Log", "tanh": "Tanh", "erf": "Erf"}
    nodes, inputs, outputs = [], [], []
    for name, op in ops.items():
        inputs.append(helper.make_tensor_value_info(f"x_{name}", TensorProto.FLOAT, [1, N]))
        outputs.append(helper.make_tensor_value_info(f"y_{name}", TensorProto.FLOAT, [1, N]))
        nodes.append(helper.make_node(op, [f"x_{name}"], [f"y_{name}"], name=f"/{op}"))
    model = helper.make_model(helper.make_graph(nodes, "math", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 17)])
    with tempfile.TemporaryDirectory(prefix="zero-math-") as tmp:
        path = os.path.join(tmp, "math.onnx")
        onnx.save(model, path)
        np.savez(os.path.join(tmp, "x.npz"), **{f"x_{k}": v[None, :] for k, v in xs.items()})
        for cmd in ([os.path.join(bindir, "zero-opt"), path, "--mode=infer", "-o", os.path.join(tmp, "out")],
                    [os.path.join(bindir, "zero-run"), os.path.join(tmp, "out"), "--infer",
                     "--data", os.path.join(tmp, "x.npz"), "--out", os.path.join(tmp, "y.npz")]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                sys.stderr.write(f"command failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
                return 1
        ys = np.load(os.path.join(tmp, "y.npz"))
        failed = False
        for name in ops:
            ours = ys[f"y_{name}"].reshape(-1)
            ref = libm(name, xs[name])
            flushed = np.zeros(ref.shape, bool)
            if name == "exp":
                sub = (ref != 0) & (np.abs(ref) < np.finfo(np.float32).tiny)
                flushed = sub & (ours == 0)
                ours = np.where(flushed, ref, ours)
            err, bad = ulp_error(ours, ref)
            worst = int(np.argmax(err))
            ok = err.max() <= MAX_ULP and not bad.any()
            failed |= not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name:5s} max {err.max():.2f} ulp "
                  f"(at x = {xs[name][worst]:.9g}), mean {err.mean():.3f} ulp, "
                  f"special values {'differ at ' + str(int(bad.sum())) + ' points' if bad.any() else 'equal'}"
                  + (f", {int(flushed.sum())} subnormal results flushed to zero" if flushed.any() else ""))
        print("math accuracy against libm: " + ("FAILED" if failed else f"all within {MAX_ULP:g} ulp"))
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
