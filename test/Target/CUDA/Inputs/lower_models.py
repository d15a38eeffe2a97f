#!/usr/bin/python3
"""Lowers the kernels of test models to device code and checks the binaries.

  lower_models.py WORKDIR MODEL... [--stages 0,1,2,3] [--precisions fp32,bf16]
                  [--chips sm_80,sm_90]

For each model, precision and stage (2 ranks; stage 0 is data parallel):
the step's kernels (zero-form-kernels after the memory plan, GEMMs as BLAS
calls) go through zero-gpu-lower-kernels for all chips, which runs ptxas
on the one gpu.module of the step (one object per chip), and
check_binary.py reads the cubins.
Prints one line per lowering.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, out=None):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{' '.join(cmd)}\n{r.stderr}")
    if out:
        open(out, "w").write(r.stdout)
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--stages", default="0,1,2,3")
    ap.add_argument("--precisions", default="fp32,bf16")
    ap.add_argument("--chips", default="sm_80,sm_90")
    a = ap.parse_args()
    for model in a.models:
        onnx = os.path.join(a.work, f"{model}.onnx")
        for precision in a.precisions.split(","):
            for stage in a.stages.split(","):
                tag = os.path.join(a.work, f"{model}.{precision}.s{stage}")
                run(["zero-opt", onnx, f"--stage={stage}", "--world-size=2",
                     f"--precision={precision}", "--persistence-threshold=0",
                     "--emit=mlir"], tag + ".mlir")
                run(["zero-opt", tag + ".mlir", "--zero-cpu-memory-plan",
                     "--zero-linalg-to-blas", "--convert-zero-to-runtime",
                     "--zero-form-kernels"], tag + ".k.mlir")
                lowered = f"{tag}.gpu.mlir"
                run(["zero-opt", tag + ".k.mlir",
                     f"--zero-gpu-lower-kernels=chips={a.chips}"], lowered)
                report = run([sys.executable, os.path.join(HERE, "check_binary.py"),
                              lowered, tag + ".obj"])
                print(f"{model} {precision} stage {stage}: "
                      + "; ".join(report.strip().splitlines()))


if __name__ == "__main__":
    main()
