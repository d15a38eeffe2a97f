#!/usr/bin/python3
"""stage3_max_live_parameters: the plan and the runtime hold at most that
many gathered parameter elements at once.

The GPT of test/e2e/models at ZeRO stage 3 on 2 ranks (persistence
threshold 0, so every parameter is gathered) is planned three ways:
without prefetching (stage3_prefetch_bucket_size 0: the least the step can
hold), with the default prefetch budget, and with the default budget under
a live limit halfway between the two. Parameter bytes held by temporaries
are plan.json's memory.categories.parameters.temporaries_peak; zero-run
--stats reports the parameters peak with the shards included, from which
the shard bytes (the arguments) are taken off. The test requires:

- the default prefetch holds more than no prefetch (so the limit binds);
- under the limit, the plan and the runtime's counters (rank 0's, which
  --stats writes; every rank runs the same schedule) stay at or below it
  and equal each other;
- the losses of 3 steps equal those of the unlimited program bit for bit
  (scheduling moves collectives, not arithmetic);
- a limit below the no-prefetch need is one compile error that names the
  least limit that works.

All of it twice: as the model is, and with --remat=blocks, where the
recomputed blocks need their parameters again in the backward: those
re-gathers are scheduled, prefetched and limited like the others (the
step gathers more than without recomputation; there the re-gathers set
the least the step holds, and the default prefetch holds no more).

Usage: /usr/bin/python3 test/e2e/live_limit.py --build build
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def compile_with(zopt, model, work, name, zero, remat):
    cfg = os.path.join(work, name + ".json")
    # Reuse distance 0: parameters are released between forward and
    # backward, so what the step holds depends on the prefetch.
    zero = dict({"stage": 3, "stage3_param_persistence_threshold": 0,
                 "stage3_max_reuse_distance": 0}, **zero)
    with open(cfg, "w") as f:
        json.dump({"zero_optimization": zero}, f)
    out = os.path.join(work, name)
    r = subprocess.run([zopt, model, "--config", cfg, "--world-size=2", "-o", out,
                        f"--remat={remat}"], capture_output=True, text=True)
    return out, r


def held(plan):
    cat = plan["functions"]["train_step"]["memory"]["categories"]["parameters"]
    return cat["temporaries_peak"], cat["arguments"]


def gathered(plan):
    """Bytes each rank sends in the step's all-gathers."""
    return plan["functions"]["train_step"]["communication"]["bytes_sent_per_rank"]["all_gather"]


def check(zopt, zrun, work, model, data, remat, failures):
    print(f"--remat={remat}")
    work = os.path.join(work, remat)
    os.makedirs(work)
    plans = {}
    for name, zero in (("none", {"stage3_prefetch_bucket_size": 0}), ("default", {})):
        out, r = compile_with(zopt, model, work, name, zero, remat)
        if r.returncode:
            sys.exit(f"FAIL: compile {name}: {r.stderr}")
        plans[name] = json.load(open(os.path.join(out, "plan.json")))
    need, _ = held(plans["none"])
    default, _ = held(plans["default"])
    print(f"parameter bytes held: no prefetch {need}, default prefetch {default}")
    # With blocks the recomputation's re-gathers set the need and the
    # prefetch adds nothing to it here: the limit is the need itself.
    if default <= need and remat == "none":
        failures.append("the default prefetch holds no more than no prefetch; "
                        "the limit would not bind")
    limit = (need + default) // 2 // 4  # elements
    out, r = compile_with(zopt, model, work, "limited",
                          {"stage3_max_live_parameters": limit}, remat)
    if r.returncode:
        sys.exit(f"FAIL: compile with the limit: {r.stderr}")
    plan = json.load(open(os.path.join(out, "plan.json")))
    temps, shards = held(plan)
    print(f"limit {limit} elements = {4 * limit} bytes: plan holds {temps}; "
          f"gathers send {gathered(plan)} B per rank")
    if temps > 4 * limit:
        failures.append(f"plan holds {temps} B of parameters above the limit {4 * limit} B")
    losses = {}
    for name, folder in (("limited", out), ("default", os.path.join(work, "default"))):
        stats = os.path.join(work, name + ".stats.json")
        log = os.path.join(work, name + ".jsonl")
        subprocess.run(["mpirun", "--oversubscribe", "-np", "2", zrun, folder, "--data", data,
                        "--steps", "3", "--log", log, "--stats", stats],
                       check=True, capture_output=True, env=ENV)
        losses[name] = [json.loads(l)["loss"] for l in open(log)]
        if name != "limited":
            continue
        s = json.load(open(stats))
        counted = s["memory"]["categories"]["parameters"]["peak"] - shards
        print(f"runtime counters hold {counted} B of gathered parameters")
        if counted > 4 * limit:
            failures.append(f"the runtime held {counted} B above the limit {4 * limit} B")
        if counted != temps:
            failures.append(f"the runtime counted {counted} B, the plan {temps} B")
    if losses["limited"] != losses["default"]:
        failures.append(f"losses differ: {losses['limited']} vs {losses['default']}")
    low = need // 4 - 1
    _, r = compile_with(zopt, model, work, "low", {"stage3_max_live_parameters": low}, remat)
    expected = (f"stage3_max_live_parameters allows {low} elements of gathered parameters, "
                f"but the step holds {need // 4} at once here without any prefetching; "
                f"raise it to at least {need // 4}")
    errors = [l for l in r.stderr.splitlines() if "error" in l]
    if r.returncode == 0 or len(errors) != 1 or expected not in errors[0]:
        failures.append(f"limit {low}: expected one error '{expected}', got "
                        f"rc {r.returncode}: {r.stderr.strip()}")
    if os.path.exists(os.path.join(work, "low")):
        failures.append("a failed compile left an output folder")
    return plan


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    zopt = os.path.join(os.path.abspath(args.build), "bin", "zero-opt")
    zrun = os.path.join(os.path.abspath(args.build), "bin", "zero-run")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable, os.path.join(ROOT, "test/e2e/models/export_models.py"),
                        work, "--only", "gpt"], check=True, capture_output=True)
        model, data = os.path.join(work, "gpt.onnx"), os.path.join(work, "gpt.data.npz")
        kept = check(zopt, zrun, work, model, data, "none", failures)
        again = check(zopt, zrun, work, model, data, "blocks", failures)
        if gathered(again) <= gathered(kept):
            failures.append("--remat=blocks gathers no more parameters than without "
                            "recomputation: the recomputed blocks' re-gathers are missing")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("live limit: plan and runtime within stage3_max_live_parameters, "
          "with and without recomputation")


if __name__ == "__main__":
    main()
