//===- Pipeline.cpp - tensor IR to LLVM dialect for the CPU ----*- C++ -*-===//
#include "zero-opt/Target/CPU/CPUTarget.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

std::string zero::cpu::memoryPlanPipeline() {
  // Bufferize with identity layouts at function boundaries so the entry can
  // take plain pointers; results become out-parameters the runtime owns.
  return std::string(
      "func.func(zero-classify-buffers,tosa-to-linalg-named,tosa-to-linalg,"
      "tosa-to-arith,tosa-to-tensor),"
      "canonicalize,zero-cpu-fuse-elementwise,cse,"
      "zero-cpu-prepare-entries,func.func(zero-cpu-split-empty-tensors),"
      "one-shot-bufferize{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "zero-cpu-drop-inplace-results,"
      "buffer-results-to-out-params{modify-public-functions "
      "hoist-static-allocs},"
      "canonicalize,zero-linalg-to-blas,zero-cpu-bucket-collectives,"
      "convert-zero-to-runtime,"
      "zero-cpu-schedule-collectives,"
      "func.func(buffer-hoisting),"
      "buffer-deallocation-pipeline,zero-cpu-release-early,"
      "zero-cpu-prefetch-gathers,"
      "zero-cpu-memory-report");
}

std::string zero::cpu::lowerToLLVMPipeline() {
  return memoryPlanPipeline() +
         ",zero-cpu-track-memory,"
         "zero-cpu-entry-point,"
         "func.func(zero-cpu-expand-strided-copies),"
         "convert-linalg-to-loops,expand-strided-metadata,lower-affine,"
         "convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm,"
         "convert-to-llvm,"
         "reconcile-unrealized-casts,canonicalize";
}

void zero::cpu::registerCPUPipelines() {
  PassPipelineRegistration<>(
      "zero-cpu-lower",
      "Lower tensor-level IR (TOSA/linalg/tensor) to the LLVM dialect with "
      "the C ABI entries of the zero.entry functions",
      [](OpPassManager &pm) {
        if (failed(parsePassPipeline(lowerToLLVMPipeline(), pm)))
          llvm::report_fatal_error("invalid zero-cpu-lower pipeline");
      });
}
