#!/usr/bin/python3
"""Dropout in training mode: its generator, and its masks on N ranks.

- Keep rate: a 1 x 10^6 tensor through Dropout(ratio 0.25, training mode),
  compiled and evaluated (zero-run --infer): the fraction kept is within
  0.3% of 0.75, every kept value is exactly float32(1 / 0.75) times its
  input, every other is 0, and neighbouring elements are uncorrelated.
- Masks across ranks: loss = sum(Dropout(x, 0.5) * w) with x[row, :] =
  2^-row, so the SGD update of w (lr 1) holds every mask bit of the
  12-sample global batch exactly. The masks decoded after step 1 and after
  step 2 are bitwise equal on 1, 2 and 3 ranks at stage 3 (w sharded), and
  differ between the two steps.
- The GPT test model with dropout 0.1 (embeddings, attention, residuals):
  5 AdamW steps at stage 3 on 1, 2 and 3 ranks over the same global batch
  of 12 (micro-batches of 2, accumulated 6, 3 and 2 times) give equal
  losses (rtol 1e-5) and weights (atol 1e-5); another --seed gives other
  losses.

Usage: /usr/bin/python3 test/e2e/dropout.py --build build
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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS_DIR = os.path.join(ROOT, "test", "e2e", "models")
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
ROWS, COLS = 12, 16


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r


def dropout_model(path, shape, ratio, with_weight):
    ratio_t = numpy_helper.from_array(np.array(ratio, np.float32), "ratio")
    train_t = numpy_helper.from_array(np.array(True), "training")
    inits = [ratio_t, train_t]
    nodes = [helper.make_node("Dropout", ["x", "ratio", "training"], ["d", "mask"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    if with_weight:
        inits.append(numpy_helper.from_array(np.ones(shape[1:], np.float32), "w"))
        nodes += [helper.make_node("Mul", ["d", "w"], ["p"]),
                  helper.make_node("ReduceSum", ["p"], ["loss"], keepdims=0)]
        outs = [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])]
    else:
        outs = [helper.make_tensor_value_info("d", TensorProto.FLOAT, shape),
                helper.make_tensor_value_info("mask", TensorProto.BOOL, shape)]
    g = helper.make_graph(nodes, "dropout", [x], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def keep_rate(bindir, tmp):
    ratio, n = 0.25, 1_000_000
    model = os.path.join(tmp, "rate.onnx")
    dropout_model(model, [1, n], ratio, with_weight=False)
    out = os.path.join(tmp, "rate")
    run([os.path.join(bindir, "zero-opt"), model, "--mode=infer", "-o", out])
    x = np.random.default_rng(0).uniform(0.5, 1.5, (1, n)).astype(np.float32)
    np.savez(os.path.join(tmp, "rate.npz"), x=x)
    run([os.path.join(bindir, "zero-run"), out, "--infer", "--data",
         os.path.join(tmp, "rate.npz"), "--out", os.path.join(tmp, "rate.out.npz")])
    r = np.load(os.path.join(tmp, "rate.out.npz"))
    d, mask = r["d"][0, 0], r["mask"][0, 0].astype(bool)
    kept = float(mask.mean())
    scale = np.float32(1.0) / np.float32(1.0 - ratio)
    exact = bool(np.array_equal(d[mask], x[0][mask] * scale)) and not d[~mask].any()
    corr = float(np.corrcoef(mask[:-1], mask[1:])[0, 1])
    ok = abs(kept - (1 - ratio)) <= 0.003 * (1 - ratio) and exact and abs(corr) < 0.01
    print(f"{'ok  ' if ok else 'FAIL'} keep rate {kept:.5f} over {n} elements "
          f"(want {1 - ratio} within 0.3%); kept values x / (1 - ratio) exactly: "
          f"{exact}; neighbour correlation {corr:.1e}", flush=True)
    return ok


def masks_across_ranks(bindir, tmp):
    model = os.path.join(tmp, "bits.onnx")
    dropout_model(model, ["N", COLS], 0.5, with_weight=True)
    # Two steps of 12 rows; row r of each step is 2^-r.
    x = np.repeat(2.0 ** -np.arange(ROWS, dtype=np.float32), COLS).reshape(ROWS, COLS)
    data = os.path.join(tmp, "bits.npz")
    np.savez(data, x=np.concatenate([x, x]))
    masks = {}
    for n in (1, 2, 3):
        out = os.path.join(tmp, f"bits{n}")
        run([os.path.join(bindir, "zero-opt"), model, "-o", out, "--stage=3",
             f"--world-size={n}", f"--input-shape=x={ROWS // n}x{COLS}",
             "--persistence-threshold=0", "--optimizer=sgd", "--lr=1"])
        ws = []
        for steps in (1, 2):
            w = os.path.join(tmp, f"bits{n}.{steps}.npz")
            cmd = [os.path.join(bindir, "zero-run"), out, "--data", data,
                   "--steps", str(steps), "--save-weights", w]
            run(MPIRUN + ["-np", str(n)] + cmd if n > 1 else cmd)
            ws.append(np.load(w)["w"].astype(np.float64))
        # The update is the rank-averaged gradient: N times it is the sum
        # over the global batch, sum_r mask[r, c] * 2 * 2^-r.
        per_step = [n * (1.0 - ws[0]), n * (ws[0] - ws[1])]
        # In units of the last row's 2 * 2^-(ROWS-1), row r is bit ROWS-1-r.
        units = [np.rint(g * 2.0 ** (ROWS - 2)).astype(np.int64) for g in per_step]
        masks[n] = [np.array([(u >> (ROWS - 1 - r)) & 1 for r in range(ROWS)])
                    for u in units]
    ok = True
    for n in (2, 3):
        for s in (0, 1):
            same = np.array_equal(masks[n][s], masks[1][s])
            ok &= same
            print(f"{'ok  ' if same else 'FAIL'} step {s + 1} masks on {n} ranks "
                  f"equal 1 rank's, bit for bit", flush=True)
    frac = float(np.mean(masks[1]))
    differ = not np.array_equal(masks[1][0], masks[1][1])
    sane = 0.35 < frac < 0.65 and differ
    print(f"{'ok  ' if sane else 'FAIL'} kept {frac:.2f} of {2 * ROWS * COLS} "
          f"(ratio 0.5); step 2 draws other masks: {differ}", flush=True)
    return ok and sane


def gpt_across_ranks(bindir, tmp):
    run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"), tmp,
         "--only", "gpt_dropout"])
    model = os.path.join(tmp, "gpt_dropout.onnx")
    data = os.path.join(tmp, "gpt_dropout.data.npz")
    flags = ["--stage=3", "--optimizer=adamw", "--lr=1e-3", "--persistence-threshold=0"]
    micro_batches = 6
    results = {}
    for n, seed in ((1, 0), (2, 0), (3, 0), (1, 1)):
        out = os.path.join(tmp, f"gpt{n}.{seed}")
        run([os.path.join(bindir, "zero-opt"), model, "-o", out, f"--world-size={n}",
             f"--gradient-accumulation-steps={micro_batches // n}",
             f"--seed={seed}"] + flags)
        log, w = out + ".jsonl", out + ".npz"
        cmd = [os.path.join(bindir, "zero-run"), out, "--data", data, "--steps", "5",
               "--log", log, "--save-weights", w]
        run(MPIRUN + ["-np", str(n)] + cmd if n > 1 else cmd)
        results[(n, seed)] = (np.array([json.loads(l)["loss"] for l in open(log)]),
                              np.load(w))
    ok = True
    ref_l, ref_w = results[(1, 0)]
    for n in (2, 3):
        l, w = results[(n, 0)]
        rel = float(np.max(np.abs(l - ref_l) / np.abs(ref_l)))
        err = max(float(np.max(np.abs(w[k] - ref_w[k]))) for k in ref_w.files)
        good = rel <= 1e-5 and err <= 1e-5
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} GPT dropout 0.1, stage 3, {n} ranks vs 1: "
              f"loss max rel err {rel:.1e} (limit 1e-05), weight max abs err {err:.1e} "
              f"(limit 1e-05)", flush=True)
    other = float(np.max(np.abs(results[(1, 1)][0] - ref_l) / np.abs(ref_l)))
    good = other > 1e-4
    ok &= good
    print(f"{'ok  ' if good else 'FAIL'} --seed=1 changes the losses (max rel "
          f"{other:.1e})", flush=True)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    with tempfile.TemporaryDirectory(prefix="zero-dropout-") as tmp:
        ok = keep_rate(bindir, tmp)
        ok &= masks_across_ranks(bindir, tmp)
        ok &= gpt_across_ranks(bindir, tmp)
    print("dropout: " + ("all agree" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
