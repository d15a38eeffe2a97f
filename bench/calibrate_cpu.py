#!/usr/bin/python3
"""Measures this machine for the timeline simulator and writes
hardware/cpu-this-machine.json: single-thread SGEMM and DGEMM throughput
(OpenBLAS, as the compiled steps call it), streaming memory bandwidth, an alpha-beta
fit (seconds = alpha + bytes sent / beta) of each collective between 2
ranks on this node as compiled steps issue them (start, then wait, through
the runtime's communication thread; build/bin/zero-comm-bench under
mpirun), and two properties of the generated code, from microbenchmark
models (chains of elementwise layers, not the models the simulator is
validated on) compiled by zero-opt and run by zero-run: the time each
compiled op costs beyond its roofline time (a tiny chain: overhead only)
and the FLOP rate of generated loops (a large chain, fitted with the
simulator's own op accounting).

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


def gemm_flops(dtype=np.float32):
    best = 0.0
    for n in (256, 512, 1024):
        a = np.random.rand(n, n).astype(dtype)
        b = np.random.rand(n, n).astype(dtype)
        best = max(best, 2 * n ** 3 / median_time(lambda: a @ b))
    return best


def memory_bandwidth():
    n = 16 * 1024 * 1024  # 64 MiB per float32 array
    a, b, c = (np.ones(n, np.float32) for _ in range(3))
    return 3 * 4 * n / median_time(lambda: np.add(a, b, out=c))


def fit(points):
    """alpha: the median time of messages up to 1 KiB (latency-bound);
    beta from the slope through messages of 64 KiB and more
    (bandwidth-bound), as the median of the slopes between every pair of
    sizes (Theil-Sen): one size that falls off a cliff on a loaded virtual
    machine (the largest messages here have taken 20x their trend) moves a
    least-squares line, not the median. Points are (bytes sent, seconds)."""
    points = sorted(points)
    alpha = statistics.median(t for b, t in points if b <= 1024)
    big = [(b, t) for b, t in points if b >= 65536]
    slopes = [(t2 - t1) / (b2 - b1) for i, (b1, t1) in enumerate(big)
              for b2, t2 in big[i + 1:] if b2 > b1]
    slope = statistics.median(slopes)
    return alpha, 1.0 / slope if slope > 0 else float("inf")


def chain_model(path, batch, width, layers, act="Relu"):
    """h <- act(h * w_i + b_i), `layers` times; loss = mean(h * h)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    nodes, inits, h = [], [], "x"
    for i in range(layers):
        inits += [numpy_helper.from_array(rng.uniform(0.05, 0.15, width).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(rng.uniform(0.1, 0.2, width).astype(np.float32), f"b{i}")]
        nodes += [helper.make_node("Mul", [h, f"w{i}"], [f"m{i}"], name=f"mul{i}"),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}"),
                  helper.make_node(act, [f"a{i}"], [f"h{i}"], name=f"act{i}")]
        h = f"h{i}"
    nodes += [helper.make_node("Mul", [h, h], ["sq"], name="square"),
              helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0, name="loss")]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, width])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path + ".onnx")
    np.savez(path + ".npz", x=rng.standard_normal((2 * batch, width)).astype(np.float32))


def measured_step(zopt, zrun, path, steps):
    subprocess.run([zopt, path + ".onnx", "--optimizer=sgd", "--lr=0.01", "-o", path + ".out"], check=True,
                   capture_output=True)
    times = []
    for _ in range(3):
        subprocess.run([zrun, path + ".out", "--data", path + ".npz", "--steps", str(steps),
                        "--log", path + ".jsonl"], check=True, capture_output=True)
        t = [json.loads(l)["time_ms"] for l in open(path + ".jsonl")][steps // 5:]
        times.append(statistics.median(t) * 1e-3)
    return statistics.median(times)


def predicted_step(zopt, path, desc, work):
    hw = os.path.join(work, "hw.json")
    with open(hw, "w") as f:
        json.dump(desc, f)
    out = path + ".timeline"
    subprocess.run([zopt, path + ".onnx", "--optimizer=sgd", "--lr=0.01", "--report=timeline",
                    "--hardware=" + hw, "-o", out], check=True, capture_output=True)
    return json.load(open(os.path.join(out, "plan.json")))["functions"]["train_step"]["timeline"]


def fit_rate(zopt, path, d, keys, target, lo, hi):
    """The rate at d["device"][keys...] for which the simulated compute
    time of `path` equals `target`: geometric bisection."""
    *outer, last = keys
    slot = d["device"]
    for k in outer:
        slot = slot.setdefault(k, {})
    for _ in range(14):
        mid = (lo * hi) ** 0.5
        slot[last] = mid
        if predicted_step(zopt, path, d, os.path.dirname(path))["compute_seconds"] > target:
            lo = mid
        else:
            hi = mid
    slot[last] = (lo * hi) ** 0.5
    return slot[last]


def generated_code(build, desc, work):
    """op_overhead from a tiny chain (roofline time negligible); loop_flops
    by bisection so that the simulator matches a large multiply-add-relu
    chain; transcendental_flops likewise on the same chain with tanh."""
    zopt = os.path.join(build, "bin", "zero-opt")
    zrun = os.path.join(build, "bin", "zero-run")
    tiny, large = os.path.join(work, "tiny"), os.path.join(work, "large")
    chain_model(tiny, 1, 8, 64)
    chain_model(large, 64, 16384, 8)
    d = json.loads(json.dumps(desc))
    d["device"]["op_overhead"] = 0.0
    t_tiny = measured_step(zopt, zrun, tiny, 200)
    p = predicted_step(zopt, tiny, d, work)
    overhead = max(0.0, (t_tiny - p["compute_seconds"]) / (p["compute_ops"] + p["allocations"]))
    d["device"]["op_overhead"] = overhead
    peak = d["device"]["peak_flops"]["fp32"]
    t_large = measured_step(zopt, zrun, large, 20)
    loops = fit_rate(zopt, large, d, ["loop_flops"], t_large, 1e7, peak)
    # One chain per function, in an order where each backward's other
    # functions are already fitted (erf's derivative evaluates exp).
    rates, times = {}, {}
    for act, fn in (("Exp", "exp"), ("Tanh", "tanh"), ("Erf", "erf")):
        path = os.path.join(work, fn)
        chain_model(path, 64, 16384, 8, act)
        times[fn] = measured_step(zopt, zrun, path, 20)
        rates[fn] = fit_rate(zopt, path, d, ["transcendental_flops", fn], times[fn], 1e6, loops)
    return {"overhead": overhead, "loops": loops, "transcendental": rates,
            "t_tiny": t_tiny, "t_large": t_large, "t_functions": times}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "hardware/cpu-this-machine.json"))
    args = ap.parse_args()
    flops, flops64, bw = gemm_flops(), gemm_flops(np.float64), memory_bandwidth()
    r = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
                        os.path.join(os.path.abspath(args.build), "bin", "zero-comm-bench"),
                        "20"], check=True, capture_output=True, text=True)
    rows = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    rows = [x for x in rows if x.get("path", "runtime") == "runtime"]
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
            "peak_flops": {"fp32": flops, "fp64": flops64},
            "memory_bandwidth": bw,
            "sources": {"peak_flops": source + ": best single-thread OpenBLAS SGEMM (fp32) "
                        "and DGEMM (fp64)",
                        "memory_bandwidth": source + ": float32 a + b -> c over 64 MiB"},
        },
        "collectives_2_ranks": collectives,
        "sources": {"collectives_2_ranks": source + ": fit of "
                    "zero-comm-bench medians (runtime path: start, then wait), seconds = alpha + "
                    "bytes sent per rank / beta; alpha the median of messages up to 1 KiB, beta fitted over "
                    "messages of 64 KiB and more"},
    }
    import tempfile
    with tempfile.TemporaryDirectory() as work:
        g = generated_code(os.path.abspath(args.build), desc, work)
    overhead, loops = g["overhead"], g["loops"]
    desc["device"]["op_overhead"] = overhead
    desc["device"]["alloc_overhead"] = overhead
    desc["device"]["loop_flops"] = loops
    desc["device"]["transcendental_flops"] = g["transcendental"]
    srcs = desc["device"]["sources"]
    srcs["op_overhead"] = (
        source + f": training step of a 64-layer multiply-add-relu chain, width 8, batch 1 "
        f"({g['t_tiny'] * 1e6:.1f} us median), less its roofline time, per compiled op or allocation")
    srcs["alloc_overhead"] = "the same fit as op_overhead (one call into malloc or free)"
    srcs["loop_flops"] = (
        source + f": rate at which the simulator matches the training step of an 8-layer "
        f"multiply-add-relu chain, width 16384, batch 64 ({g['t_large'] * 1e3:.2f} ms median)")
    srcs["transcendental_flops"] = (
        source + ": evaluations per second at which the simulator matches the same chain "
        "with each function as its activation (" +
        ", ".join(f"{k} {t * 1e3:.2f} ms" for k, t in g["t_functions"].items()) + " median)")
    with open(args.out, "w") as f:
        json.dump(desc, f, indent=2)
        f.write("\n")
    print(f"SGEMM {flops / 1e9:.1f} GFLOP/s, DGEMM {flops64 / 1e9:.1f} GFLOP/s, memory {bw / 1e9:.1f} GB/s, "
          f"op overhead {overhead * 1e9:.0f} ns, loops {loops / 1e9:.2f} GFLOP/s, "
          "functions " + ", ".join(f"{k} {r / 1e9:.3f} G/s" for k, r in g["transcendental"].items()))
    for k, v in collectives.items():
        print(f"{k:15s} alpha {v['alpha'] * 1e6:.1f} us, beta {v['beta'] / 1e9:.2f} GB/s")
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
