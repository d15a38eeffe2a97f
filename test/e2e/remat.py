#!/usr/bin/python3
"""Rematerialization (--remat): exact, and its memory as planned.

- Bitwise: the MLP, CNN, GPT and GPT-with-dropout test models, 5 AdamW
  steps on one rank: every policy (blocks, sqrt) gives bitwise the losses
  and weights of `none` (recomputation repeats the forward's operations
  on the same values, and the same random draws).
- Memory: under every policy the peaks zero-run's counters measure
  (whole step and per category) equal plan.json's; on the GPT, `blocks`
  lowers the activation peak and at least halves the activation bytes
  the backward reads from the forward.
- Equivalence: the GPT with dropout at stage 3 with `blocks` and with
  `sqrt`, on 2 and 3 ranks against 1 rank at the same global batch of 12
  (micro-batches of 2, accumulated 6, 3 and 2 times): losses (rtol 1e-5)
  and weights (atol 1e-5), the tolerance of the equivalence suite; the
  measured peaks equal the plan there too (the recomputed segments'
  parameter re-gathers included).

Usage: /usr/bin/python3 test/e2e/remat.py --build build
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
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
POLICIES = ("none", "blocks", "sqrt")


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r


def train(bindir, tmp, name, policy, n=1, flags=()):
    """Compiles NAME with --remat=POLICY for N ranks, trains 5 steps;
    returns (losses, weights, measured memory, planned memory)."""
    out = os.path.join(tmp, f"{name}.{policy}.{n}")
    run([os.path.join(bindir, "zero-opt"), os.path.join(tmp, f"{name}.onnx"),
         "-o", out, f"--remat={policy}", f"--world-size={n}",
         "--optimizer=adamw", "--lr=1e-3"] + list(flags))
    log, w, stats = out + ".jsonl", out + ".npz", out + ".stats.json"
    cmd = [os.path.join(bindir, "zero-run"), out, "--data",
           os.path.join(tmp, f"{name}.data.npz"), "--steps", "5", "--log", log,
           "--save-weights", w, "--stats", stats]
    run(MPIRUN + ["-np", str(n)] + cmd if n > 1 else cmd)
    losses = np.array([json.loads(l)["loss"] for l in open(log)])
    measured = json.load(open(stats))["memory"]
    plan = json.load(open(os.path.join(out, "plan.json")))
    planned = plan["functions"]["train_step"]["memory"]
    return losses, np.load(w), measured, planned


def memory_matches(measured, planned):
    """Peak and per-category peaks of the counters against the plan."""
    same = measured["peak"] == planned["peak"]
    for cat, m in measured["categories"].items():
        same &= m["peak"] == planned["categories"][cat]["peak"]
    return same


def bitwise(bindir, tmp):
    ok = True
    for name in ("mlp", "cnn", "gpt", "gpt_dropout"):
        runs = {p: train(bindir, tmp, name, p) for p in POLICIES}
        ref_l, ref_w, _, _ = runs["none"]
        act_none = runs["none"][2]["categories"]["activations"]["peak"]
        for p in POLICIES:
            l, w, measured, planned = runs[p]
            same = np.array_equal(l, ref_l) and all(
                np.array_equal(w[k], ref_w[k]) for k in ref_w.files)
            plan_ok = memory_matches(measured, planned)
            act = measured["categories"]["activations"]["peak"]
            good = same and plan_ok
            note = ""
            if name == "gpt" and p == "blocks":
                # What the backward reads from the forward, the bytes the
                # ZeRO paper's activation figures count: at least halved.
                r = json.load(open(os.path.join(tmp, f"{name}.{p}.1",
                                                "plan.json")))["training"]["remat"]
                before, after = r["activation_bytes_before"], r["activation_bytes_after"]
                good &= act < act_none and 2 * after <= before
                note = (f" ({1 - act / act_none:.0%} less; held for the backward "
                        f"{before} -> {after} B)")
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} {name:12s} {p:6s} losses and "
                  f"weights bitwise equal to none: {same}; activation peak "
                  f"{act} B{note}, none {act_none} B; peak {measured['peak']} B "
                  f"= plan: {plan_ok}", flush=True)
    return ok


def compare_ranks(name, label, results):
    """Prints and checks runs on N ranks (RESULTS[n], from train) against
    the 1-rank run: losses (rtol 1e-5), weights (atol 1e-5), measured peaks
    equal to the plan."""
    ok = True
    ref_l, ref_w = results[1][0], results[1][1]
    for n, (l, w, measured, planned) in sorted(results.items()):
        rel = float(np.max(np.abs(l - ref_l) / np.abs(ref_l)))
        err = max(float(np.max(np.abs(w[k] - ref_w[k]))) for k in ref_w.files)
        plan_ok = memory_matches(measured, planned)
        good = rel <= 1e-5 and err <= 1e-5 and plan_ok
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} {name} {label:6s} stage 3, {n} "
              f"ranks vs 1: loss max rel err {rel:.1e}, weight max abs err "
              f"{err:.1e} (limits 1e-05); peak {measured['peak']} B = plan: "
              f"{plan_ok}", flush=True)
    return ok


def stage3_flags(n, micro_batches=6):
    """Stage 3 on N ranks at the same global batch of MICRO_BATCHES
    micro-batches (accumulated MICRO_BATCHES / N times per rank)."""
    return ["--stage=3", "--persistence-threshold=0",
            f"--gradient-accumulation-steps={micro_batches // n}"]


def equivalence(bindir, tmp):
    name = "gpt_dropout"
    ok = True
    for policy in ("blocks", "sqrt"):
        results = {n: train(bindir, tmp, name, policy, n, stage3_flags(n))
                   for n in (1, 2, 3)}
        ok &= compare_ranks(name, policy, results)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    with tempfile.TemporaryDirectory(prefix="zero-remat-") as tmp:
        for name in ("mlp", "cnn", "gpt", "gpt_dropout"):
            run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                 tmp, "--only", name])
        ok = bitwise(bindir, tmp)
        ok &= equivalence(bindir, tmp)
    print("remat: " + ("all agree" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
