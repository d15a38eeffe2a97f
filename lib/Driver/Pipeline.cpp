//===- Pipeline.cpp - the compile's stages, model to LLVM -----------------===//
#include "zero-opt/Driver/Pipeline.h"

#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Dialect/Zero/AutoDiff/AutoDiff.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Target/CPU/Passes.h"
#include "zero-opt/Target/CUDA/CUDATarget.h"
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

#include <algorithm>
#include <limits>

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
  // gpu-module-to-binary serializes through these.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllToLLVMIRTranslations(registry);
}

void mlir::zero::registerCompilerPasses() {
  registerAllPasses();
  registerZeroConversionPasses();
  registerZeroTransformsPasses();
  registerZeroPipelines();
  cpu::registerZeroCPUPasses();
  cpu::registerCPUPipelines();
  cuda::registerZeroCUDAPasses();
  cuda::registerCUDAPipelines();
  cuda::registerCUDALoweringPipeline();
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
  o.optimizer =
      symbolizeOptimizerKind(c.optimizer).value_or(OptimizerKind::adamw);
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
  o.rematBudget = c.activationBudget;
  o.rematLeastPeak = c.leastActivationPeak;
  o.rematHardware = options.hardware;
  o.rematMatmulPrecision = options.precision;
  o.rematGPU = options.cuda;
  // The CUDA target has tensor-core attention kernels.
  o.formAttention = options.cuda;
  o.precision = c.precision;
  o.reduceInF32 = c.commDataType == "fp32";
}

/// The schedule's options from the compile's training settings; every
/// target schedules the same way.
static void scheduleOptions(const CompileOptions &options, ScheduleOptions &o) {
  const TrainingConfig &c = options.training;
  o.overlapComm = c.overlapComm;
  o.reduceBucketSize = c.reduceBucketElements;
  o.allgatherBucketSize = c.allgatherBucketElements;
  o.prefetchBucketSize = c.prefetchElements;
  o.maxLiveParameters = c.maxLiveParameters;
}

void mlir::zero::cpuLoweringOptions(const CompileOptions &options,
                                    cpu::CPULoweringOptions &o) {
  scheduleOptions(options, o.schedule);
  o.simulateGPU = options.simulateGPU;
  // A plan for the CUDA target (--report with --target=cuda) fuses as its
  // lowering does.
  o.recomputeShared = options.cuda;
  o.padGemmDims = options.cuda;
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

/// Runs a CPU pipeline builder with the compile's lowering options.
static LogicalResult runCPUPipeline(
    ModuleOp module, const CompileOptions &options,
    void (*build)(OpPassManager &, const cpu::CPULoweringOptions &)) {
  PassManager pm(module.getContext());
  cpu::CPULoweringOptions lowering;
  cpuLoweringOptions(options, lowering);
  build(pm, lowering);
  TimingScope t = phase(options, "lowering");
  timePasses(pm, t);
  return pm.run(module);
}

namespace {
/// One planned trial of the step at an activation budget.
struct BudgetTrial {
  int64_t peak = 0;      ///< the plan's per-rank peak
  DictionaryAttr solver; ///< zero-rematerialize's figures
};
} // namespace

/// Builds and plans a copy of `module` with the activations held to
/// `activationBudget` bytes.
static FailureOr<BudgetTrial> planTrial(ModuleOp module,
                                        const CompileOptions &options,
                                        int64_t activationBudget) {
  OwningOpRef<ModuleOp> copy = module.clone();
  CompileOptions trial = options;
  trial.training.activationBudget = activationBudget;
  trial.timing = nullptr;
  PassManager pm(module.getContext());
  TrainingPipelineOptions pipeline;
  trainingPipelineOptions(trial, pipeline);
  buildTrainingPipeline(pm, pipeline);
  if (failed(pm.run(*copy)))
    return failure();
  BudgetTrial result;
  if (auto fn = copy->lookupSymbol<func::FuncOp>("train_step"))
    if (auto remat = fn->getAttrOfType<DictionaryAttr>("zero.remat"))
      result.solver = remat.getAs<DictionaryAttr>("solver");
  if (!result.solver ||
      failed(runCPUPipeline(*copy, trial, cpu::buildCPUMemoryPlan)))
    return failure();
  auto memory = (*copy)->getAttrOfType<DictionaryAttr>("zero.memory");
  auto step = memory ? memory.getAs<DictionaryAttr>("train_step") : nullptr;
  auto peak = step ? step.getAs<IntegerAttr>("peak") : nullptr;
  if (!peak)
    return failure();
  result.peak = peak.getInt();
  return result;
}

/// --memory-budget: the largest activation budget whose planned step
/// fits. The model counts activations only, so the rest of the plan
/// (model states, gradients, buffers, gathered parameters) is measured
/// by planning: start from the activations the budget leaves beside the
/// rest of the plan when nothing is recomputed, move by the overshoot,
/// then bisect between the last budgets that failed and fit.
LogicalResult mlir::zero::fitMemoryBudget(ModuleOp module,
                                          CompileOptions &options) {
  TimingScope t = phase(options, "memory budget");
  TrainingConfig &c = options.training;
  int64_t target = c.memoryBudget;
  auto i64 = [](DictionaryAttr d, StringRef key) {
    return d.getAs<IntegerAttr>(key).getInt();
  };
  constexpr int64_t kKeepAll = std::numeric_limits<int64_t>::max();
  FailureOr<BudgetTrial> all = planTrial(module, options, kKeepAll);
  if (failed(all))
    return failure();
  if (all->peak <= target) {
    c.activationBudget = kKeepAll;
    return success();
  }
  int64_t keepAll = i64(all->solver, "keep_all_peak");
  int64_t least = i64(all->solver, "least_peak");
  // Solved once: the later plans reuse it.
  c.leastActivationPeak = least;
  FailureOr<BudgetTrial> min = planTrial(module, options, least);
  if (failed(min))
    return failure();
  if (min->peak > target)
    return module.emitError()
           << "--memory-budget=" << target
           << ": no choice of recomputed activations fits the step in that "
              "many bytes per rank; the least budget that works is "
           << min->peak
           << " bytes (its activations at their least peak); raise the "
              "budget, or add ranks or a ZeRO stage";
  // fits: the largest budget seen to fit; fails: the smallest seen not to
  // (within 1/128 of the range, or 8 more plans). A failed trial whose
  // activations peak at P below its budget fails for every budget from P
  // up (the solver picks the same choice there), so the next trial goes
  // below P by the overshoot.
  int64_t fits = least, fails = keepAll;
  int64_t next = keepAll - (all->peak - target);
  for (int round = 0; round < 8 && fails - fits > (keepAll - least) / 128;
       ++round) {
    if (next <= fits || next >= fails)
      next = fits + (fails - fits) / 2;
    FailureOr<BudgetTrial> trial = planTrial(module, options, next);
    if (failed(trial))
      return failure();
    if (trial->peak <= target) {
      fits = next;
      next = fits + (fails - fits) / 2;
    } else {
      fails = std::min(next, i64(trial->solver, "peak"));
      next = fails - (trial->peak - target);
    }
  }
  c.activationBudget = fits;
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

  if (c.remat == "budget" && failed(fitMemoryBudget(module, options)))
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

LogicalResult mlir::zero::lowerStepToLLVM(ModuleOp module,
                                          const CompileOptions &options) {
  if (!options.cuda)
    return runCPUPipeline(module, options, cpu::buildCPULowering);
  PassManager pm(module.getContext());
  cuda::CUDALoweringOptions lowering;
  scheduleOptions(options, lowering.schedule);
  lowering.chips = options.gpuArch;
  lowering.hostKernels = options.hostKernels;
  // --compile-threads bounds ptxas's threads too.
  if (options.compileThreads)
    lowering.ptxasOptions = cuda::ptxasThreadOptions(options.compileThreads);
  cuda::buildCUDALowering(pm, lowering);
  TimingScope t = phase(options, "lowering");
  timePasses(pm, t);
  return pm.run(module);
}

LogicalResult mlir::zero::planStepMemory(ModuleOp module,
                                         const CompileOptions &options) {
  return runCPUPipeline(module, options, cpu::buildCPUMemoryPlan);
}
