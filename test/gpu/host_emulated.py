#!/usr/bin/python3
"""--target=cuda programs run end to end on this machine's CPU, with the CUDA
runtime, driver, cuBLAS and NCCL calls answered by the host emulator
(runtime/tests/CudaHostEmulator.cpp, LD_PRELOADed under zero-run).

What runs is the build's own host program: zero-run's CUDA path,
libZeroRuntimeCUDA, the generated host code with its module load, launches
and their parameter arrays, cuBLAS calls, collectives on the communication
streams and event waits, and the device arena; the kernels run as their
host copies (zero-opt --host-kernels: the same gpu.func before NVVM) and
the GEMMs are computed by the emulator. For the MLP, CNN and GPT test
models at ZeRO stages 0-3 in fp32 and bf16, on 2 ranks, 2 AdamW steps
(and the GPT on 3 and on 8 ranks):

- losses and saved weights equal the CPU target's (TOL below); also for
  the GPT in fp16 with loss scaling and clipping at stage 2, a GPT whose
  512-token rows are split reductions at stage 3, a GPT over 1024 tokens
  whose attention runs as the fused tensor-core kernels (zero.attention
  and its gradient) and whose cross-entropy rows run as row groups (bf16,
  stage 3; fp16 with loss scaling and clipping, stage 2), the same GPT
  with dropout on its attention's probabilities drawn inside the fused
  kernels (bf16, stage 3, SGD: each parameter's change within 2e-2 of
  the CPU target's unfused step's), an MLP whose
  [4096, 1024] ops take several rows a thread (bf16, stage 3), the GPT at
  stage 3 with
  2 accumulated micro-batches, with --remat=blocks (bf16) and
  --remat=sqrt, and the zoo's
  transformer, ViT, SqueezeNet, ResNet-18 (float64, synchronized
  BatchNorm) and MobileNetV2 (float64, depthwise convolutions) at stage 3;
- the run succeeds and the emulator saw no violation: every pointer given to
  a copy, fill, GEMM or collective lies with its bytes in one live device
  allocation; every kernel looked up is a kernel of the sm_90 cubin of the
  loaded fat binary; every launch is within CUDA's limits; every GEMM's
  leading dimensions are ones cuBLAS accepts; every stream waits only on
  recorded events; no two streams touch the same device bytes, one
  writing, without an event wait or synchronization between them (the
  compute and communication streams: kernels, GEMMs, copies, collectives);
- each rank uses the device of its local rank; with zero-run --comm=mpi
  (the MLP at stage 0 in bf16, the GPT at stage 3 in bf16 and at stage 2
  in fp32 without overlap) both ranks share one emulated GPU, make no
  NCCL call, and equal the CPU target all the same;
- the bytes each rank sent (zero-run --stats) equal plan.json's per-step
  bytes times the steps, by collective, and equal what the NCCL calls were
  given to move (the emulator's count); the NCCL calls of each kind are
  plan.json's calls times the steps;
- the peak device memory the program added to the runtime's own
  (device_memory.program_peak, from cudaMemGetInfo) is at least plan.json's
  peak and, for a GPT of 35M parameters at stage 0 fp32 and stage 3 bf16
  (and at stage 3 bf16 on 8 ranks; the small models' buffers are mostly
  alignment), within 5% of it;
- the trace names the model's node of every GEMM and of the kernels that
  compute one (zero-gpu-trace-nodes: kernels shared between layers say
  which layer a launch was); at stage 3 it shows the compute and the
  communication streams.

The 35M GPT's kernels and GEMMs are checked, not run (minutes on the
host). A GPT at stage 3 saves a checkpoint, resumes from it and evaluates
(--infer): its saved weights and outputs have the CPU target's arrays and
values.

Then the error paths: a device too small for the arena, no device, one
rank's NCCL call failing, two ranks on one GPU with NCCL, one rank's
staging buffer failing over MPI, and one rank stuck over MPI (the other's
wait times out) each end the job within a minute with one error naming the
rank and the call.

Usage: /usr/bin/python3 test/gpu/host_emulated.py --build build
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_parity  # noqa: E402

MODELS_DIR = gpu_parity.MODELS_DIR
RANKS = 2
STEPS = 2
MEMORY_TOL = 0.05
# A parameter's change against the CPU target's (worst_update): bf16
# kernels give 4e-3 for the GPT with attention dropout, a mask drawn for
# the wrong key on one side of the backward 0.19.
UPDATE_TOL = 2e-2
# Seconds an error path may take to end the job (the stuck rank's timeout
# is 10 s).
ERROR_BOUND_S = 60
# Losses (relative) and weights (absolute) against the CPU target. Tighter
# than on a GPU (gpu_parity.TOL): no libdevice math and no NCCL ring order,
# only the GEMMs' order of sums and the host's libm differ.
TOL = {"fp32": (1e-5, 1e-5), "bf16": (1e-3, 2e-3), "fp16": (1e-3, 2e-3)}
ZOO = gpu_parity.ZOO


class Emulated(gpu_parity.Runner):
    def __init__(self, bindir, tmp, emulator, ranks=RANKS):
        super().__init__(bindir, tmp, ranks, stand_in=False)
        self.emulator = emulator

    def mpirun(self, out, data, steps, extra_env=None, tag="run", args=()):
        report = os.path.join(self.tmp, f"{os.path.basename(out)}.{tag}.emu")
        # Device memory starts as NaN: a result read from what no kernel
        # wrote (a region a row group leaves unwritten) would show.
        env = {"LD_PRELOAD": self.emulator, "ZERO_CUDA_EMU_REPORT": report,
               "ZERO_CUDA_EMU_POISON": "1", "ZERO_RT_NCCL_TIMEOUT_S": "60"}
        env.update(extra_env or {})
        cmd = list(gpu_parity.MPIRUN) + ["-np", str(self.ranks)]
        for k, v in env.items():
            cmd += ["-x", f"{k}={v}"]
        log, stats, trace = out + ".jsonl", out + ".stats.json", out + ".trace.json"
        cmd += [os.path.join(self.bindir, "zero-run"), out, "--data", data,
                "--steps", str(steps), "--log", log, "--stats", stats,
                "--trace", trace] + list(args)
        paths = [f"{report}.{rank}.json" for rank in range(self.ranks)]
        for path in paths:  # a run that writes none must not read the last's
            if os.path.exists(path):
                os.remove(path)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        reports = []
        for path in paths:
            if os.path.exists(path):
                with open(path) as f:
                    reports.append(json.load(f))
        return r, reports, stats, trace


def clean(r, proc, reports):
    """The run succeeded and every rank's emulator saw no violation."""
    return proc.returncode == 0 and len(reports) == r.ranks and not any(
        rep["violations"] for rep in reports)


def check_run(r, name, precision, stage, check_memory=False, computes=True, extra=(),
              tol=None, shared=False, launched=(), taken=False, update_tol=None):
    """precision None: the model's own (zoo models in float64). `shared`:
    both ranks on one emulated GPU, collectives over MPI through host
    memory (zero-run --comm=mpi). `launched`: kinds of kernel (the op a
    kernel is named after, such as attention_grad) every rank must
    launch. `taken`: no step may be skipped (fp16 loss scaling), so that
    the weights compared are updated ones. `update_tol`: each parameter's
    change within this of the CPU target's change (gpu_parity's
    worst_update), which
    with SGD holds every gradient, not just the largest weight, to the
    CPU target's."""
    onnx = os.path.join(r.tmp, f"{name}.onnx")
    data = os.path.join(r.tmp, f"{name}.data.npz")
    tag = f"{name}.{precision}.s{stage}" + "".join(
        "." + "".join(c for c in f if c.isalnum()) for f in extra) + (
        ".shared" if shared else "") + (f".n{r.ranks}" if r.ranks != RANKS else "")
    flags = [f"--stage={stage}"] + list(extra)
    if precision:
        flags.append(f"--precision={precision}")
    out, plan = r.compile(onnx, tag, flags + (["--host-kernels"] if computes else []),
                          cuda=True)
    problems = []
    weights = out + ".w.npz"
    proc, reports, stats_path, trace = r.mpirun(
        out, data, STEPS, {"ZERO_CUDA_EMU_DEVICES": "1"} if shared else None,
        args=["--save-weights", weights] + (["--comm=mpi"] if shared else []))
    if proc.returncode:
        print(f"FAIL {tag}: zero-run exited {proc.returncode}\n{proc.stdout}{proc.stderr}")
        return False
    if len(reports) != r.ranks:
        print(f"FAIL {tag}: {len(reports)} emulator reports for {r.ranks} ranks")
        return False
    with open(stats_path) as f:
        stats = json.load(f)
    for rank, rep in enumerate(reports):
        if rep["violations"]:
            problems.append(f"rank {rank}: {rep['violations'][:3]}")
        if rep["device"] != (0 if shared else rank):
            problems.append(f"rank {rank} used device {rep['device']}")
        if rep["launches"] == 0:
            problems.append(f"rank {rank}: no kernel launched")
        # Every test model multiplies matrices, in any element type: on
        # cuBLAS, not in generated kernels.
        if rep["gemms"] == 0:
            problems.append(f"rank {rank}: no cuBLAS GEMM")
        if rep["computes"] != computes or (
                computes and rep["kernels_run"] != rep["launches"]):
            problems.append(f"rank {rank}: {rep['kernels_run']} of {rep['launches']} "
                            f"launches computed")
        for kind in launched:
            # kernel_<n>_<kind>_<launch>: the op each kernel was formed from.
            if not any(re.fullmatch(rf"kernel_\d+_{kind}_\d+", k)
                       for k in rep["launches_by_kernel"]):
                problems.append(f"rank {rank}: no {kind} kernel launched")
    values = ""
    if computes:
        # The same step compiled for the CPU: equal losses and weights.
        ref_out, _ = r.compile(onnx, tag + ".cpu", flags, cuda=False)
        ref_l, ref_w, _ = r.train(ref_out, data, STEPS)
        log = [json.loads(line) for line in open(out + ".jsonl")]
        l = np.array([entry["loss"] for entry in log])
        if taken and any(entry.get("skipped") for entry in log):
            problems.append("a step was skipped on overflow")
        same, rel, werr = gpu_parity.values_match(l, np.load(weights), ref_l, ref_w,
                                                  precision or "fp32", STEPS,
                                                  tol or TOL)
        if not same:
            problems.append(f"losses {l} vs the CPU target's {ref_l}, weights max "
                            f"abs difference {werr:.2e}")
        values = f"loss max rel {rel:.1e}, weights max abs {werr:.1e} vs CPU; "
        if update_tol is not None:
            worst, err = gpu_parity.worst_update(onnx, np.load(weights), ref_w)
            if err > update_tol:
                problems.append(f"{worst}'s change {err:.2e} from the CPU "
                                f"target's, relative (limit {update_tol})")
            values += (f"each parameter's change within {err:.1e} of the CPU "
                       f"target's ({worst}); ")
    same_bytes, planned, measured = gpu_parity.bytes_match(plan, stats, STEPS)
    if not same_bytes:
        problems.append(f"bytes sent {measured} != plan {planned} x {STEPS}")
    planned_calls = plan["functions"]["train_step"].get("communication", {}).get("calls", {})
    names = {"all_gather": "ncclAllGather", "reduce_scatter": "ncclReduceScatter",
             "all_reduce": "ncclAllReduce"}
    # Over MPI no NCCL call is made: the collectives are zero-run's count.
    counted = {k: stats["calls"].get(k, 0) for k in names}
    for rank, rep in enumerate(reports):
        calls = {k: rep["calls"].get(names[k], 0) for k in names}
        expected = {k: 0 if shared else planned_calls.get(k, 0) * STEPS for k in names}
        if calls != expected:
            problems.append(f"rank {rank}: NCCL calls {calls} != {expected}")
    if counted != {k: planned_calls.get(k, 0) * STEPS for k in names}:
        problems.append(f"collectives {counted} != plan {planned_calls} x {STEPS}")
    nccl = 0 if shared else sum(v for v in measured.values())
    if reports[0]["collective_bytes"] != nccl:
        problems.append(f"NCCL calls moved {reports[0]['collective_bytes']} B, "
                        f"expected {nccl} B")
    dev = stats.get("device_memory", {})
    peak = plan["functions"]["train_step"]["memory"]["peak"]
    ratio = dev.get("program_peak", 0) / peak if peak else 0
    # Small models' buffers are mostly the arena's 256-byte alignment; the
    # larger GPT below checks the 5%.
    if ratio < 1 or (check_memory and ratio - 1 > MEMORY_TOL):
        problems.append(f"device memory peak {dev.get('program_peak')} B vs "
                        f"plan.json {peak} B (ratio {ratio:.4f})")
    # Each GEMM and kernel in the trace names the model's node it computes.
    events = gpu_parity.trace_events(trace)
    trace_problems, named, total = gpu_parity.trace_nodes(
        events, gpu_parity.graph_nodes(onnx))
    problems += [f"trace: {p}" for p in trace_problems]
    note = (f"; nodes named by {named['gemm']} of {total['gemm']} GEMMs, "
            f"{named['kernel']} of {total['kernel']} kernels")
    if stage == 3:
        tids = gpu_parity.trace_streams(events)
        streams = tids.get("compute", set()) | tids.get("wait", set())
        comm = tids.get("communication", set())
        if not streams or not comm or streams & comm:
            problems.append(f"trace: compute {sorted(streams)}, communication {sorted(comm)}")
        note += f"; trace: compute {sorted(streams)}, communication {sorted(comm)}"
    rep = reports[0]
    ok = not problems
    print(f"{'ok  ' if ok else 'FAIL'} {name:4s} {precision or 'as exported'} stage "
          f"{stage} on {r.ranks}{' sharing one GPU (--comm=mpi)' if shared else ''}"
          f"{''.join(' ' + f for f in extra)}: "
          f"{values}{rep['launches'] // STEPS} launches of "
          f"{len(rep['launches_by_kernel'])} kernels, "
          f"{rep['gemms'] // STEPS} GEMMs, {sum(counted.values()) // STEPS} collectives "
          f"({rep['collectives'] // STEPS} NCCL calls) a step; "
          f"bytes {measured} == plan x {STEPS}; device memory {dev.get('program_peak'):,} B, "
          f"plan {peak:,} B (ratio {ratio:.4f}){note}"
          + ("" if ok else "\n     " + "\n     ".join(problems)), flush=True)
    return ok


def check_checkpoints(r):
    """A CUDA build saves, resumes and evaluates: the device-to-host copies
    of checkpoints, saved weights and outputs, with the CPU target's arrays
    (names, shapes, types) and values (4 steps straight, the initial
    weights' outputs)."""
    onnx = os.path.join(r.tmp, "gpt.onnx")
    data = os.path.join(r.tmp, "gpt.data.npz")
    flags = ["--stage=3"]
    out, _ = r.compile(onnx, "gpt.ck", flags + ["--host-kernels"], cuda=True)
    cpu, _ = r.compile(onnx, "gpt.ck.cpu", flags, cuda=False)
    ck = out + ".ckpt"
    steps = [
        ("train 3 steps, a checkpoint every 2", 3,
         ["--save-checkpoint", ck, "--checkpoint-every", "2", "--save-weights",
          out + ".w.npz"]),
        ("resume from step 3 to 4", 4, ["--resume", ck, "--save-weights", out + ".w4.npz"]),
        ("--infer", 1, ["--infer", "--out", out + ".infer.npz"]),
    ]
    ok = True
    for what, n, args in steps:
        proc, reports, _, _ = r.mpirun(out, data, n, tag="ck", args=args)
        good = clean(r, proc, reports)
        print(f"{'ok  ' if good else 'FAIL'} gpt stage 3 {what}"
              + ("" if good else f": exit {proc.returncode}, {len(reports)} reports, "
                 f"{[rep['violations'][:2] for rep in reports]}: {proc.stderr[-800:]}"),
              flush=True)
        ok &= good
    if not ok:
        return False
    # The CPU target's arrays of the same run.
    gpu_parity.run(gpu_parity.MPIRUN + ["-np", str(r.ranks), os.path.join(r.bindir, "zero-run"),
                   cpu, "--data", data, "--steps", "4", "--save-weights", cpu + ".w.npz"])
    gpu_parity.run(gpu_parity.MPIRUN + ["-np", str(r.ranks), os.path.join(r.bindir, "zero-run"),
                   cpu, "--data", data, "--steps", "1", "--infer", "--out", cpu + ".infer.npz"])

    def shapes(path):
        return {k: (v.shape, v.dtype) for k, v in np.load(path).items()}

    def difference(a, b):
        a, b = np.load(a), np.load(b)
        return max(float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) for k in b.files)

    manifest = os.path.join(ck, "step-00000003", "manifest.json")
    for what, a, b in [("saved weights", out + ".w4.npz", cpu + ".w.npz"),
                       ("outputs", out + ".infer.npz", cpu + ".infer.npz")]:
        same = shapes(a) == shapes(b)
        err = difference(a, b) if same else np.inf
        same &= err <= TOL["fp32"][1]
        print(f"{'ok  ' if same else 'FAIL'} gpt stage 3 {what}: the CPU target's "
              f"{len(shapes(b))} arrays, names, shapes and types; values max abs "
              f"difference {err:.1e} (tol {TOL['fp32'][1]:g})", flush=True)
        ok &= same
    whole = os.path.exists(manifest) and all(
        os.path.exists(os.path.join(ck, "step-00000003", f"rank-{i:05d}.npz"))
        for i in range(r.ranks))
    print(f"{'ok  ' if whole else 'FAIL'} gpt stage 3 checkpoint at step 3: manifest "
          f"and {r.ranks} shards", flush=True)
    return ok and whole


def check_errors(r):
    """Failures end the job with one line naming the rank and the call."""
    name = "mlp"
    onnx = os.path.join(r.tmp, f"{name}.onnx")
    data = os.path.join(r.tmp, f"{name}.data.npz")
    out, plan = r.compile(onnx, "mlp.errors", ["--stage=3"], cuda=True)
    arena = plan["functions"]["train_step"]["memory"]["arena"]["bytes"]
    cases = [
        # cuBLAS's 32 MiB workspace fits, the arena does not.
        ("device too small", {"ZERO_CUDA_EMU_MEMORY": str((32 << 20) + arena // 2)},
         ["rank 0", "cudaMalloc failed", "does not fit"]),
        ("no device", {"ZERO_CUDA_EMU_DEVICES": "0"},
         ["rank ", "cudaGetDeviceCount failed", "no CUDA device"]),
        ("rank 1's third all-gather fails",
         {"ZERO_CUDA_EMU_FAIL": "ncclAllGather:3", "ZERO_CUDA_EMU_FAIL_RANK": "1"},
         ["rank 1", "ncclAllGather failed"]),
        # NCCL takes one GPU per rank: two ranks on one say what to do.
        ("2 ranks on 1 GPU with NCCL", {"ZERO_CUDA_EMU_DEVICES": "1"},
         ["rank ", "zero_rt_cuda_init failed", "2 ranks of this node drive its GPU",
          "--comm=mpi"]),
        # Over MPI, the staging thread failing on one rank (its host
        # buffer) ends the job while the other waits in the collective.
        ("rank 0's staging buffer fails, over MPI",
         {"ZERO_CUDA_EMU_DEVICES": "1", "ZERO_CUDA_EMU_FAIL": "cudaHostRegister:1",
          "ZERO_CUDA_EMU_FAIL_RANK": "0"},
         ["rank 0", "cudaHostRegister failed"], None, ["--comm=mpi"]),
        # A rank stuck over MPI (its staging thread never returns): the
        # other's wait ends the job at ZERO_COMM_TIMEOUT.
        ("rank 1 stuck, over MPI",
         {"ZERO_CUDA_EMU_DEVICES": "1", "ZERO_CUDA_EMU_HANG": "cudaHostRegister:1",
          "ZERO_CUDA_EMU_FAIL_RANK": "1", "ZERO_COMM_TIMEOUT": "10"},
         ["rank 0", "failed: did not complete within 10 s", "ZERO_COMM_TIMEOUT"],
         None, ["--comm=mpi"]),
    ]
    # A cubin runs on its architecture's major version only; a fat binary
    # gives the driver the GPU's own.
    sm80, _ = r.compile(onnx, "mlp.sm80", ["--stage=1", "--gpu-arch=sm_80"], cuda=True)
    fat, _ = r.compile(onnx, "mlp.fat", ["--stage=1", "--gpu-arch=sm_80,sm_90"], cuda=True)
    cases += [
        ("an sm_80 build on sm_90", {"ZERO_CUDA_EMU_SM": "90"},
         ["rank ", "cuModuleLoadData failed", "no cubin for this GPU (sm_90)",
          "recompile with --gpu-arch=sm_90"], sm80),
        ("an sm_80,sm_90 build on sm_100", {"ZERO_CUDA_EMU_SM": "100"},
         ["rank ", "cuModuleLoadData failed", "(sm_100)", "sm_80 and sm_90 GPUs only"],
         fat),
    ]
    ok = True
    for build, sm in ((sm80, 86), (sm80, 89), (fat, 80), (fat, 90)):
        proc, reports, _, _ = r.mpirun(build, data, 1, {"ZERO_CUDA_EMU_SM": str(sm)},
                                       tag=f"sm{sm}")
        good = clean(r, proc, reports)
        print(f"{'ok  ' if good else 'FAIL'} {os.path.basename(build)} runs on sm_{sm}"
              + ("" if good else f": {proc.stderr[-600:]}"), flush=True)
        ok &= good
    for what, env, expect, *rest in cases:
        build = rest[0] if rest and rest[0] else out
        start = time.monotonic()
        try:
            proc, _, _, _ = r.mpirun(build, data, 2, extra_env=env, tag="err",
                                     args=rest[1] if len(rest) > 1 else ())
        except subprocess.TimeoutExpired:
            print(f"FAIL error path ({what}): the job hung")
            ok = False
            continue
        took = time.monotonic() - start
        errors = [l for l in proc.stderr.splitlines() if "zero-run: error:" in l]
        matching = [l for l in errors if all(e in l for e in expect)]
        # Every path ends the job promptly; a stuck rank within its timeout.
        good = proc.returncode != 0 and matching and took < ERROR_BOUND_S
        print(f"{'ok  ' if good else 'FAIL'} error path ({what}, arena {arena:,} B): "
              f"exit {proc.returncode} after {took:.0f} s; "
              f"{matching[0] if matching else errors[0] if errors else proc.stderr[-400:]}",
              flush=True)
        ok &= bool(good)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(gpu_parity.ROOT, "build"))
    ap.add_argument("--models", default="mlp,cnn,gpt")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    emulator = os.path.join(build, "lib", "libzero-cuda-host-emulator.so")
    if not os.path.exists(os.path.join(build, "lib", "libZeroRuntimeCUDA.so")) or \
            not os.path.exists(emulator):
        print("test/gpu host emulation: SKIP: this build has no CUDA runtime "
              "(CMake found no CUDA toolkit or NCCL)")
        return 0
    ok = True
    with tempfile.TemporaryDirectory(prefix="zero-cuda-emu-") as tmp:
        r = Emulated(os.path.join(build, "bin"), tmp, emulator)
        for name in args.models.split(","):
            gpu_parity.run(["/usr/bin/python3",
                            os.path.join(MODELS_DIR, "export_models.py"), tmp,
                            "--only", name])
            for precision in ("fp32", "bf16"):
                for stage in range(4):
                    ok &= check_run(r, name, precision, stage)
        if "mlp" in args.models.split(","):
            ok &= check_errors(r)
            # Both ranks on one GPU, collectives over MPI through host
            # memory: an all-reduce of bf16 gradients (MPI's 16-bit sums).
            ok &= check_run(r, "mlp", "bf16", 0, shared=True)
        if "gpt" in args.models.split(","):
            # fp16 loss scaling with clipping: the overflow flag and the
            # unscale-and-clip factor are device scalars the kernels read.
            ok &= check_run(r, "gpt", "fp16", 2, extra=["--gradient-clipping=1.0"])
            # From a loss scale of 2^8 no step overflows: the unscaled,
            # clipped gradients update the weights.
            scale8 = os.path.join(tmp, "fp16_scale8.json")
            with open(scale8, "w") as f:
                json.dump({"fp16": {"enabled": True, "initial_scale_power": 8}}, f)
            ok &= check_run(r, "gpt", "fp16", 2, taken=True,
                            extra=["--gradient-clipping=1.0", f"--config={scale8}"])
            # Rows long enough to split (the 509-token cross-entropy):
            # partial sums per row, then an ordered combine.
            gpu_parity.run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                            tmp, "--only", "gpt_wide"])
            ok &= check_run(r, "gpt_wide", "fp32", 3)
            # bf16 GEMMs padded from 509 to 512 (zero-gpu-pad-gemm-dims):
            # every access of the padded operands checked. Its sums run
            # over other GEMM shapes than the CPU target's, whose rounding
            # AdamW's normalized steps carry into the weights, as on a GPU:
            # the GPU's tolerances.
            ok &= check_run(r, "gpt_wide", "bf16", 3, tol=gpu_parity.TOL)
            # Row groups (zero-gpu-row-groups: 2048 rows of 1100 logits):
            # launches of several phases with a barrier between them, whose
            # host copies run each phase for every thread of a block
            # before the next.
            gpu_parity.run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                            tmp, "--only", "gpt_long"])
            # Its attention (1024 tokens, heads of 16) as the fused
            # tensor-core kernels, forward and backward, whose threads
            # meet at shuffles and warp matrix products.
            ok &= check_run(r, "gpt_long", "bf16", 3, tol=gpu_parity.TOL,
                            launched=("attention", "attention_grad"))
            # The same kernels on fp16, with loss scaling (from 2^8, so
            # that no step is skipped) and clipping. The fused kernels
            # keep the scores, scale and softmax in f32 where the CPU
            # target's step rounds each to 16 bits: the GPU's tolerances,
            # as for bf16.
            ok &= check_run(r, "gpt_long", "fp16", 2,
                            extra=["--gradient-clipping=1.0", f"--config={scale8}"],
                            tol={"fp16": gpu_parity.TOL["bf16"]},
                            launched=("attention", "attention_grad"), taken=True)
            # Both kernels in a micro-batch loop: the heads read from each
            # micro-batch's projection, the gradients written into its
            # concatenation, summed over two micro-batches.
            ok &= check_run(r, "gpt_long", "bf16", 3, tol=gpu_parity.TOL,
                            extra=["--gradient-accumulation-steps=2"],
                            launched=("attention", "attention_grad"))
            # Dropout 0.1 on the attention's probabilities, drawn inside
            # both fused kernels (forward, key and query sides): the mask
            # of the CPU target's unfused draw. With SGD each parameter's
            # change is its summed gradients, held to the CPU target's
            # (AdamW's normalized steps would hide a wrong mask).
            gpu_parity.run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                            tmp, "--only", "gpt_long_dropout"])
            ok &= check_run(r, "gpt_long_dropout", "bf16", 3, tol=gpu_parity.TOL,
                            extra=["--optimizer=sgd", "--lr=1.0"],
                            launched=("attention", "attention_grad"),
                            update_tol=UPDATE_TOL)
            # A layer norm's backward as one row group of six phases (its
            # two row sums, the ops between and after them), its weight
            # gradients as column partials split twice.
            gpu_parity.run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                            tmp, "--only", "norm_long"])
            ok &= check_run(r, "norm_long", "bf16", 3, tol=gpu_parity.TOL)
            # Elementwise ops whose threads take several rows each.
            gpu_parity.run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                            tmp, "--only", "mlp_wide"])
            ok &= check_run(r, "mlp_wide", "bf16", 3, tol=gpu_parity.TOL)
            # Accumulation buffers over micro-batches; recomputed
            # activations (and their re-gathered parameters at stage 3).
            ok &= check_run(r, "gpt", "fp32", 3, extra=["--gradient-accumulation-steps=2"])
            ok &= check_run(r, "gpt", "bf16", 3, extra=["--remat=blocks"])
            ok &= check_run(r, "gpt", "fp32", 3, extra=["--remat=sqrt"])
            # Reduce-scatters and all-gathers over MPI on one GPU, staged
            # while the step computes, and each completed where it starts.
            ok &= check_run(r, "gpt", "bf16", 3, shared=True)
            ok &= check_run(r, "gpt", "fp32", 2, extra=["--overlap-comm=false"],
                            shared=True)
            ok &= check_checkpoints(r)
            # Other world sizes, one emulated GPU per rank: 3 (shards
            # padded: no size divides by 3) and 8 (a node of 8 GPUs).
            for ranks, runs in ((3, (("fp32", 3), ("bf16", 2))),
                                (8, (("bf16", 3), ("fp32", 1)))):
                wide = Emulated(r.bindir, tmp, emulator, ranks=ranks)
                for precision, stage in runs:
                    ok &= check_run(wide, "gpt", precision, stage)
        # Models PyTorch and torchvision wrote (BatchNorm synchronized over
        # the ranks in resnet18, float64 there): GPU tolerances, as Adam
        # makes rounding noise of a zero gradient (attention's key bias)
        # an update of the learning rate's size.
        for name, extra in ZOO:
            gpu_parity.run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                            tmp, "--only", name])
            ok &= check_run(r, name, None, 3, extra=extra, tol=gpu_parity.TOL)
        # Data for the largest world size below.
        gpu_parity.big_gpt(tmp, 8)
        # Its values on the host would take minutes: checked, not computed.
        ok &= check_run(r, "big_gpt", "fp32", 0, check_memory=True, computes=False)
        ok &= check_run(r, "big_gpt", "bf16", 3, check_memory=True, computes=False)
        # Stage 3 on a node of 8 GPUs: the device memory of each rank's
        # shards and gathers within 5% of the plan.
        ok &= check_run(Emulated(r.bindir, tmp, emulator, ranks=8), "big_gpt",
                        "bf16", 3, check_memory=True, computes=False)
    print("test/gpu host emulation: " + ("all passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
