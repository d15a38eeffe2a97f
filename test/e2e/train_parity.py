#!/usr/bin/python3
"""Training parity with PyTorch: losses and final weights after N steps.

For the MLP (with LayerNorm), the CNN (Conv + MaxPool + Gemm), the GPT
(tied embeddings, causal mask, cross entropy) and a GPT over 1024 tokens
(gpt_long: its attention GEMMs in blocks of what the causal mask keeps,
zero-split-masked-matmuls), and for each configuration
(plain AdamW with weight decay, gradient accumulation 3, clipping at 0.5,
and more), zero-opt + zero-run and PyTorch train from the same initial
weights on the same data. Every step's loss must agree within rtol 1e-5
and every final weight within atol 1e-5.

Usage: /usr/bin/python3 test/e2e/train_parity.py --build build [--only NAME]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS_DIR = os.path.join(ROOT, "test", "e2e", "models")
LOSS_RTOL, WEIGHT_ATOL, STEPS = 1e-5, 1e-5, 10

# name -> (zero-opt flags, train_torch.py flags[, models])
CONFIGS = {
    "adamw": (["--optimizer=adamw", "--lr=1e-3", "--weight-decay=0.01"],
              ["--optimizer", "adamw", "--lr", "1e-3", "--weight-decay", "0.01"]),
    "adamw-accum3": (["--optimizer=adamw", "--lr=1e-3", "--weight-decay=0.01",
                      "--gradient-accumulation-steps=3"],
                     ["--optimizer", "adamw", "--lr", "1e-3", "--weight-decay", "0.01",
                      "--accumulation", "3"]),
    "adamw-clip0.5": (["--optimizer=adamw", "--lr=1e-3", "--weight-decay=0.01",
                       "--gradient-clipping=0.5"],
                      ["--optimizer", "adamw", "--lr", "1e-3", "--weight-decay", "0.01",
                       "--clip", "0.5"]),
    # Frozen parameters, and buffers (causal masks, position ids), are
    # constants: no state, no update.
    "adamw-freeze": (["--optimizer=adamw", "--lr=1e-3", "--weight-decay=0.01",
                      "--freeze=wpe.weight,ln_f.weight"],
                     ["--optimizer", "adamw", "--lr", "1e-3", "--weight-decay", "0.01",
                      "--freeze", "wpe.weight,ln_f.weight"], ["gpt"]),
    # The other optimizers, on the MLP.
    "adam-l2": (["--optimizer=adam", "--lr=1e-3", "--weight-decay=0.01"],
                ["--optimizer", "adam", "--lr", "1e-3", "--weight-decay", "0.01"], ["mlp"]),
    "sgd-momentum": (["--optimizer=sgd", "--lr=0.05", "--momentum=0.9", "--weight-decay=0.01"],
                     ["--optimizer", "sgd", "--lr", "0.05", "--momentum", "0.9",
                      "--weight-decay", "0.01"], ["mlp"]),
    "sgd-nesterov": (["--optimizer=sgd", "--lr=0.05", "--momentum=0.9", "--nesterov"],
                     ["--optimizer", "sgd", "--lr", "0.05", "--momentum", "0.9",
                      "--nesterov"], ["mlp"]),
    "adagrad": (["--optimizer=adagrad", "--lr=0.05"],
                ["--optimizer", "adagrad", "--lr", "0.05"], ["mlp"]),
}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"command failed: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        sys.exit(1)
    return r.stdout


def compare(name, cfg, log_path, ours_path, ref_path):
    ref = np.load(ref_path)
    ours = np.load(ours_path)
    log = [json.loads(l) for l in open(log_path)]
    loss_ours = np.array([e["loss"] for e in log])
    loss_ref = ref["losses"]
    ok = len(loss_ours) == len(loss_ref)
    loss_rel = np.max(np.abs(loss_ours - loss_ref) / np.abs(loss_ref)) if ok else np.inf
    ok &= bool(loss_rel <= LOSS_RTOL)
    w_err = 0.0
    for k in ref.files:
        if not k.startswith("param:"):
            continue
        pname = k[len("param:"):]
        if pname not in ours.files:
            print(f"  {name}/{cfg}: parameter {pname} missing from saved weights")
            ok = False
            continue
        w_err = max(w_err, float(np.max(np.abs(ours[pname] - ref[k]))))
    ok &= w_err <= WEIGHT_ATOL
    print(f"{'ok  ' if ok else 'FAIL'} {name:4s} {cfg:14s} loss max rel err {loss_rel:.2e} "
          f"(limit {LOSS_RTOL:g}), weight max abs err {w_err:.2e} (limit {WEIGHT_ATOL:g})")
    return ok


def check_constants(model_path, out_dir, frozen):
    """Frozen initializers and non-float buffers never reach the training
    step as arguments, so they get no optimizer state and cannot change."""
    import onnx
    plan = json.load(open(os.path.join(out_dir, "plan.json")))
    args = plan["functions"]["train_step"]["arguments"]
    names = {a["name"] for a in args}
    states_of = {a.get("state_of") for a in args if a["role"] == "optimizer_state"}
    consts = set(frozen) | {t.name for t in onnx.load(model_path).graph.initializer
                            if t.data_type != onnx.TensorProto.FLOAT}
    bad = sorted(c for c in consts if c in names or c in states_of)
    print(f"     constants kept out of the training step: {sorted(consts)}"
          + (f"; but found {bad}" if bad else ""))
    return not bad and bool(consts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only")
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    ok = True
    with tempfile.TemporaryDirectory(prefix="zero-train-") as tmp:
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"), tmp])
        # A shape for this test alone, exported apart (same files either way).
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"), tmp,
             "--only", "gpt_long"])
        for name in ["mlp", "cnn", "gpt", "gpt_long"]:
            if args.only and args.only != name:
                continue
            model = os.path.join(tmp, f"{name}.onnx")
            data = os.path.join(tmp, f"{name}.data.npz")
            for cfg, spec in CONFIGS.items():
                zflags, tflags = spec[0], spec[1]
                if len(spec) > 2 and name not in spec[2]:
                    continue
                out = os.path.join(tmp, f"{name}.{cfg}.out")
                log = os.path.join(tmp, f"{name}.{cfg}.jsonl")
                weights = os.path.join(tmp, f"{name}.{cfg}.weights.npz")
                ref = os.path.join(tmp, f"{name}.{cfg}.torch.npz")
                run([os.path.join(bindir, "zero-opt"), model, "-o", out] + zflags)
                run([os.path.join(bindir, "zero-run"), out, "--data", data,
                     "--steps", str(STEPS), "--log", log, "--save-weights", weights])
                run(["/usr/bin/python3", os.path.join(MODELS_DIR, "train_torch.py"),
                     name, model, data, ref, "--steps", str(STEPS)] + tflags)
                ok &= compare(name, cfg, log, weights, ref)
                if "--freeze" in tflags:
                    frozen = tflags[tflags.index("--freeze") + 1].split(",")
                    ok &= check_constants(model, out, frozen)
    print("training parity with PyTorch: " + ("all agree" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
