#!/usr/bin/python3
"""Compiles test models with --target=cuda and checks what comes out.

  compile_cuda.py WORKDIR MODEL... [--stages 0,1,2,3] [--precisions fp32,bf16]
                  [--archs sm_80,sm_90] [--clip C] [--jobs 2]

For each model, precision, stage (2 ranks; stage 0 is data parallel) and
GPU architecture, `zero-opt --target=cuda` writes OUT/ (ptxas runs inside
it: a kernel it rejects fails the compile). Then, per output folder:
  - kernels.<arch>.cubin: the ELF header's architecture (llvm-readelf) and
    its kernels (FUNC GLOBAL symbols);
  - step.so embeds those exact bytes, and the kernel names its launches
    look up are exactly the cubin's kernels; with several architectures
    (`--archs sm_80+sm_90`), step.so embeds kernels.fatbin, which holds
    every cubin, all with the same kernels;
  - step.so was linked with --no-undefined against the CUDA runtime, which
    brings cudart, cuBLAS and NCCL: `ldd -r` finds every library and
    reports no undefined symbol;
  - plan.json: target and architecture; each step function's arena (every
    buffer aligned and inside it, at least the planned peak of
    temporaries); hyperparameters in host memory, other buffers on the
    device.
Prints one line per output folder.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

READELF = "/usr/lib/llvm-22/bin/llvm-readelf"


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}\n{r.stderr}")
    return r.stdout


def compile_one(work, model, precision, stage, arch, clip):
    out = os.path.join(work, f"{model}.{precision}.s{stage}.{arch}")
    run(["zero-opt", os.path.join(work, f"{model}.onnx"), "--target=cuda",
         f"--gpu-arch={arch.replace('+', ',')}", f"--stage={stage}", "--world-size=2",
         f"--precision={precision}", "--persistence-threshold=0",
         f"--gradient-clipping={clip}", "--no-object-cache", "-o", out])
    return out


def check(out, archs):
    facts = []
    so = open(os.path.join(out, "step.so"), "rb").read()
    kernel_sets = []
    for arch in archs.split("+"):
        cubin = os.path.join(out, f"kernels.{arch}.cubin")
        header = run([READELF, "-h", cubin])
        found = re.search(r"Flags:.*?(sm_\d+)", header)
        found = found.group(1) if found else "none"
        facts.append(f"cubin for {found} == {arch}: {found == arch}")
        syms = run([READELF, "-s", "--wide", cubin])
        kernel_sets.append({l.split()[-1] for l in syms.splitlines()
                            if " FUNC " in l and " GLOBAL " in l})
    kernels = kernel_sets[0]
    if len(kernel_sets) == 1:
        embedded = open(cubin, "rb").read() in so
    else:
        # One fat binary of every cubin, the one step.so embeds.
        fat = open(os.path.join(out, "kernels.fatbin"), "rb").read()
        embedded = (fat[:4] == b"\x50\xed\x55\xba" and fat in so and
                    all(open(os.path.join(out, f"kernels.{a}.cubin"), "rb").read()
                        in fat for a in archs.split("+")) and
                    all(k == kernels for k in kernel_sets))
    facts.append(f"{len(kernels)} kernels; embedded: {embedded}")
    looked_up = {m.decode() for m in
                 re.findall(rb"(kernel_\d+_[a-z_]+?_\d+)\x00", so)}
    facts.append(f"launched == defined: {looked_up == kernels}")
    ldd = run(["ldd", "-r", os.path.join(out, "step.so")])
    missing = [l for l in ldd.splitlines()
               if "undefined symbol" in l or "not found" in l]
    libs = all(re.search(rf"\b{lib}\S*\.so", ldd)
               for lib in ("libZeroRuntimeCUDA", "libcudart", "libcublas",
                           "libnccl"))
    facts.append(f"cudart, cuBLAS, NCCL linked: {libs}; "
                 f"unresolved: {len(missing)}")
    plan = json.load(open(os.path.join(out, "plan.json")))
    ok = plan.get("target") == "cuda" and plan.get("gpu_arch") == archs.replace("+", ",")
    for fn in plan["functions"].values():
        memory, arena = fn["memory"], fn["memory"]["arena"]
        align = arena["alignment"]
        ok &= all(b["offset"] % align == 0 and b["offset"] >= 0 and
                  b["offset"] + b["bytes"] <= arena["bytes"]
                  for b in arena["buffers"])
        ok &= arena["bytes"] >= memory["temporaries_peak"]
        ok &= all(b["memory"] == ("host" if b["role"] == "hyperparameter"
                                  else "device")
                  for b in fn["arguments"] + fn["results"])
    facts.append(f"memory laid out: {ok}")
    return facts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--stages", default="0,1,2,3")
    ap.add_argument("--precisions", default="fp32,bf16")
    ap.add_argument("--archs", default="sm_80,sm_90")
    ap.add_argument("--clip", default="0")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    jobs = [(m, p, s, arch) for m in a.models
            for p in a.precisions.split(",") for s in a.stages.split(",")
            for arch in a.archs.split(",")]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        outs = list(pool.map(lambda j: compile_one(a.work, *j, a.clip), jobs))
    failed = False
    for (m, p, s, arch), out in zip(jobs, outs):
        try:
            facts = check(out, arch)
        except RuntimeError as e:
            print(f"{m} {p} stage {s} {arch}: {e}")
            failed = True
            continue
        print(f"{m} {p} stage {s} {arch}: " + "; ".join(facts))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
