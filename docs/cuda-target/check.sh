#!/bin/bash
# CPU numerics check of the mapped kernels of MODEL (after run_all.sh):
# every kernel as formed vs. its GPU-tiled form run sequentially
# (scf-forall-to-for). Prints "kernel#, differing elements, max |diff|".
set -e
W=$1; m=$2
M="nice -n 19 /usr/lib/llvm-22/bin/mlir-opt"
cd $W
python3 $(dirname "$0")/tools/make_check.py $m.pre.mlir $m.tiled.mlir > $m.check.mlir
EMU=""
case $m in *bf16*|*fp16*) EMU="arith-emulate-unsupported-floats{source-types=bf16,f16 target-type=f32},";; esac
CPUP="builtin.module(func.func(scf-forall-to-for,convert-linalg-to-loops),fold-memref-alias-ops,expand-strided-metadata,lower-affine,convert-scf-to-cf,math-extend-to-supported-types,${EMU}convert-math-to-llvm,convert-math-to-libm,convert-to-llvm,reconcile-unrealized-casts)"
# arith-emulate-unsupported-floats leaves {fastmath = #arith.fastmath<contract>}
# on the extf/truncf it makes; convert-to-llvm copies it onto llvm.fpext as a
# discardable attribute, which mlir-runner / mlir-translate cannot parse.
$M $m.check.mlir --pass-pipeline="$CPUP" | sed 's/ {fastmath = #arith.fastmath<contract>}//g' > $m.check.llvm.mlir
nice -n 19 /usr/lib/llvm-22/bin/mlir-runner $m.check.llvm.mlir -e main -entry-point-result=void \
  -shared-libs=/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_runner_utils.so -O1 > $m.check.out
echo "$m: $(wc -l < $m.check.out) kernels compared; $(awk -F', ' '$2!=0' $m.check.out | wc -l) with differences"
awk -F', ' '$2!=0' $m.check.out | head -5
