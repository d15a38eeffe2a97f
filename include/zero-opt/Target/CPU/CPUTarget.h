//===- CPUTarget.h - lowering and code generation for the CPU ---*- C++ -*-===//
#ifndef ZERO_OPT_TARGET_CPU_CPUTARGET_H
#define ZERO_OPT_TARGET_CPU_CPUTARGET_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include <string>

namespace mlir {
class ModuleOp;
class OpPassManager;
} // namespace mlir

namespace mlir::zero::cpu {

/// Textual pipeline (for a builtin.module pass manager) from tensor-level
/// IR (TOSA, linalg, tensor, arith) to the LLVM dialect, with a C ABI entry
/// for each function marked `zero.entry`.
/// Tensor IR to buffers, up to the memory plan (module attr zero.memory).
std::string memoryPlanPipeline();
/// memoryPlanPipeline, then the LLVM dialect with C ABI entries.
std::string lowerToLLVMPipeline();

/// Registers the named pipeline `zero-cpu-lower` for zero-opt on .mlir input.
void registerCPUPipelines();

/// Translates an LLVM-dialect module to an optimized object file for the host
/// CPU and links it into the shared library `soPath`. The library is written
/// under a temporary name and renamed, so a failure leaves nothing behind.
llvm::Error emitSharedLibrary(ModuleOp module, StringRef soPath,
                              unsigned optLevel = 3);

} // namespace mlir::zero::cpu

#endif
