#!/usr/bin/python3
"""Step times of --target=cuda programs on a GPU, and their kernels and
GEMMs per model node, against the timeline's prediction for the same
programs.

The models are the GPU sections' of bench/RESULTS.md (bench/gpt2_model.py):
GPT-2 XL's width (d 1600, 25 heads, context 1024, micro-batch 8,
vocabulary 50257) with 1 and 8 layers, and GPT-2 XL (--preset xl) with
--memory-budget=70G; stage 0 on one rank in bf16, AdamW, random weights
and tokens; and, with --models xl8, GPT-2 XL at ZeRO stage 3 on 8 GPUs
(mpirun -np 8; skipped on a node with fewer). Each is compiled twice with
the same flags: the program, and --report=timeline for the hardware file
given (--hardware-multi for xl8; NAME.predicted/: plan.json's step,
timeline.json's slices), so the prediction is the program's own.

A GPU node needs no compiler: the three phases can run apart.
  --prepare DIR  compiles every program into DIR, leaving the weights
                 behind as names and shapes (drawn again by --run)
  --run DIR      runs them: zero-run --steps N (the step times, the
                 median of the steps after the first), then the first
                 model again with --trace for a few steps
  --report DIR   prints the tables: per model the measured and predicted
                 step; per node of the traced model, its kernels' and
                 GEMMs' time in the median traced step (zero-run --trace
                 names each by its node: zero-gpu-trace-nodes) against the
                 timeline's slices of that node
Without a phase, all three run in a temporary folder.

Usage: /usr/bin/python3 bench/gpu_steps.py [--build build]
         [--hardware hardware/h200-1x-measured.json] [--models l1,l8,xl,xl8]
         [--hardware-multi hardware/h100-8x-nvlink.json]
         [--steps 6] [--prepare DIR | --run DIR | --report DIR]
"""
import argparse
import json
import os
import statistics
import struct
import sys
import tempfile
from collections import defaultdict

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "gpu"))
import gpu_parity  # noqa: E402

XL_WIDTH = ["--d", "1600", "--heads", "25", "--seq", "1024", "--batch", "8",
            "--vocab", "50257"]
MODELS = {
    "l1": dict(args=["--layers", "1"] + XL_WIDTH, flags=[], world=1,
               title="GPT-2 XL's width, 1 layer"),
    "l8": dict(args=["--layers", "8"] + XL_WIDTH, flags=[], world=1,
               title="GPT-2 XL's width, 8 layers"),
    "xl": dict(args=["--preset", "xl"], flags=["--memory-budget=70G"], world=1,
               title="GPT-2 XL, budget 70G"),
    # ZeRO stage 3 on 8 GPUs of one node, predicted with --hardware-multi.
    "xl8": dict(args=["--preset", "xl"], flags=["--stage=3"], world=8,
                title="GPT-2 XL, stage 3 on 8 GPUs"),
}
FLAGS = ["--precision=bf16", "--target=cuda", "--optimizer=adamw", "--lr=1e-4"]
TRACED_STEPS = 3
VOCAB = 50257
NO_NODE = "(no node: optimizer, copies)"


def run(cmd):
    return gpu_parity.run(cmd)


def prepare(args, d):
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    manifest = dict(hardware={}, steps=args.steps, models=[])
    for name in args.models:
        m = MODELS[name]
        onnx = os.path.join(d, f"{name}.onnx")
        run(["/usr/bin/python3", os.path.join(ROOT, "bench", "gpt2_model.py"),
             onnx] + m["args"])
        out = os.path.join(d, name)
        flags = FLAGS + m["flags"] + [f"--world-size={m['world']}"]
        if not any(f.startswith("--stage=") for f in flags):
            flags.append("--stage=0")
        hardware = args.hardware if m["world"] == 1 else args.hardware_multi
        # The program, and the same compile's prediction beside it (a
        # timeline report is a folder of its own: plan.json, timeline.json).
        run([os.path.join(bindir, "zero-opt"), onnx, "-o", out] + flags)
        run([os.path.join(bindir, "zero-opt"), onnx, "-o", out + ".predicted",
             "--report=timeline", f"--hardware={hardware}"] + flags)
        gpu_parity.strip_weights(out)
        for f in (onnx, onnx + ".data"):
            if os.path.exists(f):
                os.remove(f)
        with open(os.path.join(out, "plan.json")) as f:
            plan = json.load(f)
        # Random tokens and targets for every step run.
        rng = np.random.default_rng(1)
        steps = max(args.steps, TRACED_STEPS)
        data = {a["name"]: rng.integers(0, VOCAB, size=[a["shape"][0] * m["world"] * steps]
                                        + a["shape"][1:], dtype=np.int64)
                for a in plan["functions"]["train_step"]["arguments"]
                if a["role"] == "input"}
        np.savez(out + ".data.npz", **data)
        manifest["models"].append(name)
        manifest["hardware"][name] = os.path.basename(hardware)
        print(f"prepared {name}", flush=True)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


def load_manifest(d):
    return gpu_parity.load_manifest(d, "bench/gpu_steps.py",
                                    "bench/gpu_steps.py --prepare")


def run_all(args, d):
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    manifest = load_manifest(d)
    listed, _ = gpu_parity.gpus()
    for i, name in enumerate(manifest["models"]):
        out = os.path.join(d, name)
        world = MODELS[name]["world"]
        # Ranks beyond the GPUs would share them (local rank modulo GPUs).
        if world > 1 and world > len(listed):
            print(f"skipped {name}: {world} GPUs needed, {len(listed)} here", flush=True)
            continue
        gpu_parity.draw_weights(out)
        base = [os.path.join(bindir, "zero-run"), out, "--data", out + ".data.npz"]
        if world > 1:
            base = gpu_parity.MPIRUN + ["-np", str(world)] + base
        run(base + ["--steps", str(manifest["steps"]), "--log", out + ".jsonl"])
        if i == 0:
            run(base + ["--steps", str(TRACED_STEPS), "--log", out + ".traced.jsonl",
                        "--trace", out + ".trace.json"])
        print(f"ran {name}", flush=True)


# EIATTR codes of a cubin's .nv.info sections: a kernel's registers and
# stack frame (spilled registers and local arrays) as ptxas chose them.
EIATTR_REGCOUNT, EIATTR_FRAME_SIZE = 0x2F, 0x11
# sm_80 and sm_90: 64K registers and 64 warps per SM; registers are given
# to a warp in units of 256.
SM_REGISTERS, SM_WARPS, REGISTER_UNIT = 65536, 64, 256


def kernel_resources(cubin):
    """{kernel: (registers, stack frame bytes)} of a cubin (ELF64)."""
    with open(cubin, "rb") as f:
        data = f.read()
    if data[:5] != b"\x7fELF\x02":
        raise SystemExit(f"{cubin}: not a 64-bit ELF cubin")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    entsize, count, names = struct.unpack_from("<HHH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize)
                for i in range(count)]

    def string(table, offset):
        start = sections[table][4] + offset
        return data[start:data.index(b"\0", start)].decode()

    symtab = next(s for s in sections if s[1] == 2)  # SHT_SYMTAB

    def symbol(index):
        name, = struct.unpack_from("<I", data, symtab[4] + index * 24)
        return string(symtab[6], name)

    found = defaultdict(lambda: [0, 0])
    for s in sections:
        if string(names, s[0]) != ".nv.info":
            continue
        at, end = s[4], s[4] + s[5]
        while at < end:
            fmt, attr = data[at], data[at + 1]
            if fmt == 4:  # EIFMT_SVAL: a 16-bit size, then the payload
                size, = struct.unpack_from("<H", data, at + 2)
                if attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and size == 8:
                    sym, value = struct.unpack_from("<II", data, at + 4)
                    found[symbol(sym)][attr == EIATTR_FRAME_SIZE] = value
                at += 4 + size
            elif fmt == 3:  # EIFMT_HVAL
                at += 4
            elif fmt == 2:  # EIFMT_BVAL
                at += 3
            elif fmt == 1:  # EIFMT_NVAL
                at += 2
            else:
                break
    return {k: tuple(v) for k, v in found.items()}


def occupancy(registers):
    """Resident warps per SM that `registers` a thread allow, of 64."""
    per_warp = -(-registers * 32 // REGISTER_UNIT) * REGISTER_UNIT
    return min(SM_WARPS, SM_REGISTERS // max(per_warp, 1)) / SM_WARPS


def measured_nodes(path):
    """Microseconds per node of the kernels and GEMMs in the traced step
    whose GPU work took the median time (the host waits for each step's
    results, so a step's GPU intervals lie within its own), that step's
    total and its number of kernels and GEMMs."""
    all_events = gpu_parity.trace_events(path)
    steps = sorted((e for e in all_events if e.get("cat") == "step"),
                   key=lambda e: e["ts"])
    chunks = [[] for _ in steps]
    for e in all_events:
        if e.get("cat") != "compute" or e.get("name") == "compute":
            continue
        mid = e["ts"] + e["dur"] / 2
        for i, st in enumerate(steps):
            if st["ts"] <= mid <= st["ts"] + st["dur"]:
                chunks[i].append(e)
                break
    chunks = [c for c in chunks if c]
    if not chunks:
        raise SystemExit(f"{path}: no kernel or GEMM inside a step")
    totals = [sum(e["dur"] for e in c) for c in chunks]
    median = sorted(range(len(chunks)), key=lambda i: totals[i])[len(chunks) // 2]
    nodes = defaultdict(lambda: [0.0, 0.0])  # kernels, GEMMs
    kernels = defaultdict(lambda: defaultdict(float))  # node: kernel: µs
    for e in chunks[median]:
        args = e.get("args", {})
        node = args.get("node", NO_NODE)
        nodes[node][args.get("kind") == "gemm"] += e["dur"]
        if args.get("kind") == "kernel":
            kernels[node][e["name"]] += e["dur"]
    return nodes, totals[median], len(chunks[median]), kernels


def predicted_nodes(path):
    """Microseconds per node of the predicted step: kernels, GEMMs; and per
    node what bounds its longest predicted kernel slice (args.bound)."""
    nodes = defaultdict(lambda: [0.0, 0.0])
    longest = {}
    for e in gpu_parity.trace_events(path):
        if e.get("cat") == "compute":
            args = e.get("args", {})
            node = args.get("node", NO_NODE)
            nodes[node][args.get("kind") == "gemm"] += e["dur"]
            if args.get("kind") == "kernel" and e["dur"] > longest.get(node, (0, ""))[0]:
                longest[node] = (e["dur"], args.get("bound", ""))
    return nodes, {n: bound for n, (_, bound) in longest.items()}


def report(d, top):
    manifest = load_manifest(d)
    print(f"Measured: the median of steps 2-{manifest['steps']} (zero-run's "
          f"time_ms).\n")
    print("| model | predicted | with | measured | measured / predicted |")
    print("|---|---|---|---|---|")
    for name in manifest["models"]:
        out = os.path.join(d, name)
        with open(os.path.join(out + ".predicted", "plan.json")) as f:
            predicted = json.load(f)["functions"]["train_step"]["timeline"]["step_seconds"] * 1e3
        log = out + ".jsonl"
        row = f"| {MODELS[name]['title']} | {predicted:.3f} ms | {manifest['hardware'][name]} |"
        if not os.path.exists(log):
            print(f"{row} not run | |")
            continue
        times = [json.loads(l)["time_ms"] for l in open(log)][1:]
        measured = statistics.median(times)
        print(f"{row} {measured:.3f} ms | {measured / predicted:.2f} |")
    name = manifest["models"][0]
    out = os.path.join(d, name)
    if not os.path.exists(out + ".trace.json"):
        return
    nodes, total, per, kernels = measured_nodes(out + ".trace.json")
    predicted, bounds = predicted_nodes(os.path.join(out + ".predicted", "timeline.json"))
    cubins = sorted(f for f in os.listdir(out) if f.endswith(".cubin"))
    resources = kernel_resources(os.path.join(out, cubins[-1])) if cubins else {}
    print(f"\n{MODELS[name]['title']}: the median of {TRACED_STEPS} traced steps, "
          f"{per} kernels and GEMMs, {total / 1e3:.3f} ms of GPU work; per node, "
          f"most measured first; its longest kernel's registers (ptxas, "
          f"{cubins[-1] if cubins else 'no cubin'}), the resident warps they allow "
          f"of {SM_WARPS} (the timeline assumes all) and its stack frame; what "
          f"bounds the longest predicted kernel (compute, memory, latency or "
          f"launch):\n")
    print("| node | kernels: measured | predicted | bound | GEMMs: measured | predicted "
          "| measured / predicted | longest kernel: registers, occupancy, stack |")
    print("|---|---|---|---|---|---|---|---|")
    order = sorted(set(nodes) | set(predicted), key=lambda n: -sum(nodes.get(n, [0, 0])))
    rest = [0.0] * 4
    for i, n in enumerate(order):
        row = [*nodes.get(n, [0.0, 0.0]), *predicted.get(n, [0.0, 0.0])]
        mk, mg, pk, pg = row
        if i >= top:
            rest = [a + b for a, b in zip(rest, row)]
            continue
        ratio = f"{(mk + mg) / (pk + pg):.2f}" if pk + pg > 0 else ""
        longest = max(kernels.get(n, {}).items(), key=lambda kv: kv[1], default=None)
        use = ""
        if longest and longest[0] in resources:
            regs, frame = resources[longest[0]]
            use = f"{longest[0]}: {regs}, {occupancy(regs):.0%}, {frame} B"
        print(f"| {n} | {mk:.0f} µs | {pk:.0f} µs | {bounds.get(n, '')} | {mg:.0f} µs "
              f"| {pg:.0f} µs | {ratio} | {use} |")
    if len(order) > top:
        mk, mg, pk, pg = rest
        print(f"| {len(order) - top} more nodes | {mk:.0f} µs | {pk:.0f} µs | | "
              f"{mg:.0f} µs | {pg:.0f} µs | | |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--hardware", default=os.path.join(ROOT, "hardware",
                                                       "h200-1x-measured.json"))
    ap.add_argument("--hardware-multi", default=os.path.join(
        ROOT, "hardware", "h100-8x-nvlink.json"), help="the prediction of xl8")
    ap.add_argument("--models", default="l1,l8,xl",
                    help="of l1, l8, xl and xl8 (8 GPUs)")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--top", type=int, default=25, help="nodes listed one by one")
    phase = ap.add_mutually_exclusive_group()
    phase.add_argument("--prepare", metavar="DIR")
    phase.add_argument("--run", metavar="DIR")
    phase.add_argument("--report", metavar="DIR")
    args = ap.parse_args()
    args.models = args.models.split(",")
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        ap.error(f"--models: unknown {', '.join(unknown)}; known: {', '.join(MODELS)}")
    if args.steps < 2:
        ap.error("--steps must be at least 2 (the first step is not timed)")
    if args.prepare:
        os.makedirs(args.prepare, exist_ok=True)
        prepare(args, args.prepare)
    elif args.run:
        run_all(args, args.run)
    elif args.report:
        report(args.report, args.top)
    else:
        listed, why = gpu_parity.gpus()
        if not listed:
            print(f"bench/gpu_steps.py: SKIP: {why}")
            return 0
        with tempfile.TemporaryDirectory(prefix="zero-gpu-steps-") as d:
            prepare(args, d)
            run_all(args, d)
            report(d, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
