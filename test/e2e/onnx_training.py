#!/usr/bin/python3
"""ONNX training models (TrainingInfoProto) trained by zero-opt.

Builds a linear regression whose TrainingInfoProto algorithm computes
Gradient(loss wrt W, b) and applies ONNX's Adam, Adagrad or Momentum, with
the iteration count T incremented in the graph and every state bound back
through update_binding. zero-opt + zero-run train it for N steps; the
reference is numpy with ONNX's own optimizer implementations
(onnx.backend.test.case.node.*.apply_*) and the analytic gradient of the
mean squared error. Losses must agree within rtol 1e-5, weights within
atol 1e-5.

Usage: /usr/bin/python3 test/e2e/onnx_training.py --build build
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.backend.test.case.node.adagrad import apply_adagrad
from onnx.backend.test.case.node.adam import apply_adam
from onnx.backend.test.case.node.momentum import apply_momentum, apply_nesterov

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAINING = "ai.onnx.preview.training"
B, D, O, STEPS = 4, 3, 2, 8


def build_model(kind, path, w0, b0):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, D])
    t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [B, O])
    loss = helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"]),
             helper.make_node("Add", ["xw", "b"], ["y"]),
             helper.make_node("Sub", ["y", "t"], ["d"]),
             helper.make_node("Mul", ["d", "d"], ["d2"]),
             helper.make_node("ReduceMean", ["d2"], ["loss"], keepdims=0)]
    graph = helper.make_graph(nodes, "regression", [x, t], [loss],
                              [numpy_helper.from_array(w0, "W"),
                               numpy_helper.from_array(b0, "b")])

    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "R"),
             numpy_helper.from_array(np.array(0, np.int64), "T"),
             numpy_helper.from_array(np.array(1, np.int64), "one")]
    states = {"adam": ["V", "H"], "adagrad": ["H"], "momentum": ["V"],
              "nesterov": ["V"]}[kind]
    for s in states:
        inits.append(numpy_helper.from_array(np.zeros_like(w0), f"{s}_W"))
        inits.append(numpy_helper.from_array(np.zeros_like(b0), f"{s}_b"))
    alg = [helper.make_node("Gradient", ["W", "b"], ["dW", "db"],
                            domain=TRAINING, xs=["W", "b"], y="loss")]
    opt_in = ["R", "T", "W", "b", "dW", "db"] + [f"{s}_{p}" for s in states for p in "Wb"]
    opt_out = ["W_new", "b_new"] + [f"{s}_{p}_new" for s in states for p in "Wb"]
    attrs = {"adam": dict(alpha=0.9, beta=0.99, epsilon=1e-6, norm_coefficient=0.01),
             "adagrad": dict(epsilon=1e-6, decay_factor=0.1, norm_coefficient=0.01),
             "momentum": dict(alpha=0.9, beta=0.5, norm_coefficient=0.01, mode="standard"),
             "nesterov": dict(alpha=0.9, beta=1.0, norm_coefficient=0.01, mode="nesterov")}[kind]
    op = {"adam": "Adam", "adagrad": "Adagrad", "momentum": "Momentum",
          "nesterov": "Momentum"}[kind]
    alg.append(helper.make_node(op, opt_in, opt_out, domain=TRAINING, **attrs))
    alg.append(helper.make_node("Add", ["T", "one"], ["T_new"]))
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT,
                                          [D, O] if "W" in n else [O])
            for n in opt_out]
    outs.append(helper.make_tensor_value_info("T_new", TensorProto.INT64, []))
    algorithm = helper.make_graph(alg, "step", [], outs, inits)
    ti = onnx.TrainingInfoProto()
    ti.algorithm.CopyFrom(algorithm)
    for name in ["W", "b"] + [f"{s}_{p}" for s in states for p in "Wb"]:
        e = ti.update_binding.add()
        e.key, e.value = name, name + "_new"
    e = ti.update_binding.add()
    e.key, e.value = "T", "T_new"
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(TRAINING, 1)])
    model.training_info.append(ti)
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return attrs, states


def reference(kind, attrs, w, b, data):
    x_all, t_all = data["x"], data["t"]
    n = x_all.shape[0]
    st = {k: [np.zeros_like(w), np.zeros_like(b)] for k in ["V", "H"]}
    r, T = np.float32(0.1), np.int64(0)
    losses = []
    for s in range(STEPS):
        rows = [(s * B + i) % n for i in range(B)]
        x, t = x_all[rows], t_all[rows]
        d = x @ w + b - t
        losses.append(float(np.mean(d * d)))
        g = 2.0 * d / d.size
        grads = [x.T @ g, g.sum(0)]
        new = []
        for i, (p, gp) in enumerate(zip([w, b], grads)):
            if kind == "adam":
                p2, v2, h2 = apply_adam(r, T, p, gp, st["V"][i], st["H"][i],
                                        attrs["norm_coefficient"], 0.0, attrs["alpha"],
                                        attrs["beta"], attrs["epsilon"])
                st["V"][i], st["H"][i] = v2, h2
            elif kind == "adagrad":
                p2, h2 = apply_adagrad(r, T, p, gp, st["H"][i], attrs["norm_coefficient"],
                                       attrs["epsilon"], attrs["decay_factor"])
                st["H"][i] = h2
            else:
                fn = apply_momentum if kind == "momentum" else apply_nesterov
                p2, v2 = fn(r, T, p, gp, st["V"][i], attrs["norm_coefficient"],
                            attrs["alpha"], attrs["beta"])
                st["V"][i] = v2
            new.append(p2.astype(np.float32))
        w, b = new
        T += 1
    return losses, w, b


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal((D, O)).astype(np.float32)
    b0 = rng.standard_normal(O).astype(np.float32)
    data = {"x": rng.standard_normal((3 * B, D)).astype(np.float32),
            "t": rng.standard_normal((3 * B, O)).astype(np.float32)}
    ok = True
    with tempfile.TemporaryDirectory(prefix="zero-onnxtrain-") as tmp:
        dpath = os.path.join(tmp, "data.npz")
        np.savez(dpath, **data)
        for kind in ["adam", "adagrad", "momentum", "nesterov"]:
            mpath = os.path.join(tmp, f"{kind}.onnx")
            attrs, _ = build_model(kind, mpath, w0, b0)
            out = os.path.join(tmp, f"{kind}.out")
            log = os.path.join(tmp, f"{kind}.jsonl")
            wts = os.path.join(tmp, f"{kind}.npz")
            for cmd in ([os.path.join(bindir, "zero-opt"), mpath, "-o", out],
                        [os.path.join(bindir, "zero-run"), out, "--data", dpath,
                         "--steps", str(STEPS), "--log", log, "--save-weights", wts]):
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode:
                    print(f"FAIL {kind}: {' '.join(cmd)}\n{r.stderr}")
                    return 1
            losses, w, b = reference(kind, attrs, w0, b0, data)
            ours = [json.loads(l)["loss"] for l in open(log)]
            got = np.load(wts)
            lerr = max(abs(a - c) / abs(c) for a, c in zip(ours, losses))
            werr = max(np.abs(got["W"] - w).max(), np.abs(got["b"] - b).max())
            good = len(ours) == STEPS and lerr <= 1e-5 and werr <= 1e-5
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {kind:9s} loss max rel err {lerr:.2e}, "
                  f"weight max abs err {werr:.2e}")
    print("ONNX training models: " + ("all agree with ONNX's reference" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
