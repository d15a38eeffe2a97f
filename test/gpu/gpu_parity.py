#!/usr/bin/python3
"""--target=cuda programs run on the GPUs of this machine, against the CPU
target.

Runs wherever `nvidia-smi -L` lists a GPU, with one rank per GPU (at most
--ranks), or --ranks ranks sharing the GPUs with --comm mpi (zero-run
--comm=mpi: collectives over MPI through host memory, so that one GPU runs
the sharded programs of several ranks); elsewhere it prints SKIP and why,
and succeeds. For the MLP, CNN
and GPT test models and the GPT with a 509-token vocabulary (bf16 GEMMs
padded to 512) at ZeRO stages 0-3 in fp32 and bf16, the same compile
options for both targets, 5 AdamW steps from the same weights on the same
data under `mpirun -np N zero-run`, and the zoo's transformer, ViT,
SqueezeNet, ResNet-18 (float64, synchronized BatchNorm) and MobileNetV2
(float64, depthwise convolutions) at stage 3 with 5 SGD steps (--zoo),
and the GPT over 1024 tokens whose attention runs as the fused kernels
(bf16, stage 3; and with dropout 0.1 drawn inside them, SGD, each
parameter's change within 2e-2 of the CPU target's), 2 steps:

- every loss and every saved weight of the CUDA run equals the CPU
  target's within tolerance (fp32: losses rtol 1e-4, weights atol 1e-4;
  bf16: 2e-2 and 5e-3): the two differ in the order of floating-point sums
  (cuBLAS's GEMMs, split reductions, NCCL's rings) and in libdevice's math;
- the bytes each rank sent (zero-run --stats, counted by the collectives' backend)
  equal plan.json's per-step bytes times the steps, by collective;
- the trace shows the compute and the communication streams, and names
  the model's node of every GEMM and of the kernels that compute one.

Then a larger GPT (about 35M parameters; 2 MiB allocation granularity is
lost in it) at stage 0 fp32 and stage 3 bf16: the peak device memory the
program added to the runtime's own (cudaMemGetInfo, zero-run --stats
device_memory.program_peak) is within 5% of plan.json's memory peak
(not checked where ranks share GPUs: cudaMemGetInfo counts every process
on a GPU).

--cpu-stand-in runs the same comparisons with --simulate-gpu builds (the
CUDA target's mapped kernels, compiled for the CPU) in place of CUDA ones,
without the device memory check: it checks this script on a machine with
no GPU.

Where the GPU nodes have no compiler, the three phases run apart:
--prepare DIR compiles every program and runs the CPU references (no GPU
needed; the memory check's programs leave their 140 MB of weights behind
as names and shapes), --run DIR runs the CUDA programs on the GPU node
(zero-run and its libraries, Python with numpy), --check DIR compares.

Usage: /usr/bin/python3 test/gpu/gpu_parity.py --build build [--ranks 2]
       [--comm nccl|mpi] [--prepare DIR | --run DIR | --check DIR]
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
# More ranks than cores is allowed (the host emulator's runs; ranks sharing
# a GPU over MPI).
MPIRUN = ["mpirun", "--allow-run-as-root", "--bind-to", "none", "--oversubscribe"]
TOL = {"fp32": (1e-4, 1e-4), "bf16": (2e-2, 5e-3)}
STEPS = 5
MEMORY_TOL = 0.05
# The memory check's (precision, stage) runs, of the larger GPT.
MEMORY_CHECKS = [("fp32", 0), ("bf16", 3)]
# The fused attention kernels in whole steps (name, precision, stage,
# flags, the parameters' change tolerance): the GPT over 1024 tokens, and
# the same with dropout 0.1 on its probabilities, drawn inside the
# kernels, with SGD so that each parameter's change (its summed
# gradients) is held to the CPU target's; 2 steps, as under the host
# emulator (4.3e-3 there).
ATTENTION = [("gpt_long", "bf16", 3, [], None),
             ("gpt_long_dropout", "bf16", 3, ["--optimizer=sgd", "--lr=1.0"], 2e-2)]
ATTENTION_STEPS = 2
# The zoo's models (test/e2e/model_zoo.py) run at stage 3, as exported
# (ResNet-18 and MobileNetV2 in float64, ResNet-18's BatchNorm synchronized
# over the ranks; MobileNetV2's depthwise convolutions), with their compile
# flags.
ZOO = [("transformer", []), ("vit", []), ("squeezenet", []),
       ("resnet18", ["--batchnorm=sync"]), ("mobilenet_v2", [])]
# The larger GPT of the memory check.
BIG_GPT = dict(vocab=8192, d=768, n_head=12, n_layer=4, block_size=256, batch=8)


TIMEOUT = 1800  # seconds one compile or run may take (--timeout)


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
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


def results(out, weights=True):
    """The losses, saved weights (None unless `weights`) and stats of a run
    of program `out`."""
    losses = np.array([json.loads(l)["loss"] for l in open(out + ".jsonl")])
    with open(out + ".stats.json") as f:
        return losses, np.load(out + ".npz") if weights else None, json.load(f)


class Runner:
    def __init__(self, bindir, tmp, ranks, stand_in, comm="nccl"):
        self.bindir, self.tmp, self.ranks, self.stand_in = bindir, tmp, ranks, stand_in
        self.comm = comm

    def compile(self, onnx, tag, flags, cuda):
        out = os.path.join(self.tmp, tag)
        target = (["--simulate-gpu"] if self.stand_in else ["--target=cuda"]) if cuda else []
        run([os.path.join(self.bindir, "zero-opt"), onnx, "-o", out,
             f"--world-size={self.ranks}", "--optimizer=adamw", "--lr=1e-3",
             "--persistence-threshold=0"] + flags + target)
        with open(os.path.join(out, "plan.json")) as f:
            return out, json.load(f)

    def train(self, out, data, steps, trace=False):
        """Runs `steps` steps of program `out`; see results()."""
        cmd = [os.path.join(self.bindir, "zero-run"), out, "--data", data,
               "--steps", str(steps), "--log", out + ".jsonl",
               "--save-weights", out + ".npz", "--stats", out + ".stats.json"]
        if trace:
            cmd += ["--trace", out + ".trace.json"]
        if self.comm == "mpi":
            cmd.append("--comm=mpi")
        run(MPIRUN + ["-np", str(self.ranks)] + cmd)
        return results(out)


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
    # A non-finite loss is logged as null.
    l = np.array([np.nan if x is None else x for x in l], dtype=np.float64)
    rel = float(np.max(np.abs(l - ref_l) / np.abs(ref_l))) if len(l) == len(ref_l) else np.inf
    same_names = sorted(w.files) == sorted(ref_w.files)
    werr = max(float(np.max(np.abs(w[k].astype(np.float64) - ref_w[k])))
               for k in ref_w.files) if same_names else np.inf
    ok = (len(l) == steps and bool(np.all(np.isfinite(l))) and rel <= ltol
          and werr <= wtol)
    return ok, rel, werr


def worst_update(onnx_path, got, ref):
    """The parameter whose change over the run (from the model's
    initializer) is furthest from the CPU target's, and how far: the norm
    of their difference over the norm of the CPU target's change; (None,
    inf) when no parameter is shared."""
    import onnx
    from onnx import numpy_helper
    initial = {i.name: numpy_helper.to_array(i)
               for i in onnx.load(onnx_path).graph.initializer}
    worst, err = None, np.inf
    for name in got.files:
        if name in initial and name in ref:
            mine = got[name].astype(np.float64) - initial[name]
            theirs = ref[name].astype(np.float64) - initial[name]
            e = float(np.linalg.norm(mine - theirs) /
                      max(np.linalg.norm(theirs), 1e-30))
            if worst is None or e > err:
                worst, err = name, e
    return worst, err


def trace_events(path):
    """The intervals ("X" events) of a Chrome trace file."""
    with open(path) as f:
        events = json.load(f)
    events = events.get("traceEvents", events) if isinstance(events, dict) else events
    return [e for e in events if e.get("ph") == "X"]


def trace_streams(events):
    """The thread ids of the trace's compute and communication intervals."""
    tids = {}
    for e in events:
        tids.setdefault(e.get("cat"), set()).add(e.get("tid"))
    return tids


def graph_nodes(onnx_path):
    """The node names of an ONNX model's graph."""
    import onnx
    return {n.name for n in onnx.load(onnx_path, load_external_data=False).graph.node}


def trace_nodes(events, nodes):
    """What is wrong with the nodes a trace's intervals name their GPU work
    by (every GEMM names a node of `nodes`, every named kernel too, some
    kernel is named, each says whether it is a GEMM or a kernel), and how
    many GEMMs and kernels it named."""
    problems, named = [], {"gemm": 0, "kernel": 0}
    total = dict(named)
    for e in events:
        # zero-run's host intervals are named "compute"; kernels by their
        # function, GEMMs by their shape.
        if e.get("cat") != "compute" or e.get("name") == "compute":
            continue
        kind = "gemm" if e["name"].startswith("gemm ") else "kernel"
        total[kind] += 1
        if e.get("args", {}).get("kind") != kind:
            problems.append(f"{e['name']} is a {kind}, args.kind "
                            f"{e.get('args', {}).get('kind')!r}")
        node = e.get("args", {}).get("node")
        if node is None:
            if kind == "gemm":
                problems.append(f"{e['name']} names no node")
        elif node not in nodes:
            problems.append(f"{e['name']} names {node!r}, not a node of the model")
        else:
            named[kind] += 1
    if total["kernel"] and not named["kernel"]:
        problems.append("no kernel names a node")
    return problems[:3], named, total


def strip_weights(out):
    """Replaces program `out`'s params.npz by its arrays' names, shapes and
    types (params.shapes.json), for a program that must travel light."""
    path = os.path.join(out, "params.npz")
    with np.load(path) as w:
        spec = {k: [list(w[k].shape), w[k].dtype.str] for k in w.files}
    with open(os.path.join(out, "params.shapes.json"), "w") as f:
        json.dump(spec, f)
    os.remove(path)


def draw_weights(out, seed=0):
    """Writes random weights where strip_weights left names and shapes (once:
    a later run reuses them)."""
    spec_path = os.path.join(out, "params.shapes.json")
    if not os.path.exists(spec_path) or os.path.exists(os.path.join(out, "params.npz")):
        return
    with open(spec_path) as f:
        spec = json.load(f)
    rng = np.random.default_rng(seed)
    arrays = {k: (0.02 * rng.standard_normal(shape, dtype=np.float32)).astype(dt)
              for k, (shape, dt) in spec.items()}
    np.savez(os.path.join(out, "params.npz"), **arrays)


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


def prepare(r, models, memory, travel, zoo=(), attention=True):
    """Compiles every program into r.tmp and runs the CPU references there;
    returns the manifest of the runs left to do (paths relative to r.tmp).
    `travel`: the memory check's programs leave their weights behind.
    `zoo`: names of ZOO's models to run at stage 3 with SGD (AdamW's first
    step makes a near-zero gradient's rounding a step of the learning
    rate's size, which the fp32 tolerance would count against kernels).
    `attention`: ATTENTION's runs too."""
    entries = []
    for name, extra in ZOO:
        if name not in zoo:
            continue
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
             r.tmp, "--only", name])
        onnx = os.path.join(r.tmp, f"{name}.onnx")
        flags = ["--stage=3", "--optimizer=sgd"] + extra
        tag = f"{name}.s3"
        ref_out, _ = r.compile(onnx, tag + ".cpu", flags, cuda=False)
        r.compile(onnx, tag + ".cuda", flags, cuda=True)
        r.train(ref_out, os.path.join(r.tmp, f"{name}.data.npz"), STEPS)
        # Tolerances of fp32 (float64 models compute in float64).
        entries.append(dict(kind="parity", name=name, precision="fp32", stage=3,
                            ref=tag + ".cpu", out=tag + ".cuda",
                            data=f"{name}.data.npz", steps=STEPS, trace=True))
    for name in models:
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
             r.tmp, "--only", name])
        onnx = os.path.join(r.tmp, f"{name}.onnx")
        data = os.path.join(r.tmp, f"{name}.data.npz")
        for precision in ("fp32", "bf16"):
            for stage in range(4):
                flags = [f"--stage={stage}", f"--precision={precision}"]
                tag = f"{name}.{precision}.s{stage}"
                ref_out, _ = r.compile(onnx, tag + ".cpu", flags, cuda=False)
                r.compile(onnx, tag + ".cuda", flags, cuda=True)
                r.train(ref_out, data, STEPS)
                entries.append(dict(kind="parity", name=name, precision=precision,
                                    stage=stage, ref=tag + ".cpu", out=tag + ".cuda",
                                    data=f"{name}.data.npz", steps=STEPS,
                                    trace=stage == 3))
    for name, precision, stage, flags, update_tol in ATTENTION if attention else ():
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
             r.tmp, "--only", name])
        onnx = os.path.join(r.tmp, f"{name}.onnx")
        flags = [f"--stage={stage}", f"--precision={precision}"] + flags
        tag = f"{name}.{precision}.s{stage}"
        ref_out, _ = r.compile(onnx, tag + ".cpu", flags, cuda=False)
        r.compile(onnx, tag + ".cuda", flags, cuda=True)
        r.train(ref_out, os.path.join(r.tmp, f"{name}.data.npz"), ATTENTION_STEPS)
        entries.append(dict(kind="parity", name=name, precision=precision,
                            stage=stage, ref=tag + ".cpu", out=tag + ".cuda",
                            data=f"{name}.data.npz", steps=ATTENTION_STEPS,
                            trace=True, update_tol=update_tol))
    onnx = big_gpt(r.tmp, r.ranks)[0] if memory else None
    for precision, stage in memory:
        tag = f"big_gpt.{precision}.s{stage}"
        out, _ = r.compile(onnx, tag, [f"--stage={stage}", f"--precision={precision}"],
                           cuda=True)
        if travel:
            strip_weights(out)
        entries.append(dict(kind="memory", precision=precision, stage=stage, out=tag,
                            data="big_gpt.data.npz", steps=2, trace=False))
    manifest = dict(ranks=r.ranks, entries=entries)
    with open(os.path.join(r.tmp, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def run_prepared(r, manifest):
    """Runs the manifest's CUDA programs; a failed run leaves OUT.error."""
    for e in manifest["entries"]:
        out = os.path.join(r.tmp, e["out"])
        error = out + ".error"
        if os.path.exists(error):
            os.remove(error)
        draw_weights(out)
        try:
            r.train(out, os.path.join(r.tmp, e["data"]), e["steps"], e["trace"])
            print(f"ran  {e['out']}", flush=True)
        except (RuntimeError, subprocess.SubprocessError, OSError, ValueError) as err:
            with open(error, "w") as f:
                f.write(str(err))
            print(f"FAIL {e['out']}: {str(err)[-2000:]}", flush=True)


def check_parity(r, e):
    name, precision, stage = e["name"], e["precision"], e["stage"]
    ref_l, ref_w, _ = results(os.path.join(r.tmp, e["ref"]))
    out = os.path.join(r.tmp, e["out"])
    l, w, stats = results(out)
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    steps = e["steps"]
    same_values, rel, werr = values_match(l, w, ref_l, ref_w, precision, steps)
    ltol, wtol = TOL[precision]
    same_bytes, planned, measured = bytes_match(plan, stats, steps)
    ok = same_values and same_bytes
    note = ""
    if e["trace"]:
        events = trace_events(out + ".trace.json")
        tids = trace_streams(events)
        streams = tids.get("compute", set()) | tids.get("wait", set())
        comm = tids.get("communication", set())
        has_streams = bool(streams) and (r.ranks == 1 or bool(comm)) and not (streams & comm)
        problems, named, total = trace_nodes(
            events, graph_nodes(os.path.join(r.tmp, f"{name}.onnx")))
        ok &= has_streams and not problems
        note = (f"; trace: compute {sorted(streams)}, communication {sorted(comm)}; "
                f"nodes named by {named['gemm']} of {total['gemm']} GEMMs, "
                f"{named['kernel']} of {total['kernel']} kernels"
                + "".join(f"; {p}" for p in problems))
    if e.get("update_tol") is not None:
        worst, err = worst_update(os.path.join(r.tmp, f"{name}.onnx"), w, ref_w)
        ok &= err <= e["update_tol"]
        note += (f"; each parameter's change within {err:.1e} of the CPU "
                 f"target's ({worst}; tol {e['update_tol']:g})")
    print(f"{'ok  ' if ok else 'FAIL'} {name:4s} {precision} stage {stage} on {r.ranks}: "
          f"loss max rel {rel:.2e} (tol {ltol:g}), weights max abs {werr:.2e} "
          f"(tol {wtol:g}); bytes per rank {measured} "
          f"{'==' if same_bytes else '!='} plan {planned} x {steps}{note}", flush=True)
    return ok


def check_memory(r, e, shared=False):
    out = os.path.join(r.tmp, e["out"])
    _, _, stats = results(out, weights=False)
    with open(os.path.join(out, "plan.json")) as f:
        planned = json.load(f)["functions"]["train_step"]["memory"]["peak"]
    dev = stats["device_memory"]
    if shared:
        # cudaMemGetInfo counts every process on a GPU: a rank's peak holds
        # the others' memory too. Not a pass: nothing was compared.
        print(f"skip GPT {e['precision']} stage {e['stage']} on {r.ranks}: ranks share "
              f"GPUs, so the device memory peak ({dev['program_peak']:,} B) is not "
              f"one rank's; run one rank per GPU for the memory check", flush=True)
        return True
    ratio = dev["program_peak"] / planned
    ok = abs(ratio - 1) <= MEMORY_TOL
    print(f"{'ok  ' if ok else 'FAIL'} GPT {e['precision']} stage {e['stage']} on "
          f"{r.ranks}: device memory peak {dev['program_peak']:,} B over the "
          f"runtime's {dev['runtime']:,} B; plan.json peak {planned:,} B (ratio "
          f"{ratio:.4f}, tol {MEMORY_TOL:.0%}); allocated "
          f"{dev['program_allocated']:,} B", flush=True)
    return ok


def check(r, manifest, shared=False):
    """`shared`: the programs ran with more ranks than GPUs (--comm mpi)."""
    ok = True
    for e in manifest["entries"]:
        error = os.path.join(r.tmp, e["out"]) + ".error"
        if os.path.exists(error) or not os.path.exists(
                os.path.join(r.tmp, e["out"]) + ".stats.json"):
            why = open(error).read()[-1500:] if os.path.exists(error) else "never ran"
            print(f"FAIL {e['out']}: {why}", flush=True)
            ok = False
            continue
        ok &= check_parity(r, e) if e["kind"] == "parity" else check_memory(r, e, shared)
    return ok


def load_manifest(d, tool="test/gpu", prepare="gpu_parity.py --prepare"):
    """DIR's manifest; exits with one error naming `tool` and the command
    that prepares DIR when DIR was not prepared."""
    path = os.path.join(d, "manifest.json")
    if not os.path.exists(path):
        sys.exit(f"{tool}: error: {path} does not exist; prepare {d} first "
                 f"({prepare} {d})")
    with open(path) as f:
        return json.load(f)


def main():
    global TIMEOUT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", type=int, default=2,
                    help="ranks (one GPU each), at most the GPUs listed, or "
                    "any number with --comm mpi")
    ap.add_argument("--comm", choices=["nccl", "mpi"], default="nccl",
                    help="zero-run --comm: mpi lets ranks share GPUs")
    ap.add_argument("--cpu-stand-in", action="store_true",
                    help="--simulate-gpu builds in place of CUDA ones (no GPU needed)")
    ap.add_argument("--models", default="mlp,cnn,gpt,gpt_wide")
    ap.add_argument("--zoo", default=",".join(name for name, _ in ZOO),
                    help="zoo models run at stage 3 with SGD ('' for none)")
    ap.add_argument("--timeout", type=int, default=TIMEOUT,
                    help="seconds one compile or run may take")
    phase = ap.add_mutually_exclusive_group()
    phase.add_argument("--prepare", metavar="DIR",
                       help="compile and run the CPU references into DIR (no GPU)")
    phase.add_argument("--run", metavar="DIR",
                       help="run DIR's CUDA programs (on the GPU node)")
    phase.add_argument("--check", metavar="DIR", help="compare DIR's runs")
    args = ap.parse_args()
    if args.timeout <= 0:
        ap.error(f"--timeout is {args.timeout}; give a number of seconds above 0")
    TIMEOUT = args.timeout
    zoo = [z for z in args.zoo.split(",") if z]
    known = [name for name, _ in ZOO]
    if any(z not in known for z in zoo):
        ap.error(f"--zoo: {', '.join(z for z in zoo if z not in known)} is not a zoo "
                 f"model; known: {', '.join(known)}")
    memory = [] if args.cpu_stand_in else MEMORY_CHECKS
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    ranks = args.ranks
    if args.prepare:
        os.makedirs(args.prepare, exist_ok=True)
        r = Runner(bindir, args.prepare, ranks, args.cpu_stand_in)
        m = prepare(r, args.models.split(","), memory, True, zoo)
        print(f"test/gpu: {len(m['entries'])} programs for {ranks} rank(s) "
              f"in {args.prepare}")
        return 0
    if args.check:
        m = load_manifest(args.check)
        ran = os.path.join(args.check, "run.json")
        n_gpus = json.load(open(ran))["gpus"] if os.path.exists(ran) else m["ranks"]
        ok = check(Runner(bindir, args.check, m["ranks"], args.cpu_stand_in), m,
                   shared=m["ranks"] > n_gpus)
        print("test/gpu: " + ("all passed" if ok else "FAILED"))
        return 0 if ok else 1
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
        if args.comm == "nccl":
            ranks = min(ranks, len(listed))
        print(f"test/gpu: {len(listed)} GPU(s), {ranks} rank(s) over {args.comm}: "
              f"{listed[0]}")
    n_gpus = len(listed) if not args.cpu_stand_in else ranks
    if args.run:
        m = load_manifest(args.run)
        if m["ranks"] > n_gpus and args.comm == "nccl":
            print(f"test/gpu: FAIL: {args.run} was compiled for {m['ranks']} ranks; "
                  f"{n_gpus} GPU(s) here (NCCL takes one GPU per rank; --comm mpi "
                  f"shares them)")
            return 1
        run_prepared(Runner(bindir, args.run, m["ranks"], False, args.comm), m)
        with open(os.path.join(args.run, "run.json"), "w") as f:
            json.dump(dict(gpus=n_gpus, comm=args.comm), f)
        return 0
    if ranks > n_gpus and memory:
        # cudaMemGetInfo counts every process on a GPU.
        print(f"test/gpu: {ranks} ranks share {n_gpus} GPU(s): no device memory check")
        memory = []
    with tempfile.TemporaryDirectory(prefix="zero-gpu-") as tmp:
        r = Runner(bindir, tmp, ranks, args.cpu_stand_in, args.comm)
        m = prepare(r, args.models.split(","), memory, False, zoo)
        run_prepared(r, m)
        ok = check(r, m, shared=ranks > n_gpus)
    print("test/gpu: " + ("all passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
