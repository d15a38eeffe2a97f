//===- CPUTarget.h - lowering and code generation for the CPU ---*- C++ -*-===//
#ifndef ZERO_OPT_TARGET_CPU_CPUTARGET_H
#define ZERO_OPT_TARGET_CPU_CPUTARGET_H

#include "zero-opt/Dialect/Zero/Transforms/Pipelines.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include <string>

namespace mlir {
class ModuleOp;
class OpPassManager;
} // namespace mlir

namespace mlir::zero::cpu {

/// Options of the CPU lowering: the communication schedule's settings, in
/// DeepSpeed's units (elements) and with its defaults.
struct CPULoweringOptions : public PassPipelineOptions<CPULoweringOptions> {
  PassOptions::Option<bool> overlapComm{
      *this, "overlap-comm",
      llvm::cl::desc("Overlap collectives with compute (overlap_comm)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> reduceBucketSize{
      *this, "reduce-bucket-size",
      llvm::cl::desc("Elements per reduction bucket (reduce_bucket_size)"),
      llvm::cl::init(500000000)};
  PassOptions::Option<int64_t> allgatherBucketSize{
      *this, "allgather-bucket-size",
      llvm::cl::desc("Elements per gather bucket (allgather_bucket_size)"),
      llvm::cl::init(500000000)};
  PassOptions::Option<int64_t> prefetchBucketSize{
      *this, "prefetch-bucket-size",
      llvm::cl::desc("Stage 3: parameter elements gathered ahead of use "
                     "(stage3_prefetch_bucket_size)"),
      llvm::cl::init(50000000)};
  PassOptions::Option<int64_t> maxLiveParameters{
      *this, "max-live-parameters",
      llvm::cl::desc("Stage 3: gathered parameter elements held at once "
                     "(stage3_max_live_parameters)"),
      llvm::cl::init(1000000000)};

  ScheduleOptions schedule() const;
};

/// Tensor-level IR (TOSA, linalg, tensor, arith) to scheduled buffers, up
/// to the memory plan (module attribute zero.memory).
void buildCPUMemoryPlan(OpPassManager &pm, const CPULoweringOptions &options);
/// buildCPUMemoryPlan, then the LLVM dialect with a C ABI entry for each
/// function marked `zero.entry`.
void buildCPULowering(OpPassManager &pm, const CPULoweringOptions &options);

/// Registers `zero-cpu-lower` and `zero-cpu-memory-plan`.
void registerCPUPipelines();

/// Translates an LLVM-dialect module to an optimized object file for the host
/// CPU and links it into the shared library `soPath`. The library is written
/// under a temporary name and renamed, so a failure leaves nothing behind.
llvm::Error emitSharedLibrary(ModuleOp module, StringRef soPath,
                              unsigned optLevel = 3);

} // namespace mlir::zero::cpu

#endif
