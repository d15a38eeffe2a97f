//===- CUDATarget.h - kernels to GPU code ----------------------*- C++ -*-===//
#ifndef ZERO_OPT_TARGET_CUDA_CUDATARGET_H
#define ZERO_OPT_TARGET_CUDA_CUDATARGET_H

#include "zero-opt/Dialect/Zero/Transforms/Pipelines.h"

#include "mlir/Pass/PassOptions.h"
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::zero::cuda {

/// The toolkit found when zero-opt was built ("" when none was).
std::string defaultToolkitDir();
/// ptxas's options for `threads` threads of its own (0: one per core),
/// "" where the build's ptxas has no --split-compile (before CUDA 12.4).
std::string ptxasThreadOptions(unsigned threads);

/// Options of the kernels' lowering to device code.
struct GPUKernelLoweringOptions
    : public PassPipelineOptions<GPUKernelLoweringOptions> {
  Option<std::string> chips{
      *this, "chips",
      llvm::cl::desc("GPU architectures, comma-separated (sm_80, sm_90): "
                     "one object each in the gpu.binary"),
      llvm::cl::init("sm_80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Device code: bin (cubin), isa (PTX) or fatbin"),
      llvm::cl::init("bin")};
  Option<bool> hostKernels{
      *this, "host-kernels",
      llvm::cl::desc("Also a host copy of every kernel "
                     "(zero-gpu-host-kernels), for the CUDA host emulator"),
      llvm::cl::init(false)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit folder (ptxas, libdevice); default: the "
                     "one found at build time"),
      llvm::cl::init(defaultToolkitDir())};
  Option<std::string> ptxasOptions{
      *this, "ptxas-options",
      llvm::cl::desc("Options for ptxas; default: its own threads on every "
                     "core where the build's toolkit has them (12.4 on)"),
      llvm::cl::init(ptxasThreadOptions(0))};
};

/// From the kernels of zero-form-kernels to a gpu.binary: zero-gpu-map-
/// kernels, loops, zero-gpu-outline-kernels, NVVM, and the toolkit's
/// ptxas. The kernel functions are left calling gpu.launch_func.
void buildGPUKernelLowering(OpPassManager &pm,
                            const GPUKernelLoweringOptions &options);

/// Registers `zero-gpu-lower-kernels`.
void registerCUDAPipelines();

/// Options of the whole CUDA lowering: the schedule's, the GPU and the
/// toolkit.
struct CUDALoweringOptions : public PassPipelineOptions<CUDALoweringOptions> {
  ScheduleOptions schedule{*this};
  Option<std::string> chips{
      *this, "chips",
      llvm::cl::desc("GPU architectures the kernels are assembled for, "
                     "comma-separated (sm_80, sm_90); several make one fat "
                     "binary"),
      llvm::cl::init("sm_80")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit folder (ptxas, libdevice); default: the "
                     "one found at build time"),
      llvm::cl::init(defaultToolkitDir())};
  Option<std::string> ptxasOptions{
      *this, "ptxas-options",
      llvm::cl::desc("Options for ptxas; default: its own threads on every "
                     "core where the build's toolkit has them (12.4 on)"),
      llvm::cl::init(ptxasThreadOptions(0))};
  Option<bool> hostKernels{
      *this, "host-kernels",
      llvm::cl::desc("Also a host copy of every kernel "
                     "(zero-gpu-host-kernels), for the CUDA host emulator"),
      llvm::cl::init(false)};
};

/// Tensor-level IR to the LLVM dialect for an NVIDIA GPU: the CPU target's
/// memory plan and schedule, kernels, the arena, device code for `chips`
/// (a gpu.binary, a fat binary for several) and host code that queues everything on the CUDA
/// runtime's streams, with the C ABI entries of the zero.entry functions.
void buildCUDALowering(OpPassManager &pm, const CUDALoweringOptions &options);

/// Registers `zero-cuda-lower`.
void registerCUDALoweringPipeline();

} // namespace mlir::zero::cuda

#endif
