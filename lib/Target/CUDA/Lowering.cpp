//===- Lowering.cpp - tensor IR to host and device code -------*- C++ -*-===//
#include "zero-opt/Target/CUDA/CUDATarget.h"

#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Target/CPU/CPUTarget.h"
#include "zero-opt/Target/CPU/Passes.h"
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::zero;

void cuda::buildCUDALowering(OpPassManager &pm,
                             const CUDALoweringOptions &options) {
  // Plan, schedule, GEMMs and collectives are the CPU target's: they do not
  // depend on where the kernels run.
  cpu::CPULoweringOptions plan;
  plan.schedule.overlapComm = options.schedule.overlapComm;
  plan.schedule.reduceBucketSize = options.schedule.reduceBucketSize;
  plan.schedule.allgatherBucketSize = options.schedule.allgatherBucketSize;
  plan.schedule.prefetchBucketSize = options.schedule.prefetchBucketSize;
  plan.schedule.maxLiveParameters = options.schedule.maxLiveParameters;
  plan.recomputeShared = true;
  plan.padGemmDims = true;
  cpu::buildCPUMemoryPlan(pm, plan);
  pm.addPass(createZeroLinalgToBLAS());
  pm.addPass(createConvertZeroToRuntime());
  pm.addPass(cuda::createZeroGPUScalarCopies());
  pm.addPass(cuda::createZeroGPUSplitReductions());
  pm.addPass(cuda::createZeroGPUOnlineSoftmax());
  pm.addPass(cuda::createZeroGPURowGroups());
  pm.addPass(cuda::createZeroGPUGroupLaunches());
  pm.addPass(createZeroFormKernels());
  // Launch groups reorder small buffers' lifetimes: the plan reports the
  // program the arena lays out.
  pm.addPass(cpu::createZeroCPUMemoryReport());
  cpu::ZeroCPUTrackMemoryOptions track;
  track.kernels = false;
  pm.addPass(cpu::createZeroCPUTrackMemory(track));
  pm.addPass(cuda::createZeroGPUArena());
  pm.addPass(cpu::createZeroCPUEntryPoint());

  GPUKernelLoweringOptions kernels;
  kernels.chips = options.chips.getValue();
  kernels.toolkit = options.toolkit.getValue();
  kernels.ptxasOptions = options.ptxasOptions.getValue();
  kernels.format = "bin";
  kernels.hostKernels = options.hostKernels.getValue();
  buildGPUKernelLowering(pm, kernels);
  cuda::ZeroGPUFatBinaryOptions fat;
  fat.toolkit = options.toolkit.getValue();
  pm.addPass(cuda::createZeroGPUFatBinary(fat));
  pm.addPass(cuda::createZeroGPURuntimeCalls());
  pm.addPass(cuda::createZeroGPUTraceNodes());

  // Host code: the step's address arithmetic and scalar bookkeeping, the
  // runtime calls and the launches (upstream's gpu-to-llvm, whose mgpu*
  // calls the CUDA runtime provides).
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void cuda::registerCUDALoweringPipeline() {
  PassPipelineRegistration<CUDALoweringOptions>(
      "zero-cuda-lower",
      "Lower tensor-level IR to the LLVM dialect for an NVIDIA GPU: kernels "
      "as one cubin, buffers in the arena, GEMMs on cuBLAS and collectives "
      "on NCCL, queued on the CUDA runtime's streams",
      buildCUDALowering);
}
