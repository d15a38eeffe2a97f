#!/usr/bin/python3
"""ONNX training models (TrainingInfoProto) trained by zero-opt.

Builds linear regressions whose TrainingInfoProto algorithm computes
Gradient(loss wrt W, b) and applies ONNX's Adam, Adagrad or Momentum, with
the iteration count T incremented in the graph and every state bound back
through update_binding. The spec's other cases (IR.md, the Gradient op):
the algorithm reads the inference graph's prediction and computes the loss
itself, with the labels as zs; a Gradient evaluated at other values than
the ones its xs name (a look-ahead point); a Gradient with respect to an
intermediate value. zero-opt + zero-run train each for N steps, on 1 rank
and on 2 ranks (whose global batch is twice the graph's; an update that
reads one rank's batch other than through a Gradient is refused); the
reference is numpy with ONNX's own optimizer implementations
(onnx.backend.test.case.node.*.apply_*) and the analytic gradient of the
mean squared error over the global batch. Losses must agree within rtol
1e-5, weights within atol 1e-5. A ZeRO stage other than 0 is one clear
error.

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
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]


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


def algorithm_model(kind, path, w0, b0):
    """The inference graph predicts y = xW + b; the algorithm reads y and
    the labels t, computes the loss, and differentiates it with x and t as
    zs. 'algorithm-loss' updates with Momentum; 'lookahead' evaluates the
    Gradient at (W + mu V, b + mu V_b) and steps V <- mu V - r g,
    W <- W + V (Sutskever's Nesterov momentum); 'intermediate' takes the
    Gradient with respect to the intermediate h = xW (and b), forms
    dW = x^T dh itself and steps W <- W - r dW: one rank's share of the
    batch alone, which zero-opt refuses on N ranks."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, D])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [B, O])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["h"]),
         helper.make_node("Add", ["h", "b"], ["y"])],
        "regression", [x], [y],
        [numpy_helper.from_array(w0, "W"), numpy_helper.from_array(b0, "b")])
    t = helper.make_tensor_value_info("t", TensorProto.FLOAT, [B, O])
    loss = helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])
    alg = [helper.make_node("Sub", ["y", "t"], ["d"]),
           helper.make_node("Mul", ["d", "d"], ["d2"]),
           helper.make_node("ReduceMean", ["d2"], ["loss"], keepdims=0)]
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "R"),
             numpy_helper.from_array(np.array(0.9, np.float32), "mu")]
    bind = {"W": "W_new", "b": "b_new"}
    outs = [helper.make_tensor_value_info("W_new", TensorProto.FLOAT, [D, O]),
            helper.make_tensor_value_info("b_new", TensorProto.FLOAT, [O])]
    if kind in ("algorithm-loss", "lookahead"):
        inits += [numpy_helper.from_array(np.zeros_like(w0), "V_W"),
                  numpy_helper.from_array(np.zeros_like(b0), "V_b")]
        bind.update(V_W="V_W_new", V_b="V_b_new")
        outs += [helper.make_tensor_value_info("V_W_new", TensorProto.FLOAT, [D, O]),
                 helper.make_tensor_value_info("V_b_new", TensorProto.FLOAT, [O])]
    if kind == "algorithm-loss":
        inits.append(numpy_helper.from_array(np.array(1, np.int64), "T"))
        alg += [helper.make_node("Gradient", ["W", "b", "x", "t"], ["dW", "db"],
                                 domain=TRAINING, xs=["W", "b"], zs=["x", "t"],
                                 y="loss"),
                helper.make_node("Momentum", ["R", "T", "W", "b", "dW", "db", "V_W", "V_b"],
                                 ["W_new", "b_new", "V_W_new", "V_b_new"],
                                 domain=TRAINING, alpha=0.9, beta=1.0,
                                 norm_coefficient=0.0, mode="standard")]
    elif kind == "lookahead":
        for p in "Wb":
            alg += [helper.make_node("Mul", ["mu", f"V_{p}"], [f"muV_{p}"]),
                    helper.make_node("Add", [p, f"muV_{p}"], [f"{p}_ahead"])]
        alg.append(helper.make_node("Gradient", ["W_ahead", "b_ahead", "x", "t"],
                                    ["dW", "db"], domain=TRAINING, xs=["W", "b"],
                                    zs=["x", "t"], y="loss"))
        for p in "Wb":
            alg += [helper.make_node("Mul", ["R", f"d{p}"], [f"rd{p}"]),
                    helper.make_node("Sub", [f"muV_{p}", f"rd{p}"], [f"V_{p}_new"]),
                    helper.make_node("Add", [p, f"V_{p}_new"], [f"{p}_new"])]
    else:
        alg += [helper.make_node("Gradient", ["h", "b", "t"], ["dh", "db"],
                                 domain=TRAINING, xs=["h", "b"], zs=["t"],
                                 y="loss"),
                helper.make_node("Transpose", ["x"], ["xT"]),
                helper.make_node("MatMul", ["xT", "dh"], ["dW"])]
        for p in "Wb":
            alg += [helper.make_node("Mul", ["R", f"d{p}"], [f"rd{p}"]),
                    helper.make_node("Sub", [p, f"rd{p}"], [f"{p}_new"])]
    outs.append(loss)
    algorithm = helper.make_graph(alg, "step", [t], outs, inits)
    ti = onnx.TrainingInfoProto()
    ti.algorithm.CopyFrom(algorithm)
    for k, v in bind.items():
        e = ti.update_binding.add()
        e.key, e.value = k, v
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(TRAINING, 1)])
    model.training_info.append(ti)
    onnx.checker.check_model(model)
    onnx.save(model, path)


def mse_grad(x, t, w, b):
    d = x @ w + b - t
    g = 2.0 * d / d.size
    return float(np.mean(d * d)), [x.T @ g, g.sum(0)]


def algorithm_reference(kind, w, b, data, batch):
    """Numpy of the ONNX definition of each algorithm over `batch` rows."""
    x_all, t_all = data["x"], data["t"]
    n = x_all.shape[0]
    r, mu = np.float32(0.1), np.float32(0.9)
    v = [np.zeros_like(w), np.zeros_like(b)]
    losses = []
    for s in range(STEPS):
        rows = [(s * batch + i) % n for i in range(batch)]
        x, t = x_all[rows], t_all[rows]
        if kind == "lookahead":
            losses.append(mse_grad(x, t, w, b)[0])
            _, g = mse_grad(x, t, w + mu * v[0], b + mu * v[1])
            v = [mu * vi - r * gi for vi, gi in zip(v, g)]
            w, b = w + v[0], b + v[1]
            continue
        loss, g = mse_grad(x, t, w, b)
        losses.append(loss)
        if kind == "algorithm-loss":
            new = [apply_momentum(r, 1, p, gp, vp, 0.0, 0.9, 1.0)
                   for p, gp, vp in zip([w, b], g, v)]
            (w, v[0]), (b, v[1]) = new
        else:
            w, b = w - r * g[0], b - r * g[1]
        w, b = w.astype(np.float32), b.astype(np.float32)
    return losses, w, b


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


def train(bindir, model, data, out, ranks=1, extra=()):
    """Compiles and trains; returns (losses, weights) or an error string."""
    log, wts = out + ".jsonl", out + ".npz"
    run = [os.path.join(bindir, "zero-run"), out, "--data", data,
           "--steps", str(STEPS), "--log", log, "--save-weights", wts]
    if ranks > 1:
        run = MPIRUN + ["-np", str(ranks)] + run
    for cmd in ([os.path.join(bindir, "zero-opt"), model, "-o", out,
                 "--world-size", str(ranks), *extra], run):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            return f"{' '.join(cmd)}\n{r.stderr}"
    return [json.loads(l)["loss"] for l in open(log)], np.load(wts)


def compare(name, got, losses, w, b):
    if isinstance(got, str):
        print(f"FAIL {name}: {got}")
        return False
    ours, weights = got
    lerr = max(abs(a - c) / abs(c) for a, c in zip(ours, losses))
    werr = max(np.abs(weights["W"] - w).max(), np.abs(weights["b"] - b).max())
    good = len(ours) == STEPS and lerr <= 1e-5 and werr <= 1e-5
    print(f"{'ok  ' if good else 'FAIL'} {name:26s} loss max rel err {lerr:.2e}, "
          f"weight max abs err {werr:.2e}")
    return good


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
            losses, w, b = reference(kind, attrs, w0, b0, data)
            got = train(bindir, mpath, dpath, os.path.join(tmp, kind))
            ok &= compare(kind, got, losses, w, b)
        for kind in ["algorithm-loss", "lookahead", "intermediate"]:
            mpath = os.path.join(tmp, f"{kind}.onnx")
            algorithm_model(kind, mpath, w0, b0)
            for ranks in (1, 2):
                losses, w, b = algorithm_reference(kind, w0, b0, data, B * ranks)
                got = train(bindir, mpath, dpath,
                            os.path.join(tmp, f"{kind}-{ranks}"), ranks)
                name = f"{kind} on {ranks} rank{'s' * (ranks > 1)}"
                if kind == "intermediate" and ranks > 1:
                    # dW = x^T dh is this rank's share alone: refused.
                    want = "the update of 'W' reads this rank's input"
                    good = isinstance(got, str) and want in got
                    ok &= good
                    print(f"{'ok  ' if good else 'FAIL'} {name:26s} refused: "
                          f"{got.splitlines()[-1] if isinstance(got, str) else got}")
                    continue
                ok &= compare(name, got, losses, w, b)
        # The model's optimizer is its own: no ZeRO stage partitions it.
        out = os.path.join(tmp, "stage3")
        r = subprocess.run([os.path.join(bindir, "zero-opt"),
                            os.path.join(tmp, "momentum.onnx"), "-o", out,
                            "--stage", "3", "--world-size", "2"],
                           capture_output=True, text=True)
        want = "ZeRO stage 3: the model brings its own optimizer (TrainingInfoProto)"
        good = (r.returncode != 0 and want in r.stderr
                and r.stderr.count("error") == 1 and not os.path.exists(out))
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} --stage=3 is one clear error: "
              f"{r.stderr.strip()}")
    print("ONNX training models: " + ("all agree with ONNX's reference" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
