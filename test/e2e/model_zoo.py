#!/usr/bin/python3
"""Models that PyTorch and torchvision wrote train here as they do in PyTorch.

Each zoo model (export_models.ZOO: torchvision squeezenet1_1 with dropout 0,
torchvision VisionTransformer, torch.nn.TransformerEncoder between an
embedding and a head; small configurations) is exported with its
training-mode graph, then:
  - 5 steps of SGD with momentum and of AdamW, from the same weights on the
    same data as PyTorch: every loss within rtol 1e-4, every final weight
    within atol 1e-4;
  - stage 3 on 2 ranks equals 1 rank at the same global batch (accumulation
    2): losses rtol 1e-5, weights atol 1e-5.

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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS_DIR = os.path.join(ROOT, "test", "e2e", "models")
sys.path.insert(0, MODELS_DIR)
import export_models  # noqa: E402

STEPS = 5
TORCH_RTOL, TORCH_ATOL = 1e-4, 1e-4
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


def compare(what, losses, weights, ref_losses, ref_weights, rtol, atol):
    ok = len(losses) == len(ref_losses)
    rel = float(np.max(np.abs(losses - ref_losses) / np.abs(ref_losses))) if ok else np.inf
    err, worst = 0.0, ""
    for name, ref in ref_weights.items():
        if name not in weights:
            print(f"FAIL {what}: weight {name} missing from the saved weights")
            return False
        e = float(np.max(np.abs(weights[name] - ref))) if ref.size else 0.0
        if e > err:
            err, worst = e, name
    ok &= rel <= rtol and err <= atol
    print(f"{'ok  ' if ok else 'FAIL'} {what}: loss max rel err {rel:.1e} (limit {rtol:g}), "
          f"weight max abs err {err:.1e} (limit {atol:g}{', at ' + worst if worst else ''})",
          flush=True)
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
                ok &= compare(f"{name} {opt} vs PyTorch (compiled in {secs:.1f} s)",
                              losses, weights, r["losses"], ref_w, TORCH_RTOL, TORCH_ATOL)
            zflags = OPTIMIZERS["adamw"][0] + ["--stage=3"]
            one, w1, _ = train(bindir, model, data, tmp, f"{name}.n1", zflags +
                               ["--world-size=1", "--gradient-accumulation-steps=2"])
            two, w2, _ = train(bindir, model, data, tmp, f"{name}.n2", zflags +
                               ["--world-size=2"], ranks=2)
            ok &= compare(f"{name} stage 3, 2 ranks vs 1 rank", two, w2, one,
                          dict(w1.items()), RANKS_RTOL, RANKS_ATOL)
    print("model zoo: " + ("all agree" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
