#!/usr/bin/python3
"""Measures this machine for the timeline simulator and writes
hardware/cpu-this-machine.json: single-thread SGEMM throughput (OpenBLAS,
as the compiled steps call it), streaming memory bandwidth, and an
alpha-beta fit (seconds = alpha + bytes sent / beta) of each collective
between 2 ranks on this node, from build/bin/zero-comm-bench under mpirun.

Usage: /usr/bin/python3 bench/calibrate_cpu.py --build build [--out FILE]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402  (after the thread setting)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_time(fn, reps=7):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def gemm_flops():
    best = 0.0
    for n in (256, 512, 1024):
        a = np.random.rand(n, n).astype(np.float32)
        b = np.random.rand(n, n).astype(np.float32)
        best = max(best, 2 * n ** 3 / median_time(lambda: a @ b))
    return best


def memory_bandwidth():
    n = 16 * 1024 * 1024  # 64 MiB per float32 array
    a, b, c = (np.ones(n, np.float32) for _ in range(3))
    return 3 * 4 * n / median_time(lambda: np.add(a, b, out=c))


def fit(points):
    """alpha from the smallest message (latency-bound); beta from a
    least-squares line through messages of 64 KiB and more
    (bandwidth-bound). Points are (bytes sent, seconds)."""
    points = sorted(points)
    alpha = points[0][1]
    big = [(b, t) for b, t in points if b >= 65536]
    slope = np.polyfit([b for b, _ in big], [t for _, t in big], 1)[0]
    return alpha, 1.0 / slope if slope > 0 else float("inf")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "hardware/cpu-this-machine.json"))
    args = ap.parse_args()
    flops, bw = gemm_flops(), memory_bandwidth()
    r = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
                        os.path.join(os.path.abspath(args.build), "bin", "zero-comm-bench"),
                        "20"], check=True, capture_output=True, text=True)
    rows = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    collectives = {}
    for kind in ("all_reduce", "reduce_scatter", "all_gather"):
        pts = [(x["bytes_sent"], x["seconds"]) for x in rows if x["kind"] == kind]
        alpha, beta = fit(pts)
        collectives[kind] = {"alpha": alpha, "beta": beta}
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                if l.startswith("model name")), "unknown CPU")
    when = datetime.date.today().isoformat()
    source = f"measured by bench/calibrate_cpu.py on {when} ({cpu}, {os.cpu_count()} cores)"
    desc = {
        "name": f"this repository's CPU machine: {cpu}, {os.cpu_count()} cores, "
                "one rank per core, MPI over shared memory",
        "devices_per_node": os.cpu_count(),
        "nodes": 1,
        "device": {
            "peak_flops": {"fp32": flops},
            "memory_bandwidth": bw,
            "sources": {"peak_flops": source + ": best single-thread OpenBLAS SGEMM",
                        "memory_bandwidth": source + ": float32 a + b -> c over 64 MiB"},
        },
        "collectives_2_ranks": collectives,
        "sources": {"collectives_2_ranks": source + ": fit of "
                    "zero-comm-bench medians, seconds = alpha + bytes sent per rank / beta; alpha "
                    "from the smallest message, beta fitted over messages of 64 KiB and more"},
    }
    with open(args.out, "w") as f:
        json.dump(desc, f, indent=2)
        f.write("\n")
    print(f"SGEMM {flops / 1e9:.1f} GFLOP/s, memory {bw / 1e9:.1f} GB/s")
    for k, v in collectives.items():
        print(f"{k:15s} alpha {v['alpha'] * 1e6:.1f} us, beta {v['beta'] / 1e9:.2f} GB/s")
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
