#!/usr/bin/python3
"""Reduction kernels: zero-cpu-lane-reductions against LLVM's own
reassociated vectorization and against loop order.

Three sums of squares, each a linalg.generic the CPU target would hold in
a kernel: rows of 256 (512 rows: a layer norm's statistics at d = 256),
rows of 64 (2,048 rows: a softmax's sums at T = 64), and one sum over 4M
elements (a global norm's partial). Each is compiled four ways, through
the CPU pipeline's own lowering passes, then LLVM -O2 for this host:
- `reassoc`: the combining add marked `fastmath<reassoc>`, LLVM's loop
  vectorizer free to reorder the sum (its order follows its cost model);
- `loop order`: no flag, one dependent chain;
- `lanes=N`: `--zero-cpu-lane-reductions=lanes=N` (the default is 16),
  an order fixed by the reduction's extent.
Prints the median over --runs runs of each kernel's best time in a run.

Usage: /usr/bin/python3 bench/lane_reductions.py [--build build] [--runs 5]
"""
import argparse
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM = "/usr/lib/llvm-22/bin"
KERNELS = [("rows256", 512, 256), ("rows64", 2048, 64), ("sum4M", 1, 4194304)]

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
typedef struct { float *a, *b; long off, s[2], st[2]; } M2;
typedef struct { float *a, *b; long off, s[1], st[1]; } M1;
#define K(name) void _mlir_ciface_##name(M2 *, M1 *);
K(rows256) K(rows64) K(sum4M)
static double now(void) {
  struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
static float in[4194304], out[2048];
#define TIME(name, rows, cols, reps) { \
  M2 A = {in, in, 0, {rows, cols}, {cols, 1}}; M1 C = {out, out, 0, {rows}, {1}}; \
  double best = 1e9; \
  for (int r = 0; r < reps; ++r) { \
    for (int i = 0; i < rows; ++i) out[i] = 0; \
    double t = now(); _mlir_ciface_##name(&A, &C); t = now() - t; \
    if (t < best) best = t; } \
  printf("%s %.3f\n", #name, best * 1e6); }
int main(void) {
  for (long i = 0; i < 4194304; ++i) in[i] = (i % 97) * 0.01f;
  TIME(rows256, 512, 256, 300) TIME(rows64, 2048, 64, 300) TIME(sum4M, 1, 4194304, 30)
  return 0;
}
"""


def module(reassoc):
    fm = " fastmath<reassoc>" if reassoc else ""
    out = []
    for name, rows, cols in KERNELS:
        out.append(f"""
func.func @{name}(%a: memref<{rows}x{cols}xf32> {{llvm.noalias}}, %c: memref<{rows}xf32> {{llvm.noalias}}) attributes {{llvm.emit_c_interface}} {{
  linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}} ins(%a : memref<{rows}x{cols}xf32>) outs(%c : memref<{rows}xf32>) {{
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %sq, %acc{fm} : f32
    linalg.yield %s : f32
  }}
  return
}}""")
    return "\n".join(out)


def build(zero_opt, tmp, label, reassoc, passes):
    src = os.path.join(tmp, label + ".mlir")
    with open(src, "w") as f:
        f.write(module(reassoc))
    llmlir, ll, exe = (os.path.join(tmp, label + e) for e in (".ll.mlir", ".ll", ".bin"))
    subprocess.run([zero_opt, src] + passes + [
        "--convert-linalg-to-loops", "--lower-affine", "--expand-strided-metadata",
        "--convert-scf-to-cf", "--convert-to-llvm", "--reconcile-unrealized-casts",
        "-o", llmlir], check=True)
    subprocess.run([f"{LLVM}/mlir-translate", "--mlir-to-llvmir", llmlir, "-o", ll], check=True)
    subprocess.run([f"{LLVM}/clang", "-O2", "-march=native", "-w", ll,
                    os.path.join(tmp, "harness.c"), "-o", exe], check=True)
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    zero_opt = os.path.join(os.path.abspath(args.build), "bin", "zero-opt")
    variants = [("reassoc", True, []), ("loop order", False, [])] + [
        (f"lanes={n}", False, [f"--zero-cpu-lane-reductions=lanes={n}"]) for n in (8, 16, 32)]
    with tempfile.TemporaryDirectory(prefix="zero-lanes-") as tmp:
        with open(os.path.join(tmp, "harness.c"), "w") as f:
            f.write(HARNESS)
        exes = [(label, build(zero_opt, tmp, label.replace(" ", "_").replace("=", ""),
                              reassoc, passes)) for label, reassoc, passes in variants]
        times = {label: {k: [] for k, _, _ in KERNELS} for label, _ in exes}
        for _ in range(args.runs):
            for label, exe in exes:
                out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
                for line in out.splitlines():
                    k, t = line.split()
                    times[label][k].append(float(t))
    print(f"median of {args.runs} runs of each kernel's best time (us)")
    print(f"{'variant':12s}" + "".join(f"{k:>12s}" for k, _, _ in KERNELS))
    for label, _ in exes:
        print(f"{label:12s}" + "".join(
            f"{statistics.median(times[label][k]):12.1f}" for k, _, _ in KERNELS))


if __name__ == "__main__":
    main()
