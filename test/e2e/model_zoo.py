#!/usr/bin/python3
"""Models that PyTorch and torchvision wrote train here as they do in PyTorch.

Each zoo model (export_models.ZOO: torchvision resnet18 and mobilenet_v2 in
float64, squeezenet1_1 with dropout 0, VisionTransformer,
torch.nn.TransformerEncoder between an embedding and a head; small
configurations) is exported with its training-mode graph, then:
  - 5 steps of SGD with momentum and of AdamW, from the same weights on the
    same data as PyTorch: every loss within rtol 1e-4, every final weight
    within atol 1e-4, every BatchNorm running statistic within atol 1e-5;
  - stage 3 on 2 ranks equals 1 rank at the same global batch: losses rtol
    1e-5, weights and running statistics atol 1e-5. Without BatchNorm the
    one rank accumulates 2 micro-batches; with it, the 2 ranks take
    statistics over both micro-batches (--batchnorm=sync) and the one rank
    runs one micro-batch of twice the size.

Usage: /usr/bin/python3 test/e2e/model_zoo.py --build build [--only NAME]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS_DIR = os.path.join(ROOT, "test", "e2e", "models")
sys.path.insert(0, MODELS_DIR)
import export_models  # noqa: E402

STEPS = 5
TORCH_RTOL, TORCH_ATOL, BUFFER_ATOL = 1e-4, 1e-4, 1e-5
RANKS_RTOL, RANKS_ATOL = 1e-5, 1e-5
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
OPTIMIZERS = {
    "sgd-momentum": (["--optimizer=sgd", "--lr=0.01", "--momentum=0.9"],
                     ["--optimizer", "sgd", "--lr", "0.01", "--momentum", "0.9"]),
    # Attention's key bias has an exactly zero gradient (softmax ignores a
    # constant along the key axis); with eps = 1e-8 Adam scales the float
    # noise that stands for that zero into lr-sized steps, which no two
    # summation orders reproduce. eps = 1e-6 keeps noise below the tolerance.
    "adamw": (["--optimizer=adamw", "--lr=1e-3", "--weight-decay=0.01", "--eps=1e-6"],
              ["--optimizer", "adamw", "--lr", "1e-3", "--weight-decay", "0.01",
               "--eps", "1e-6"]),
}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r


def train(bindir, model, data, tmp, tag, flags, ranks=1):
    out = os.path.join(tmp, tag)
    t0 = time.time()
    run([os.path.join(bindir, "zero-opt"), model, "-o", out] + flags)
    compile_s = time.time() - t0
    log, weights = os.path.join(tmp, tag + ".jsonl"), os.path.join(tmp, tag + ".npz")
    cmd = [os.path.join(bindir, "zero-run"), out, "--data", data,
           "--steps", str(STEPS), "--log", log, "--save-weights", weights]
    run(MPIRUN + ["-np", str(ranks)] + cmd if ranks > 1 else cmd)
    losses = np.array([json.loads(l)["loss"] for l in open(log)])
    return losses, np.load(weights), compile_s


def max_error(weights, refs):
    """(largest abs error, where) over `refs`; (inf, name) if one is missing."""
    err, worst = 0.0, ""
    for name, ref in refs.items():
        if name not in weights:
            return np.inf, name + " (missing)"
        e = float(np.max(np.abs(weights[name] - ref))) if ref.size else 0.0
        if e > err:
            err, worst = e, name
    return err, worst


def compare(what, losses, weights, ref_losses, ref_weights, rtol, atol,
            ref_buffers={}, buffer_atol=0.0):
    ok = len(losses) == len(ref_losses)
    rel = float(np.max(np.abs(losses - ref_losses) / np.abs(ref_losses))) if ok else np.inf
    err, worst = max_error(weights, ref_weights)
    ok &= rel <= rtol and err <= atol
    msg = (f"{what}: loss max rel err {rel:.1e} (limit {rtol:g}), weight max abs err "
           f"{err:.1e} (limit {atol:g}{', at ' + worst if worst else ''})")
    if ref_buffers:
        berr, bworst = max_error(weights, ref_buffers)
        ok &= berr <= buffer_atol
        msg += (f", running statistic max abs err {berr:.1e} (limit {buffer_atol:g}, "
                f"at {bworst})")
    print(f"{'ok  ' if ok else 'FAIL'} {msg}", flush=True)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", choices=sorted(export_models.ZOO))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    ok = True
    with tempfile.TemporaryDirectory(prefix="zero-zoo-") as tmp:
        for name in [args.only] if args.only else list(export_models.ZOO):
            run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                 tmp, "--only", name])
            model = os.path.join(tmp, f"{name}.onnx")
            data = os.path.join(tmp, f"{name}.data.npz")
            for opt, (zflags, tflags) in OPTIMIZERS.items():
                losses, weights, secs = train(bindir, model, data, tmp,
                                              f"{name}.{opt}", zflags)
                ref = os.path.join(tmp, f"{name}.{opt}.torch.npz")
                run(["/usr/bin/python3", os.path.join(MODELS_DIR, "train_torch.py"),
                     name, model, data, ref, "--steps", str(STEPS)] + tflags)
                r = np.load(ref)
                ref_w = {k[len("param:"):]: r[k] for k in r.files if k.startswith("param:")}
                ref_b = {k[len("buffer:"):]: r[k] for k in r.files
                         if k.startswith("buffer:")}
                ok &= compare(f"{name} {opt} vs PyTorch (compiled in {secs:.1f} s)",
                              losses, weights, r["losses"], ref_w, TORCH_RTOL, TORCH_ATOL,
                              ref_b, BUFFER_ATOL)
            zflags = OPTIMIZERS["adamw"][0] + ["--stage=3"]
            g = onnx.load(model).graph
            if any(n.op_type == "BatchNormalization" for n in g.node):
                # One micro-batch of both ranks' rows: the statistics that
                # --batchnorm=sync takes over the two ranks.
                shapes = [f"--input-shape={i.name}=" + "x".join(
                    str(2 * d.dim_value if k == 0 else d.dim_value)
                    for k, d in enumerate(i.type.tensor_type.shape.dim))
                    for i in g.input]
                one_flags, two_flags = shapes, ["--batchnorm=sync"]
            else:
                one_flags, two_flags = ["--gradient-accumulation-steps=2"], []
            one, w1, _ = train(bindir, model, data, tmp, f"{name}.n1", zflags +
                               ["--world-size=1"] + one_flags)
            two, w2, _ = train(bindir, model, data, tmp, f"{name}.n2", zflags +
                               ["--world-size=2"] + two_flags, ranks=2)
            ok &= compare(f"{name} stage 3, 2 ranks vs 1 rank", two, w2, one,
                          dict(w1.items()), RANKS_RTOL, RANKS_ATOL)
    print("model zoo: " + ("all agree" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
