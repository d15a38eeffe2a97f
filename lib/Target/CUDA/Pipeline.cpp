//===- Pipeline.cpp - kernels to GPU code ---------------------*- C++ -*-===//
#include "zero-opt/Target/CUDA/CUDATarget.h"

#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::zero;

std::string cuda::defaultToolkitDir() { return ZERO_CUDA_TOOLKIT_DIR; }
std::string cuda::ptxasThreadOptions(unsigned threads) {
  return ZERO_PTXAS_SPLIT_COMPILE ? "--split-compile " + std::to_string(threads)
                                  : std::string();
}

void cuda::buildGPUKernelLowering(OpPassManager &pm,
                                  const GPUKernelLoweringOptions &options) {
  pm.addPass(createZeroGPUMapAttention());
  pm.addPass(createZeroGPUMapKernels());
  pm.addPass(createCanonicalizerPass());
  // Device code has no memrefCopy or strided descriptors to call out to:
  // loops and plain address arithmetic before outlining.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createFoldMemRefAliasOpsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createZeroGPUGuardLoads());
  pm.addPass(createZeroGPUBatchLoads());
  pm.addPass(createZeroGPUOutlineKernels());
  if (options.hostKernels)
    pm.addPass(createZeroGPUHostKernels());
  pm.addPass(createSCFToControlFlowPass());
  // One target per chip: the device code is translated once and each
  // chip gets its own ptxas run and object.
  SmallVector<StringRef> chips;
  StringRef(options.chips).split(chips, ',', -1, /*KeepEmpty=*/false);
  for (StringRef chip : chips) {
    GpuNVVMAttachTargetOptions target;
    target.chip = chip.trim().str();
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createZeroGPUBF16MmaToNVVM());
  device.addPass(createConvertNVGPUToNVVMPass());
  device.addPass(createConvertGpuOpsToNVVMOps());
  device.addPass(createZeroApplyNoAlias());
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  // Without a toolkit path libdevice is silently left out and ptxas fails
  // on its functions later; the build's toolkit is the default.
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.toolkit;
  binary.compilationTarget = options.format;
  binary.cmdOptions = options.ptxasOptions;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void cuda::registerCUDAPipelines() {
  PassPipelineRegistration<GPUKernelLoweringOptions>(
      "zero-gpu-lower-kernels",
      "Lower the kernels of zero-form-kernels to one gpu.binary for an "
      "NVIDIA GPU (blocks and threads, NVVM, ptxas), the kernel functions "
      "launching its functions",
      buildGPUKernelLowering);
}
