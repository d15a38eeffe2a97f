#!/usr/bin/python3
"""--target=cuda programs run on the GPUs of this machine, against the CPU
target.

Runs wherever `nvidia-smi -L` lists a GPU, with one rank per GPU (at most
--ranks); elsewhere it prints SKIP and why, and succeeds. For the MLP, CNN
and GPT test models at ZeRO stages 0-3 in fp32 and bf16, the same compile
options for both targets, 5 AdamW steps from the same weights on the same
data under `mpirun -np N zero-run`:

- every loss and every saved weight of the CUDA run equals the CPU
  target's within tolerance (fp32: losses rtol 1e-4, weights atol 1e-4;
  bf16: 2e-2 and 5e-3): the two differ in the order of floating-point sums
  (cuBLAS's GEMMs, split reductions, NCCL's rings) and in libdevice's math;
- the bytes each rank sent (zero-run --stats, counted by the NCCL backend)
  equal plan.json's per-step bytes times the steps, by collective;
- the trace shows the compute and the communication streams.

Then a larger GPT (about 35M parameters; 2 MiB allocation granularity is
lost in it) at stage 0 fp32 and stage 3 bf16: the peak device memory the
program added to the runtime's own (cudaMemGetInfo, zero-run --stats
device_memory.program_peak) is within 5% of plan.json's memory peak.

--cpu-stand-in runs the same comparisons with --simulate-gpu builds (the
CUDA target's mapped kernels, compiled for the CPU) in place of CUDA ones,
without the device memory check: it checks this script on a machine with
no GPU.

Usage: /usr/bin/python3 test/gpu/gpu_parity.py --build build [--ranks 2]
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
MPIRUN = ["mpirun", "--allow-run-as-root", "--bind-to", "none"]
TOL = {"fp32": (1e-4, 1e-4), "bf16": (2e-2, 5e-3)}
STEPS = 5
MEMORY_TOL = 0.05
# The larger GPT of the memory check.
BIG_GPT = dict(vocab=8192, d=768, n_head=12, n_layer=4, block_size=256, batch=8)


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800,
                       env=env)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r


def gpus():
    """The GPUs nvidia-smi lists, or an empty list and why."""
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                           timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return [], f"nvidia-smi -L cannot run ({e.__class__.__name__})"
    listed = [l for l in r.stdout.splitlines() if l.startswith("GPU ")]
    return listed, "" if listed else "nvidia-smi -L lists no GPU"


class Runner:
    def __init__(self, bindir, tmp, ranks, stand_in):
        self.bindir, self.tmp, self.ranks, self.stand_in = bindir, tmp, ranks, stand_in

    def compile(self, onnx, tag, flags, cuda):
        out = os.path.join(self.tmp, tag)
        target = (["--simulate-gpu"] if self.stand_in else ["--target=cuda"]) if cuda else []
        run([os.path.join(self.bindir, "zero-opt"), onnx, "-o", out,
             f"--world-size={self.ranks}", "--optimizer=adamw", "--lr=1e-3",
             "--persistence-threshold=0"] + flags + target)
        with open(os.path.join(out, "plan.json")) as f:
            return out, json.load(f)

    def train(self, out, data, steps, trace=False):
        log, w, stats = out + ".jsonl", out + ".npz", out + ".stats.json"
        cmd = [os.path.join(self.bindir, "zero-run"), out, "--data", data,
               "--steps", str(steps), "--log", log, "--save-weights", w,
               "--stats", stats]
        if trace:
            cmd += ["--trace", out + ".trace.json"]
        run(MPIRUN + ["-np", str(self.ranks)] + cmd)
        losses = np.array([json.loads(l)["loss"] for l in open(log)])
        with open(stats) as f:
            return losses, np.load(w), json.load(f)


def bytes_match(plan, stats, steps):
    planned = plan["functions"]["train_step"].get("communication", {}).get(
        "bytes_sent_per_rank", {})
    measured = stats["bytes_sent_per_rank"]
    return (all(measured.get(k, 0) == v * steps for k, v in planned.items())
            and all(v == 0 or k in planned for k, v in measured.items())), planned, measured


def values_match(l, w, ref_l, ref_w, precision, steps, tol=None):
    """Whether the losses `l` and weights `w` of `steps` steps equal the CPU
    target's within `tol` (default TOL); also the largest relative loss and
    absolute weight differences."""
    ltol, wtol = (tol or TOL)[precision]
    rel = float(np.max(np.abs(l - ref_l) / np.abs(ref_l))) if len(l) == len(ref_l) else np.inf
    same_names = sorted(w.files) == sorted(ref_w.files)
    werr = max(float(np.max(np.abs(w[k].astype(np.float64) - ref_w[k])))
               for k in ref_w.files) if same_names else np.inf
    ok = (len(l) == steps and bool(np.all(np.isfinite(l))) and rel <= ltol
          and werr <= wtol)
    return ok, rel, werr


def trace_streams(path):
    """The thread ids of the trace's compute and communication intervals."""
    with open(path) as f:
        events = json.load(f)
    events = events.get("traceEvents", events) if isinstance(events, dict) else events
    tids = {}
    for e in events:
        if e.get("ph") == "X":
            tids.setdefault(e.get("cat"), set()).add(e.get("tid"))
    return tids


def parity(r, name, precision, stage):
    onnx = os.path.join(r.tmp, f"{name}.onnx")
    data = os.path.join(r.tmp, f"{name}.data.npz")
    flags = [f"--stage={stage}", f"--precision={precision}"]
    tag = f"{name}.{precision}.s{stage}"
    ref_out, _ = r.compile(onnx, tag + ".cpu", flags, cuda=False)
    out, plan = r.compile(onnx, tag + ".cuda", flags, cuda=True)
    ref_l, ref_w, _ = r.train(ref_out, data, STEPS)
    l, w, stats = r.train(out, data, STEPS, trace=stage == 3)
    same_values, rel, werr = values_match(l, w, ref_l, ref_w, precision, STEPS)
    ltol, wtol = TOL[precision]
    same_bytes, planned, measured = bytes_match(plan, stats, STEPS)
    ok = same_values and same_bytes
    note = ""
    if stage == 3:
        tids = trace_streams(out + ".trace.json")
        streams = tids.get("compute", set()) | tids.get("wait", set())
        comm = tids.get("communication", set())
        has_streams = bool(streams) and (r.ranks == 1 or bool(comm)) and not (streams & comm)
        ok &= has_streams
        note = f"; trace: compute {sorted(streams)}, communication {sorted(comm)}"
    print(f"{'ok  ' if ok else 'FAIL'} {name:4s} {precision} stage {stage} on {r.ranks}: "
          f"loss max rel {rel:.2e} (tol {ltol:g}), weights max abs {werr:.2e} "
          f"(tol {wtol:g}); bytes per rank {measured} "
          f"{'==' if same_bytes else '!='} plan {planned} x {STEPS}{note}", flush=True)
    return ok


def big_gpt(tmp, ranks):
    """The larger GPT of the memory check and its data, exported once."""
    import torch
    sys.path.insert(0, MODELS_DIR)
    import export_models  # noqa: E402
    cfg = dict(BIG_GPT)
    micro = cfg.pop("batch")
    onnx = os.path.join(tmp, "big_gpt.onnx")
    data = os.path.join(tmp, "big_gpt.data.npz")
    if not os.path.exists(onnx):
        torch.manual_seed(0)
        model = export_models.GPT(**cfg)
        model.train()
        gen = torch.Generator().manual_seed(1)
        shape = (2 * micro * ranks, cfg["block_size"])
        samples = {"tokens": torch.randint(0, cfg["vocab"], shape, generator=gen),
                   "targets": torch.randint(0, cfg["vocab"], shape, generator=gen)}
        export_models.export(model, micro, samples, onnx)
        np.savez(data, **{k: v.numpy() for k, v in samples.items()})
    return onnx, data


def memory(r, precision, stage):
    onnx, data = big_gpt(r.tmp, r.ranks)
    flags = [f"--stage={stage}", f"--precision={precision}"]
    out, plan = r.compile(onnx, f"big_gpt.{precision}.s{stage}", flags, cuda=True)
    _, _, stats = r.train(out, data, 2)
    planned = plan["functions"]["train_step"]["memory"]["peak"]
    dev = stats["device_memory"]
    ratio = dev["program_peak"] / planned
    ok = abs(ratio - 1) <= MEMORY_TOL
    print(f"{'ok  ' if ok else 'FAIL'} GPT {precision} stage {stage} on {r.ranks}: "
          f"device memory peak {dev['program_peak']:,} B over the runtime's "
          f"{dev['runtime']:,} B; plan.json peak {planned:,} B (ratio {ratio:.4f}, "
          f"tol {MEMORY_TOL:.0%}); allocated {dev['program_allocated']:,} B", flush=True)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", type=int, default=2,
                    help="ranks (one GPU each), at most the GPUs listed")
    ap.add_argument("--cpu-stand-in", action="store_true",
                    help="--simulate-gpu builds in place of CUDA ones (no GPU needed)")
    ap.add_argument("--models", default="mlp,cnn,gpt")
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    ranks = args.ranks
    if not args.cpu_stand_in:
        listed, why = gpus()
        if not listed:
            print(f"test/gpu: SKIP: {why}; run `make test-gpu` on a machine "
                  "with NVIDIA GPUs (README, Running on GPUs)")
            return 0
        if not os.path.exists(os.path.join(args.build, "lib", "libZeroRuntimeCUDA.so")):
            print("test/gpu: FAIL: this machine has GPUs but the build has no "
                  "CUDA runtime (CMake found no CUDA toolkit or NCCL)")
            return 1
        ranks = min(ranks, len(listed))
        print(f"test/gpu: {len(listed)} GPU(s), {ranks} rank(s): {listed[0]}")
    ok = True
    with tempfile.TemporaryDirectory(prefix="zero-gpu-") as tmp:
        r = Runner(bindir, tmp, ranks, args.cpu_stand_in)
        for name in args.models.split(","):
            run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                 tmp, "--only", name])
            for precision in ("fp32", "bf16"):
                for stage in range(4):
                    ok &= parity(r, name, precision, stage)
        if not args.cpu_stand_in:
            ok &= memory(r, "fp32", 0)
            ok &= memory(r, "bf16", 3)
    print("test/gpu: " + ("all passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
