#!/usr/bin/python3
"""Compile time of GPT-2-shaped models against depth, at ZeRO stage 3 on 8
ranks.

Writes d 768 GPTs (12 heads, vocab 50257, seq 256, micro-batch 2) of
--layers layers and, with --xl, the GPT-2 XL preset (48 layers, d 1600,
seq 1024, micro-batch 8) with bench/gpt2_model.py, then compiles each with
`zero-opt --stage=3 --world-size=8` into an output folder --repeat times,
without the object cache (every kernel compiled) and then once more with a
warm cache. Prints a markdown table for bench/RESULTS.md: the median cold
compile, its phases from --time-report (import, training step, lowering,
code generation, output folder; params.npz is written beside the lowering
and its time shown apart), the kernel counts, and the warm compile.

The weights file is reserved, not written (zeros, which the importer keeps
as splats); real weights cost one more copy of them at import (measured
once for GPT-2 XL in bench/RESULTS.md).

With --target cuda the models are compiled for the CUDA target in bf16
(--target=cuda --precision=bf16: kernels mapped to GPU blocks and
threads, device code through NVVM and ptxas, the host step compiled and
linked against the CUDA runtime); the kernel counts are then those of the
device code, and the object cache holds the host step alone.

Usage: /usr/bin/python3 bench/compile_time.py --build build
       [--layers 4,12,24,48] [--xl] [--repeat 3] [--target cpu|cuda]
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = re.compile(r"kernels: (\d+) formed, (\d+) after deduplication"
                     r"[^;]*; objects: (\d+)")
PHASES = ("import", "training step", "lowering", "code generation",
          "output folder")
PARAMS = re.compile(r"params\.npz written in ([\d.]+) s")


def phases(report):
    """Wall seconds of the top-level phases of a --time-report."""
    out = {}
    for line in report.splitlines():
        m = re.match(r"\s+[\d.]+ \(\s*[\d.]+%\)\s+([\d.]+) \(\s*[\d.]+%\)  (\S.*)$",
                     line)
        if m and m.group(2) in PHASES and m.group(2) not in out:
            out[m.group(2)] = float(m.group(1))
    return out


def compile_once(zero_opt, model, out, extra):
    t0 = time.time()
    r = subprocess.run([zero_opt, model, "--stage=3", "--world-size=8",
                        "-o", out, "--time-report"] + extra,
                       capture_output=True, text=True)
    seconds = time.time() - t0
    if r.returncode:
        raise SystemExit(f"zero-opt failed on {model}:\n{r.stderr}")
    return seconds, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--layers", default="4,12,24,48")
    ap.add_argument("--xl", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--target", choices=("cpu", "cuda"), default="cpu")
    args = ap.parse_args()
    target = (["--target=cuda", "--precision=bf16"] if args.target == "cuda"
              else [])
    zero_opt = os.path.join(os.path.abspath(args.build), "bin", "zero-opt")
    configs = [(f"d 768, {n} layers", ["--layers", str(n), "--d", "768",
                                       "--heads", "12", "--vocab", "50257",
                                       "--seq", "256", "--batch", "2"])
               for n in map(int, args.layers.split(","))]
    if args.xl:
        configs.append(("GPT-2 XL (48 layers, d 1600)", ["--preset", "xl"]))
    print("| model | cold compile (median) | runs | import | training step | "
          "lowering | code generation | output folder | params.npz (beside) | "
          "kernels formed | after dedup | objects | warm cache |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="zero-compile-") as tmp:
        for name, gen in configs:
            model = os.path.join(tmp, "gpt.onnx")
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench/gpt2_model.py"),
                            model] + gen, check=True, capture_output=True)
            runs = []
            for i in range(args.repeat):
                out = os.path.join(tmp, f"out{i}")
                runs.append(compile_once(zero_opt, model, out,
                                         target + ["--no-object-cache"]))
                subprocess.run(["rm", "-rf", out], check=True)
            times = [s for s, _ in runs]
            med = statistics.median(times)
            _, report = runs[times.index(med)]
            ph = phases(report)
            k = KERNELS.search(report)
            cache = os.path.join(tmp, "cache")
            compile_once(zero_opt, model, os.path.join(tmp, "fill"),
                         target + [f"--object-cache={cache}"])
            warm, _ = compile_once(zero_opt, model, os.path.join(tmp, "warm"),
                                   target + [f"--object-cache={cache}"])
            subprocess.run(["rm", "-rf", cache, os.path.join(tmp, "fill"),
                            os.path.join(tmp, "warm")] +
                           [os.path.join(tmp, f) for f in os.listdir(tmp)
                            if f.startswith("gpt.onnx")], check=True)
            cells = " | ".join(f"{ph.get(p, 0):.1f} s" for p in PHASES)
            pm = PARAMS.search(report)
            cells += f" | {float(pm.group(1)) if pm else 0:.1f} s"
            print(f"| {name} | **{med:.1f} s** | "
                  f"{', '.join(f'{t:.1f}' for t in times)} | {cells} | "
                  f"{k.group(1)} | {k.group(2)} | {k.group(3)} | {warm:.1f} s |",
                  flush=True)


if __name__ == "__main__":
    main()
