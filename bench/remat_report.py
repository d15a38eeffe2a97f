#!/usr/bin/python3
"""Rematerialization on a GPT-2 XL-shaped model at ZeRO stage 3, from
`zero-opt --report=memory` (no code generated, weights never read).

Prints a markdown table for bench/RESULTS.md: per world size and policy
(none, blocks, sqrt, budget at --budget), per rank: the activation bytes
the backward reads from the forward before and after, the planned step
peak and where it is, the activations' peak, the recompute FLOPs as a share
of the step's, the solver's method and seconds (budget), and the compile
seconds (median of --repeat runs; the figures are deterministic).

Usage: /usr/bin/python3 bench/remat_report.py --build build [--worlds 8,64]
       [--budget 40G] [--repeat 1] [--preset xl]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIB = 1024 ** 3


def compile_plan(zero_opt, model, out, n, flags, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.time()
        r = subprocess.run([zero_opt, model, "--report=memory", "--stage=3",
                            f"--world-size={n}", "-o", out] + flags,
                           capture_output=True, text=True)
        if r.returncode:
            return r.stderr.strip().splitlines()[-1], time.time() - t0
        times.append(time.time() - t0)
    return json.load(open(os.path.join(out, "plan.json"))), statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--worlds", default="8,64")
    ap.add_argument("--budget", default="40G")
    ap.add_argument("--preset", default="xl")
    args = ap.parse_args()
    zero_opt = os.path.join(os.path.abspath(args.build), "bin", "zero-opt")
    policies = [("none", ["--remat=none"]), ("blocks", ["--remat=blocks"]),
                ("sqrt", ["--remat=sqrt"]),
                (f"budget {args.budget}", [f"--memory-budget={args.budget}"])]
    with tempfile.TemporaryDirectory(prefix="zero-remat-") as tmp:
        model = os.path.join(tmp, "model.onnx")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench/gpt2_model.py"),
                        model, "--preset", args.preset], check=True,
                       capture_output=True)
        print("| N | policy | held for the backward | step peak | at | "
              "activations (peak) | recompute | solver | compile |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in (int(w) for w in args.worlds.split(",")):
            for name, flags in policies:
                out = os.path.join(tmp, f"n{n}.{name.split()[0]}")
                plan, seconds = compile_plan(zero_opt, model, out, n, flags,
                                             args.repeat)
                if isinstance(plan, str):
                    print(f"| {n} | {name} | {plan} | | | | | | {seconds:.1f} s |",
                          flush=True)
                    continue
                mem = plan["functions"]["train_step"]["memory"]
                remat = plan["training"].get("remat", {})
                before = remat.get("activation_bytes_before")
                after = remat.get("activation_bytes_after")
                held = (f"{before / GIB:.2f} -> {after / GIB:.2f} GiB"
                        if before is not None else "")
                share = (100 * remat["recompute_flops"] / remat["step_flops"]
                         if remat.get("step_flops") else 0)
                solver = remat.get("solver")
                solved = (f"{solver['method']}, {solver['seconds']:.1f} s"
                          if solver else "")
                print(f"| {n} | {name} | {held} | {mem['peak'] / GIB:.2f} GiB | "
                      f"`{mem['peak_at']}` ({mem['peak_phase']}) | "
                      f"{mem['categories']['activations']['peak'] / GIB:.2f} GiB | "
                      f"{share:.1f}% | {solved} | {seconds:.1f} s |", flush=True)


if __name__ == "__main__":
    main()
