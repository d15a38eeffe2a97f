#!/bin/bash
# Kernel funcs of zero-opt -> GPU launches -> cubin/PTX for sm_80 and sm_90.
# usage: run_all.sh WORKDIR MODEL...   (MODEL = mlp.fp32, gpt.bf16, ...; needs
# WORKDIR/MODEL.kernels.mlir from `zero-opt ... --zero-form-kernels`)
set -e
W=$1; shift
T=$(cd "$(dirname "$0")" && pwd)/tools
M="nice -n 19 /usr/lib/llvm-22/bin/mlir-opt"
CUDA=/usr/local/cuda
export PATH=$CUDA/bin:$PATH
cd $W
for m in "$@"; do
  s=$(date +%s.%N)
  python3 $T/extract_kernels.py $m.kernels.mlir > $m.konly.mlir
  # 1. canonical form: copies as linalg.copy, named ops as generics, unit dims gone
  python3 $T/map_kernels.py pre $m.konly.mlir > $m.pre.mlir
  $M $m.pre.mlir --linalg-generalize-named-ops \
     --linalg-fold-unit-extent-dims="use-rank-reducing-slices=true" --canonicalize -o $m.gen.mlir
  # 2. tiling to blocks and threads (scf.forall with #gpu mappings)
  python3 $T/map_kernels.py wrap $m.gen.mlir > $m.wrap.mlir
  python3 $T/map_kernels.py script $m.wrap.mlir > $m.tf.mlir
  $M $m.wrap.mlir --transform-preload-library=transform-library-paths=$m.tf.mlir \
     --transform-interpreter -o $m.tiled.mlir
  # 3. foralls -> gpu.launch (block ids / thread ids)
  $M $m.tiled.mlir --transform-preload-library=transform-library-paths=$T/../examples/tf_launch.mlir \
     --transform-interpreter --canonicalize -o $m.launch.mlir
  t1=$(date +%s.%N)
  for chip in sm_80 sm_90; do
    feat=""; [ $chip = sm_90 ] && feat=" features=+ptx80"
    for fmt in isa bin; do
      P="builtin.module(func.func(convert-linalg-to-loops),fold-memref-alias-ops,expand-strided-metadata,lower-affine,canonicalize,cse,gpu-launch-sink-index-computations,gpu-kernel-outlining,convert-scf-to-cf,nvvm-attach-target{chip=$chip$feat O=3},gpu.module(convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts),gpu-to-llvm,gpu-module-to-binary{format=$fmt toolkit=$CUDA})"
      a=$(date +%s.%N)
      $M $m.launch.mlir --pass-pipeline="$P" -o $m.$chip.$fmt.mlir
      b=$(date +%s.%N)
      echo "$m $chip $fmt: $(grep -c '^  gpu.binary' $m.$chip.$fmt.mlir) binaries, $(echo "$b - $a" | bc) s"
    done
    rm -rf ptx.$m.$chip; python3 $T/extract_gpu_objects.py $m.$chip.isa.mlir ptx.$m.$chip > /dev/null
    ok=0; bad=0
    for f in ptx.$m.$chip/*.ptx; do
      if nice -n 19 ptxas -arch=$chip $f -o /dev/null 2>/tmp/ptxas.err; then ok=$((ok+1)); else bad=$((bad+1)); echo "  ptxas FAIL $f"; head -2 /tmp/ptxas.err; fi
    done
    echo "$m $chip ptxas: ok=$ok fail=$bad; extern __nv refs: $(cat ptx.$m.$chip/*.ptx | grep -c '\.extern')"
  done
  echo "$m: tiling+mapping $(echo "$t1 - $s" | bc) s; $(grep -c 'gpu.launch ' $m.launch.mlir) launches in $(grep -c 'zero.kernel =' $m.konly.mlir) kernels"
done
