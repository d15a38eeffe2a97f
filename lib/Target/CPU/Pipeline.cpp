//===- Pipeline.cpp - tensor IR to LLVM dialect for the CPU ----*- C++ -*-===//
#include "zero-opt/Target/CPU/CPUTarget.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

std::string zero::cpu::lowerToLLVMPipeline(StringRef funcName) {
  // Bufferize with identity layouts at function boundaries so the entry can
  // take plain pointers; results become out-parameters the runtime owns.
  return llvm::formatv(
      "func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,"
      "tosa-to-tensor),"
      "canonicalize,linalg-fuse-elementwise-ops,cse,"
      "one-shot-bufferize{{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map},"
      "buffer-results-to-out-params{{modify-public-functions "
      "hoist-static-allocs},"
      "canonicalize,zero-linalg-to-blas,"
      "func.func(buffer-hoisting,buffer-loop-hoisting),"
      "buffer-deallocation-pipeline,"
      "zero-cpu-entry-point{{func={0}},"
      "func.func(zero-cpu-expand-strided-copies),"
      "convert-linalg-to-loops,lower-affine,convert-scf-to-cf,"
      "convert-math-to-llvm,convert-math-to-libm,expand-strided-metadata,"
      "convert-to-llvm,"
      "reconcile-unrealized-casts,canonicalize",
      funcName);
}

void zero::cpu::registerCPUPipelines() {
  PassPipelineRegistration<>(
      "zero-cpu-lower",
      "Lower tensor-level IR (TOSA/linalg/tensor) to the LLVM dialect with "
      "the C ABI entry of @main",
      [](OpPassManager &pm) {
        if (failed(parsePassPipeline(lowerToLLVMPipeline(), pm)))
          llvm::report_fatal_error("invalid zero-cpu-lower pipeline");
      });
}
