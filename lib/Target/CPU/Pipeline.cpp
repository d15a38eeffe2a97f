//===- Pipeline.cpp - tensor IR to LLVM dialect for the CPU ----*- C++ -*-===//
#include "zero-opt/Target/CPU/CPUTarget.h"

#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Target/CPU/Passes.h"
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::zero;

void cpu::buildCPUMemoryPlan(OpPassManager &pm,
                             const CPULoweringOptions &options) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  // Functions no training pipeline ran on (inference, a model's own
  // Gradient nodes) still hold their softmaxes whole.
  fn.addPass(createZeroDecomposeSoftmax());
  fn.addPass(createZeroClassifyBuffers());
  fn.addPass(tosa::createTosaToLinalgNamed());
  fn.addPass(tosa::createTosaToLinalg());
  fn.addPass(createTosaToArithPass());
  fn.addPass(createTosaToTensorPass());
  pm.addPass(createCanonicalizerPass());
  ZeroCPUFuseElementwiseOptions fuse;
  fuse.recomputeShared = options.recomputeShared || options.simulateGPU;
  pm.addPass(createZeroCPUFuseElementwise(fuse));
  pm.addPass(createCSEPass());
  // The GPU loads no term a constant mask makes zero (a causal softmax's
  // backward sums), once each sum's producers are fused in.
  if (fuse.recomputeShared)
    pm.addNestedPass<func::FuncOp>(cuda::createZeroGPUSkipMaskedTerms());
  pm.addNestedPass<func::FuncOp>(createZeroFoldTransposesIntoMatmuls());
  pm.addPass(createZeroCPUPrepareEntries());
  // On tensors, so that the padded copies are planned as any other.
  // One padded copy of an operand that several GEMMs pad alike.
  if (options.padGemmDims || options.simulateGPU) {
    pm.addNestedPass<func::FuncOp>(cuda::createZeroGPUPadGemmDims());
    pm.addNestedPass<func::FuncOp>(createCSEPass());
  }
  // 16-bit GEMMs round their own sums: no f32 product in memory.
  pm.addNestedPass<func::FuncOp>(createZeroRoundMatmulResults());
  // A causal attention's GEMMs skip the blocks its mask hides.
  pm.addNestedPass<func::FuncOp>(createZeroSplitMaskedMatmuls());
  // cuBLAS adds a bias broadcast into C to the product (beta = 1).
  if (options.padGemmDims || options.simulateGPU)
    pm.addNestedPass<func::FuncOp>(cuda::createZeroGPUBiasIntoGemms());
  pm.addNestedPass<func::FuncOp>(createZeroCPUSplitEmptyTensors());
  // After the split, so that the padded buffer is the producer's own.
  if (options.padGemmDims || options.simulateGPU)
    pm.addNestedPass<func::FuncOp>(cuda::createZeroGPUPadInPlace());
  // Identity layouts at function boundaries so the entry can take plain
  // pointers; results become out-parameters the runtime owns.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createZeroCPUDropInPlaceResults());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  // The attention gradients' fresh buffers, copied into a concatenation.
  pm.addNestedPass<func::FuncOp>(createZeroElideDestinationCopies());
  // The schedule belongs to the zero dialect; the CPU maps its requests
  // onto the runtime's communication thread later.
  buildCollectiveSchedule(pm, options.schedule);
  // Buckets send in one call what their members sent in several, each
  // call's ring rounding its share down: the bytes as the runtime sends them.
  pm.addPass(createZeroCommReport());
  pm.addNestedPass<func::FuncOp>(bufferization::createBufferHoistingPass());
  // Upstream's deallocation pipeline, with the buffers that alias nothing
  // split off before its simplification, which is quadratic in the
  // operands of one dealloc.
  pm.addPass(memref::createExpandReallocPass(
      memref::ExpandReallocPassOptions{/*emitDeallocs=*/false}));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createZeroCPUSplitDeallocs());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  buildReleaseAndPrefetch(pm, options.schedule);
  pm.addPass(createZeroCPUMemoryReport());
}

void cpu::buildCPULowering(OpPassManager &pm,
                           const CPULoweringOptions &options) {
  buildCPUMemoryPlan(pm, options);
  pm.addPass(createZeroLinalgToBLAS());
  // Bucket packing becomes copies here; kernels formed after it hold them,
  // so the step keeps no loops.
  pm.addPass(createConvertZeroToRuntime());
  // The GPU step's own scalar handling, so the CPU runs it too.
  if (options.simulateGPU) {
    pm.addPass(cuda::createZeroGPUScalarCopies());
    pm.addPass(cuda::createZeroGPUSplitReductions());
    pm.addPass(cuda::createZeroGPUOnlineSoftmax());
    pm.addPass(cuda::createZeroGPURowGroups());
    pm.addPass(cuda::createZeroGPUGroupLaunches());
  }
  pm.addPass(createZeroFormKernels());
  if (options.simulateGPU) {
    // The GPU's kernels, run on the CPU: no reassociated sums, a GPU thread
    // reduces in loop order.
    pm.addPass(cuda::createZeroGPUMapKernels());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createForallToForLoopPass());
  }
  pm.addPass(createZeroCPUKernelNoAlias());
  if (!options.simulateGPU)
    pm.addNestedPass<func::FuncOp>(createZeroCPULaneReductions());
  pm.addPass(createZeroCPUTrackMemory());
  pm.addPass(createZeroCPUEntryPoint());
  pm.addNestedPass<func::FuncOp>(createZeroCPUExpandStridedCopies());
  pm.addPass(createConvertLinalgToLoopsPass());
  if (options.simulateGPU) {
    pm.addPass(cuda::createZeroGPUGuardLoads());
    pm.addPass(cuda::createZeroGPUBatchLoads());
  }
  // 16-bit floats compute in f32, one rounding per op (x86 has no bf16
  // arithmetic, and fp16 only with AVX512-FP16), kept through later folds;
  // the math functions then take the f32 approximations.
  math::MathExtendToSupportedTypesOptions extend;
  pm.addPass(math::createMathExtendToSupportedTypes(extend));
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(createZeroKeep16BitRounding());
  pm.addNestedPass<func::FuncOp>(createZeroCPUApproximateMath());
  pm.addPass(createZeroCPUExpandBF16());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createZeroApplyNoAlias());
  pm.addPass(createZeroCPUBF16MemoryAsBits());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void cpu::registerCPUPipelines() {
  PassPipelineRegistration<CPULoweringOptions>(
      "zero-cpu-lower",
      "Lower tensor-level IR (TOSA/linalg/tensor) to the LLVM dialect with "
      "the C ABI entries of the zero.entry functions, scheduling the "
      "collectives on the way",
      buildCPULowering);
  PassPipelineRegistration<CPULoweringOptions>(
      "zero-cpu-memory-plan",
      "Bufferize, schedule and plan the memory of the zero.entry functions "
      "(module attribute zero.memory), without generating code",
      buildCPUMemoryPlan);
}
