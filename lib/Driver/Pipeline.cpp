//===- Pipeline.cpp - the compile's stages, model to LLVM -----------------===//
#include "zero-opt/Driver/Pipeline.h"

#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Dialect/Zero/AutoDiff/AutoDiff.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::zero;

std::string mlir::zero::planName(func::FuncOp fn) {
  return fn.getName() == "main" ? "forward" : fn.getName().str();
}

void mlir::zero::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAutoDiffModels(registry);
  registerZeroBufferizationModels(registry);
  registry.insert<ZeroDialect>();
}

void mlir::zero::registerCompilerPasses() {
  registerAllPasses();
  registerZeroConversionPasses();
  registerZeroTransformsPasses();
  registerZeroPipelines();
  cpu::registerZeroCPUPasses();
  cpu::registerCPUPipelines();
}

/// A phase of the compile, timed under the compile's timer when it has one.
static TimingScope phase(const CompileOptions &options, StringRef name) {
  return options.timing ? options.timing->nest(name) : TimingScope();
}

/// Times each pass of `pm` under `scope` when that is timed.
static void timePasses(PassManager &pm, TimingScope &scope) {
  if (scope)
    pm.enableTiming(scope);
}

/// The importer's view of a compile's options.
static ONNXImportOptions importOptions(const CompileOptions &options) {
  ONNXImportOptions importOpts = options.import;
  importOpts.batchSize = options.training.microBatch;
  return importOpts;
}

/// An import that no training pipeline follows: its functions run alone,
/// so the replica ops of a model's Gradient or SyncBatchNorm are the
/// identity (a replica count of 1).
static LogicalResult cleanUpImport(ModuleOp module) {
  PassManager pm(module.getContext());
  buildImportCleanup(pm);
  pm.addNestedPass<func::FuncOp>(createZeroPartitionDataParallel());
  pm.addPass(createCanonicalizerPass());
  return pm.run(module);
}

OwningOpRef<ModuleOp> mlir::zero::importModel(MLIRContext *ctx,
                                              StringRef modelPath,
                                              const CompileOptions &options,
                                              ParamValues &params) {
  OwningOpRef<ModuleOp> module =
      importONNXModel(ctx, modelPath, importOptions(options), &params);
  if (!module || failed(cleanUpImport(*module)))
    return nullptr;
  return module;
}

void mlir::zero::trainingPipelineOptions(const CompileOptions &options,
                                         TrainingPipelineOptions &o) {
  const TrainingConfig &c = options.training;
  o.funcName = options.import.funcName;
  o.loss = options.loss;
  o.optimizer = symbolizeOptimizerKind(c.optimizer).value_or(
      OptimizerKind::adamw);
  o.beta1 = c.beta1;
  o.beta2 = c.beta2;
  o.eps = c.epsilon();
  o.weightDecay = c.weightDecay;
  o.momentum = c.momentum;
  o.dampening = c.dampening;
  o.nesterov = c.nesterov;
  o.lrDecay = c.lrDecay;
  o.initialAccumulator = c.initialAccumulator;
  o.accumulation = c.accumulation;
  o.clip = c.clip;
  o.stage = c.stage;
  o.worldSize = options.worldSize;
  o.persistenceThreshold = c.persistenceThreshold;
  o.maxReuseDistance = c.maxReuseDistance;
  o.maxLiveParameters = c.maxLiveParameters;
  o.remat = symbolizeRematPolicy(c.remat).value_or(RematPolicy::none);
  o.rematSegments = c.rematSegments;
}

void mlir::zero::cpuLoweringOptions(const CompileOptions &options,
                                    cpu::CPULoweringOptions &o) {
  const TrainingConfig &c = options.training;
  o.schedule.overlapComm = c.overlapComm;
  o.schedule.reduceBucketSize = c.reduceBucketElements;
  o.schedule.allgatherBucketSize = c.allgatherBucketElements;
  o.schedule.prefetchBucketSize = c.prefetchElements;
  o.schedule.maxLiveParameters = c.maxLiveParameters;
}

/// Whether the forward function has an output to train on.
static bool hasLoss(func::FuncOp fn, StringRef lossName) {
  for (unsigned i = 0; i < fn.getNumResults(); ++i) {
    auto t = cast<RankedTensorType>(fn.getResultTypes()[i]);
    auto name = fn.getResultAttrOfType<StringAttr>(i, kNameAttr);
    if (!lossName.empty()) {
      if (name && name.getValue() == lossName)
        return true;
      continue;
    }
    if (t.getNumElements() == 1 && isa<FloatType>(t.getElementType()))
      return true;
  }
  return false;
}

/// Resolves the batch settings against the model as DeepSpeed does:
/// train_batch_size = micro-batch x gradient accumulation x world size,
/// deriving the accumulation steps when only the total is given.
static LogicalResult resolveBatch(func::FuncOp fn, TrainingConfig &c,
                                  int64_t worldSize) {
  int64_t micro = 0;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto role = fn.getArgAttrOfType<RoleAttr>(i, kRoleAttr);
    if (!role || role.getValue() != Role::input)
      continue;
    auto t = cast<RankedTensorType>(fn.getArgumentTypes()[i]);
    if (t.getRank() == 0)
      continue;
    auto name = fn.getArgAttrOfType<StringAttr>(i, kNameAttr);
    if (c.microBatch && t.getDimSize(0) != c.microBatch)
      return fn.emitError()
             << "train_micro_batch_size_per_gpu is " << c.microBatch
             << " but input '" << name.getValue() << "' has batch dimension "
             << t.getDimSize(0)
             << "; export the model with that batch size or a symbolic one";
    micro = t.getDimSize(0);
  }
  if (!c.trainBatch || !micro)
    return success();
  if (!c.accumulationSet) {
    if (c.trainBatch % (micro * worldSize))
      return fn.emitError() << "train_batch_size " << c.trainBatch
                            << " is not a multiple of micro-batch x world "
                               "size = "
                            << micro << " x " << worldSize;
    c.accumulation = c.trainBatch / (micro * worldSize);
  }
  if (c.trainBatch != micro * c.accumulation * worldSize)
    return fn.emitError() << "train_batch_size " << c.trainBatch
                          << " is not micro-batch x gradient accumulation x "
                             "world size = "
                          << micro << " x " << c.accumulation << " x "
                          << worldSize;
  return success();
}

LogicalResult mlir::zero::buildTraining(ModuleOp module,
                                        CompileOptions &options,
                                        bool &trained) {
  trained = false;
  auto fn = module.lookupSymbol<func::FuncOp>(options.import.funcName);
  if (!fn || options.mode == CompileMode::Infer) {
    if (auto ts = module.lookupSymbol<func::FuncOp>("train_step"))
      ts.erase();
    return cleanUpImport(module);
  }
  // An ONNX training model brings its own step (TrainingInfoProto).
  if (module->hasAttr("zero.training")) {
    if (options.training.stage != 0)
      return module.emitError()
             << "ZeRO stage " << options.training.stage
             << ": the model brings its own optimizer (TrainingInfoProto), "
                "whose state zero-opt does not partition; it trains data "
                "parallel at stage 0 (set --stage or zero_optimization.stage "
                "to 0)";
    trained = true;
    options.training.optimizer = "onnx";
    PassManager pm(module.getContext());
    buildAlgorithmPipeline(pm, options.worldSize);
    TimingScope t = phase(options, "training step");
    timePasses(pm, t);
    return pm.run(module);
  }
  if (options.mode == CompileMode::Auto && !hasLoss(fn, options.loss))
    return cleanUpImport(module);
  TrainingConfig &c = options.training;
  std::string error;
  if (!validateTrainingConfig(c, error))
    return module.emitError() << error;
  if (failed(resolveBatch(fn, c, options.worldSize)))
    return failure();

  PassManager pm(module.getContext());
  TrainingPipelineOptions pipeline;
  trainingPipelineOptions(options, pipeline);
  buildTrainingPipeline(pm, pipeline);
  TimingScope t = phase(options, "training step");
  timePasses(pm, t);
  if (failed(pm.run(module)))
    return failure();
  trained = true;
  return success();
}

OwningOpRef<ModuleOp> mlir::zero::buildStep(MLIRContext *ctx,
                                            StringRef modelPath,
                                            CompileOptions &options,
                                            ParamValues &params) {
  // The training pipeline cleans the import up itself, so that it runs
  // exactly what `zero-opt --zero-training-pipeline` runs on the import.
  OwningOpRef<ModuleOp> module;
  {
    TimingScope t = phase(options, "import");
    module = importONNXModel(ctx, modelPath, importOptions(options), &params);
  }
  bool trained;
  if (!module || failed(buildTraining(*module, options, trained)))
    return nullptr;
  return module;
}

/// Runs a CPU pipeline builder with the compile's lowering options.
static LogicalResult
runCPUPipeline(ModuleOp module, const CompileOptions &options,
               void (*build)(OpPassManager &,
                             const cpu::CPULoweringOptions &)) {
  PassManager pm(module.getContext());
  cpu::CPULoweringOptions lowering;
  cpuLoweringOptions(options, lowering);
  build(pm, lowering);
  TimingScope t = phase(options, "lowering");
  timePasses(pm, t);
  return pm.run(module);
}

LogicalResult mlir::zero::lowerStepToLLVM(ModuleOp module,
                                          const CompileOptions &options) {
  return runCPUPipeline(module, options, cpu::buildCPULowering);
}

LogicalResult mlir::zero::planStepMemory(ModuleOp module,
                                         const CompileOptions &options) {
  return runCPUPipeline(module, options, cpu::buildCPUMemoryPlan);
}
