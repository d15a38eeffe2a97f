//===- Pipelines.cpp - typed pipelines of the zero dialect -----*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Transforms/Pipelines.h"

#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::zero;

void zero::buildImportCleanup(OpPassManager &pm) {
  // ONNX Gradient nodes of the model itself become backward computations.
  pm.addNestedPass<func::FuncOp>(createZeroExpandGradients());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void zero::buildAlgorithmPipeline(OpPassManager &pm, int64_t worldSize) {
  buildImportCleanup(pm);
  ZeroPartitionDataParallelOptions dp;
  dp.worldSize = worldSize;
  pm.addNestedPass<func::FuncOp>(createZeroPartitionDataParallel(dp));
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createZeroVerifyCollectives());
  pm.addPass(createZeroCommReport());
}

void zero::buildTrainingPipeline(OpPassManager &pm,
                                 const TrainingPipelineOptions &options) {
  buildImportCleanup(pm);
  if (options.precision != "fp32") {
    ZeroMixedPrecisionOptions mp;
    mp.precision = options.precision;
    pm.addNestedPass<func::FuncOp>(createZeroMixedPrecision(mp));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    // Differentiated, the fused op's backward keeps no [Tq, Tk] tensor.
    if (options.formAttention) {
      pm.addNestedPass<func::FuncOp>(createZeroFormAttention());
      pm.addPass(createCanonicalizerPass());
    }
  }

  ZeroBuildTrainStepOptions step;
  step.funcName = options.funcName;
  step.lossName = options.loss;
  step.optimizer = options.optimizer;
  step.beta1 = options.beta1;
  step.beta2 = options.beta2;
  step.eps = options.eps >= 0
                 ? double(options.eps)
                 : (options.optimizer == OptimizerKind::adagrad ? 1e-10 : 1e-8);
  step.weightDecay = options.weightDecay;
  step.momentum = options.momentum;
  step.dampening = options.dampening;
  step.nesterov = options.nesterov;
  step.lrDecay = options.lrDecay;
  step.initialAccumulator = options.initialAccumulator;
  step.accumulation = options.accumulation;
  step.clip = options.clip;
  // fp16 gradients underflow without a loss scale; bf16's range is fp32's.
  step.lossScaling = options.precision == "fp16";
  pm.addPass(createZeroBuildTrainStep(step));
  pm.addNestedPass<func::FuncOp>(createZeroExpandGradients());
  pm.addNestedPass<func::FuncOp>(createZeroDecomposeSoftmax());
  pm.addPass(createInlinerPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Before the partition, so that stage 3 gathers parameters again for
  // the recomputed segments as for the rest of the backward.
  if (options.remat != RematPolicy::none) {
    ZeroRematerializeOptions remat;
    remat.policy = options.remat;
    remat.segments = options.rematSegments;
    remat.budget = options.rematBudget;
    remat.hardware = options.rematHardware;
    remat.matmulPrecision = options.rematMatmulPrecision;
    remat.gpu = options.rematGPU;
    remat.leastPeak = options.rematLeastPeak;
    pm.addNestedPass<func::FuncOp>(createZeroRematerialize(remat));
  }
  // ZeRO: each stage adds its concern to the previous ones.
  ZeroPartitionDataParallelOptions dp;
  dp.worldSize = options.worldSize;
  dp.reduceInF32 = options.reduceInF32;
  // DDP's overlap; stage 1 reduce-scatters once the backward is done.
  dp.reduceWhenComplete = options.stage == 0;
  pm.addNestedPass<func::FuncOp>(createZeroPartitionDataParallel(dp));
  if (options.stage >= 1)
    pm.addNestedPass<func::FuncOp>(createZeroPartitionOptimizerStates());
  if (options.stage >= 2)
    pm.addNestedPass<func::FuncOp>(createZeroPartitionGradients());
  if (options.stage >= 3) {
    ZeroPartitionParametersOptions pp;
    pp.persistenceThreshold = options.persistenceThreshold;
    pp.maxReuseDistance = options.maxReuseDistance;
    pp.maxLiveParameters = options.maxLiveParameters;
    pm.addNestedPass<func::FuncOp>(createZeroPartitionParameters(pp));
  }
  // The forward hides what the end of the step cannot.
  if ((options.stage == 1 || options.stage == 2) && options.deferParamGathers)
    pm.addNestedPass<func::FuncOp>(createZeroDeferParameterGathers());
  pm.addNestedPass<func::FuncOp>(createZeroLowerOptimizers());
  pm.addPass(createCanonicalizerPass());
  // Updates of gradients reduced early run while the last buckets travel.
  pm.addNestedPass<func::FuncOp>(createZeroOrderByArrival());
  pm.addNestedPass<func::FuncOp>(createZeroVerifyCollectives());
  pm.addPass(createZeroCommReport());
}

ScheduleOptions::ScheduleOptions(mlir::detail::PassOptions &owner)
    : overlapComm(owner, "overlap-comm",
                  llvm::cl::desc("Overlap collectives with compute "
                                 "(overlap_comm)"),
                  llvm::cl::init(deepspeed::kOverlapComm)),
      reduceBucketSize(owner, "reduce-bucket-size",
                       llvm::cl::desc("Elements per reduction bucket "
                                      "(reduce_bucket_size)"),
                       llvm::cl::init(deepspeed::kReduceBucketSize)),
      allgatherBucketSize(owner, "allgather-bucket-size",
                          llvm::cl::desc("Elements per gather bucket "
                                         "(allgather_bucket_size)"),
                          llvm::cl::init(deepspeed::kAllgatherBucketSize)),
      prefetchBucketSize(
          owner, "prefetch-bucket-size",
          llvm::cl::desc("Stage 3: parameter elements gathered ahead of use "
                         "(stage3_prefetch_bucket_size)"),
          llvm::cl::init(deepspeed::kPrefetchBucketSize)),
      maxLiveParameters(
          owner, "max-live-parameters",
          llvm::cl::desc("Stage 3: gathered parameter elements held at once "
                         "(stage3_max_live_parameters)"),
          llvm::cl::init(deepspeed::kMaxLiveParameters)) {}

void zero::buildCollectiveSchedule(OpPassManager &pm,
                                   const ScheduleOptions &options) {
  ZeroBucketCollectivesOptions buckets;
  buckets.reduceBucketSize = options.reduceBucketSize;
  buckets.allgatherBucketSize = options.allgatherBucketSize;
  pm.addPass(createZeroBucketCollectives(buckets));
  // A gathered parameter leaves its bucket straight into its own buffer,
  // and a rounded gradient goes into it straight from its rounding.
  pm.addPass(createZeroUnpackInPlace());
  pm.addPass(createZeroPackInPlace());
  pm.addPass(createZeroAsyncCollectives());
  // Without overlap each wait stays at its start.
  if (options.overlapComm)
    pm.addPass(createZeroScheduleCollectives());
}

void zero::buildReleaseAndPrefetch(OpPassManager &pm,
                                   const ScheduleOptions &options) {
  pm.addPass(createZeroReleaseEarly());
  if (!options.overlapComm)
    return;
  ZeroPrefetchGathersOptions prefetch;
  prefetch.prefetchBucketSize = options.prefetchBucketSize;
  prefetch.maxLiveParameters = options.maxLiveParameters;
  pm.addPass(createZeroPrefetchGathers(prefetch));
}

void zero::registerZeroPipelines() {
  PassPipelineRegistration<TrainingPipelineOptions>(
      "zero-training-pipeline",
      "Forward function to ZeRO-partitioned training step (what zero-opt "
      "runs on an imported model)",
      buildTrainingPipeline);
}
