#!/usr/bin/python3
"""Validates the timeline simulator against this machine: for the GPT test
model (test/e2e/models) at ZeRO stages 0 and 3 and world sizes 1 and 2,
compiles it, measures the median step time of zero-run (median of the
steps after warm-up, median of --runs runs) and compares it with
`zero-opt --report=timeline --hardware=hardware/cpu-this-machine.json`.

Usage: /usr/bin/python3 bench/timeline_validation.py --build build [--runs 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--hardware", default=os.path.join(ROOT, "hardware/cpu-this-machine.json"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    zopt = os.path.join(os.path.abspath(args.build), "bin", "zero-opt")
    zrun = os.path.join(os.path.abspath(args.build), "bin", "zero-run")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    print("| stage | N | measured (median) | predicted | error | predicted exposed comm |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "test/e2e/models/export_models.py"),
                        work, "--only", "gpt"], check=True, capture_output=True)
        model, data = os.path.join(work, "gpt.onnx"), os.path.join(work, "gpt.data.npz")
        for stage in (0, 3):
            for n in (1, 2):
                flags = [f"--stage={stage}", f"--world-size={n}", "--persistence-threshold=0"]
                out = os.path.join(work, f"s{stage}n{n}")
                subprocess.run([zopt, model, *flags, "-o", out], check=True, capture_output=True)
                rep = os.path.join(work, f"r{stage}n{n}")
                subprocess.run([zopt, model, *flags, "--report=timeline",
                                "--hardware=" + args.hardware, "-o", rep], check=True,
                               capture_output=True)
                t = json.load(open(os.path.join(rep, "plan.json")))["functions"]["train_step"]["timeline"]
                runs = []
                for _ in range(args.runs):
                    log = os.path.join(work, "log.jsonl")
                    cmd = [zrun, out, "--data", data, "--steps", str(args.steps), "--log", log]
                    if n > 1:
                        cmd = ["mpirun", "--oversubscribe", "-np", str(n)] + cmd
                    subprocess.run(cmd, check=True, capture_output=True, env=env)
                    times = [json.loads(l)["time_ms"] for l in open(log)][args.steps // 10:]
                    runs.append(statistics.median(times) * 1e-3)
                measured = statistics.median(runs)
                predicted = t["step_seconds"]
                err = (predicted - measured) / measured
                print(f"| {stage} | {n} | {measured * 1e6:.1f} us | {predicted * 1e6:.1f} us | "
                      f"{err * 100:+.1f}% | {t['exposed_seconds'] * 1e6:.1f} us |", flush=True)


if __name__ == "__main__":
    main()
