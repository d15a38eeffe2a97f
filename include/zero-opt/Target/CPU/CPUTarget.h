//===- CPUTarget.h - lowering and code generation for the CPU ---*- C++ -*-===//
#ifndef ZERO_OPT_TARGET_CPU_CPUTARGET_H
#define ZERO_OPT_TARGET_CPU_CPUTARGET_H

#include "zero-opt/Dialect/Zero/Transforms/Pipelines.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
class OpPassManager;
class TimingScope;
} // namespace mlir

namespace mlir::zero::cpu {

/// Options of the CPU lowering: the communication schedule's.
struct CPULoweringOptions : public PassPipelineOptions<CPULoweringOptions> {
  ScheduleOptions schedule{*this};
  Option<bool> simulateGPU{
      *this, "simulate-gpu",
      llvm::cl::desc("Run the kernels as --target=cuda maps them to blocks "
                     "and threads (zero-gpu-map-kernels), the foralls in "
                     "order, and their reductions in loop order"),
      llvm::cl::init(false)};
  Option<bool> recomputeShared{
      *this, "recompute-shared",
      llvm::cl::desc("Fuse shared elementwise producers into each user "
                     "(zero-cpu-fuse-elementwise): the CUDA target's plan"),
      llvm::cl::init(false)};
  Option<bool> padGemmDims{
      *this, "pad-gemm-dims",
      llvm::cl::desc("Pad 16-bit GEMMs' odd dimensions to multiples of 8 "
                     "(zero-gpu-pad-gemm-dims): the CUDA target's plan"),
      llvm::cl::init(false)};
};

/// Tensor-level IR (TOSA, linalg, tensor, arith) to scheduled buffers, up
/// to the memory plan (module attribute zero.memory).
void buildCPUMemoryPlan(OpPassManager &pm, const CPULoweringOptions &options);
/// buildCPUMemoryPlan, then the LLVM dialect with a C ABI entry for each
/// function marked `zero.entry`.
void buildCPULowering(OpPassManager &pm, const CPULoweringOptions &options);

/// Registers `zero-cpu-lower` and `zero-cpu-memory-plan`.
void registerCPUPipelines();

/// How the step library is built.
struct CodegenOptions {
  unsigned optLevel = 2;
  /// Folder of compiled objects, keyed by a hash of their IR and target;
  /// empty: no cache.
  std::string cacheDir;
  /// Compile threads; 0: one per hardware thread.
  unsigned threads = 0;
  /// One object per kernel (CPU kernels); off keeps the module whole (the
  /// CUDA target's host code, whose launches name its gpu.binary).
  bool splitKernels = true;
  /// Further arguments of the link (libraries, rpath, --no-undefined).
  std::vector<std::string> linkArgs;
};

/// What code generation did, for the compile-time report.
struct CodegenStats {
  int64_t kernels = 0; ///< kernel objects
  int64_t objects = 0; ///< kernels and the rest of the module
  int64_t cached = 0;  ///< objects taken from the cache
};

/// The object cache's default folder: $ZERO_OPT_CACHE_DIR, else
/// $XDG_CACHE_HOME/zero-opt/objects, else ~/.cache/zero-opt/objects.
std::string defaultObjectCacheDir();

/// Translates an LLVM-dialect module to optimized objects for the host CPU,
/// one per kernel (functions marked `zero.kernel`) and one for the rest,
/// compiled in parallel and taken from the cache when there, and links them
/// into the shared library `soPath`. The library is written under a
/// temporary name and renamed, so a failure leaves nothing behind.
llvm::Error emitSharedLibrary(ModuleOp module, StringRef soPath,
                              const CodegenOptions &options,
                              TimingScope &timing,
                              CodegenStats *stats = nullptr);

} // namespace mlir::zero::cpu

#endif
