#!/usr/bin/python3
"""ZeRO equivalence and communication accounting under mpirun.

For the MLP, the CNN and the tied-embedding GPT, every ZeRO stage 0-3 on
N = 1, 2, 3, 4 ranks, with gradient accumulation g = 1 and 2, trains STEPS
steps and must give the same per-step losses (rtol 1e-5) and the same final
weights (atol 1e-5) as one rank at the same global batch (accumulation
N x g). The runtime's peak bytes per memory category must equal plan.json's
exactly, and the plan's model states the fp32 stage formulas. The bytes each rank sends, measured by the runtime's counters, must
equal plan.json's figure exactly, and the ring volumes of DESIGN.md
section 3 computed from the parameter count (up to padding and the scalar
all-reduces of loss and norms). From stage 2 on, gradients are
reduce-scattered as each micro-batch's backward completes them, so the
reduce-scatter volume is g times the table's; at stage 3 the all-gathers
are the forward's full gather plus backward re-gathers of the parameters
the backward reads, per micro-batch.

Usage: /usr/bin/python3 test/e2e/zero_equivalence.py --build build [--only NAME]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import memory_formulas

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS = 3
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe"]
FLAGS = ["-O1", "--optimizer=adamw", "--lr=1e-3", "--weight-decay=0.01",
         "--gradient-clipping=1.0", "--persistence-threshold=0"]


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r


def train(bindir, model, data, tmp, tag, n, stage, accum):
    out = os.path.join(tmp, tag)
    run([os.path.join(bindir, "zero-opt"), model, "-o", out, f"--world-size={n}",
         f"--stage={stage}", f"--gradient-accumulation-steps={accum}"] + FLAGS)
    log, w, st = (os.path.join(tmp, f"{tag}.{x}") for x in ("jsonl", "npz", "json"))
    cmd = [os.path.join(bindir, "zero-run"), out, "--data", data, "--steps", str(STEPS),
           "--log", log, "--save-weights", w, "--stats", st]
    run(MPIRUN + ["-np", str(n)] + cmd if n > 1 else cmd)
    plan = json.load(open(os.path.join(out, "plan.json")))
    return ([json.loads(l)["loss"] for l in open(log)], np.load(w), json.load(open(st)),
            plan)


def expected_table(plan, n, stage, accum):
    """Ring volumes of DESIGN.md section 3 (bytes per rank per step), from
    the parameters' sizes, with each parameter padded to a multiple of N;
    from stage 2 on the reduce-scatter runs once per micro-batch."""
    ts = plan["functions"]["train_step"]
    psi = padded = 0
    for a in ts["arguments"]:
        if a["role"] != "parameter":
            continue
        numel = a["shard"]["numel"] if "shard" in a else int(np.prod(a["shape"]))
        psi += numel
        padded += -(-numel // n) * n
    if stage == 0:
        return {"all_reduce": 2 * psi * (n - 1) // n * 4}
    per_micro = accum if stage >= 2 else 1
    return {"reduce_scatter": padded * (n - 1) // n * 4 * per_micro,
            "all_gather": padded * (n - 1) // n * 4}


def check_memory(plan, stats, n, stage):
    """The runtime's peak bytes per category equal plan.json's exactly, and
    the plan's model states equal the stage formulas."""
    mem = plan["functions"]["train_step"]["memory"]
    measured = stats["memory"]
    ok = measured["peak"] == mem["peak"]
    for c, v in mem["categories"].items():
        ok &= measured["categories"][c]["peak"] == v["peak"]
    formulas, _ = memory_formulas.formulas(memory_formulas.parameter_sizes(plan),
                                           n, stage)
    ok &= all(mem["model_states"][k] == v for k, v in formulas.items())
    return ok, (f" peak {measured['peak']} B (plan {mem['peak']}), model states "
                f"{sum(mem['model_states'].values())} B (formula "
                f"{sum(formulas.values())})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only")
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    ok = True
    with tempfile.TemporaryDirectory(prefix="zero-equiv-") as tmp:
        run(["/usr/bin/python3", os.path.join(ROOT, "test/e2e/models/export_models.py"), tmp])
        for name in ["mlp", "cnn", "gpt"]:
            if args.only and args.only != name:
                continue
            model = os.path.join(tmp, f"{name}.onnx")
            data = os.path.join(tmp, f"{name}.data.npz")
            refs = {}
            for accum in [1, 2]:
                for n in [1, 2, 3, 4]:
                    g = n * accum
                    if g not in refs:
                        refs[g] = train(bindir, model, data, tmp, f"{name}.ref{g}", 1, 0, g)
                    rl, rw, _, _ = refs[g]
                    for stage in [0, 1, 2, 3]:
                        tag = f"{name}.s{stage}.n{n}.g{accum}"
                        try:
                            losses, w, stats, plan = train(bindir, model, data, tmp, tag,
                                                           n, stage, accum)
                        except RuntimeError as e:
                            print(f"FAIL {tag}: {e}")
                            ok = False
                            continue
                        lerr = max(abs(a - b) / abs(b) for a, b in zip(losses, rl))
                        werr = max(float(np.abs(w[k] - rw[k]).max()) for k in rw.files)
                        planned = plan["functions"]["train_step"]["communication"]
                        measured = stats["bytes_sent_per_rank"]
                        comm_ok = all(measured[k] == planned["bytes_sent_per_rank"][k] * STEPS
                                      for k in measured)
                        table = expected_table(plan, n, stage, accum)
                        per_step = {k: v // STEPS for k, v in measured.items()}
                        note = ""
                        calls = plan["functions"]["train_step"]["communication"]["calls"]
                        for k, v in table.items():
                            # The scalar all-reduces (loss, norms) ride on
                            # top; each call rounds its share down.
                            extra = per_step[k] - v
                            slack = 4 * calls[k]
                            if stage == 3 and k == "all_gather":
                                # Forward gathers once per micro-batch, and
                                # backward re-gathers at most as much again.
                                lo = v * accum
                                comm_ok &= lo - slack <= per_step[k] <= 2 * lo + slack
                                note = (f" all_gather {per_step[k]} B (forward "
                                        f"{lo} + backward re-gathers)")
                            else:
                                comm_ok &= -slack <= extra <= 2 * 64 * 4 + slack
                        mem_ok, mem_note = check_memory(plan, stats, n, stage)
                        note += mem_note
                        good = (len(losses) == STEPS and lerr <= 1e-5 and werr <= 1e-5
                                and comm_ok and mem_ok)
                        ok &= good
                        print(f"{'ok  ' if good else 'FAIL'} {tag:16s} loss rel {lerr:.1e} "
                              f"weights abs {werr:.1e} bytes/step {per_step}{note}")
    print("ZeRO equivalence: " + ("all stages and world sizes agree" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
