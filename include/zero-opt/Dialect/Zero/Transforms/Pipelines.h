//===- Pipelines.h - typed pipelines of the zero dialect --------*- C++ -*-===//
//
// The training pipeline (forward function to partitioned training step)
// and the target-independent communication schedule, with typed options,
// so that `zero-opt step.mlir --zero-training-pipeline="..."` runs exactly
// what the compiler runs.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_TRANSFORMS_PIPELINES_H
#define ZERO_OPT_DIALECT_ZERO_TRANSFORMS_PIPELINES_H

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Transforms/DeepSpeedDefaults.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::zero {

/// Options of the training step and its ZeRO partition; the defaults are
/// DeepSpeed's.
struct TrainingPipelineOptions
    : public PassPipelineOptions<TrainingPipelineOptions> {
  PassOptions::Option<std::string> funcName{*this, "func",
                                            llvm::cl::desc("Forward function"),
                                            llvm::cl::init("main")};
  PassOptions::Option<std::string> loss{
      *this, "loss",
      llvm::cl::desc("Loss result name (default: first scalar float)"),
      llvm::cl::init("")};
  PassOptions::Option<OptimizerKind> optimizer{
      *this, "optimizer", llvm::cl::desc("Optimizer"),
      llvm::cl::init(OptimizerKind::adamw),
      llvm::cl::values(
          clEnumValN(OptimizerKind::adamw, "adamw", "AdamW"),
          clEnumValN(OptimizerKind::adam, "adam", "Adam (L2 weight decay)"),
          clEnumValN(OptimizerKind::sgd, "sgd", "SGD with momentum"),
          clEnumValN(OptimizerKind::adagrad, "adagrad", "Adagrad"))};
  PassOptions::Option<double> beta1{*this, "beta1", llvm::cl::desc("beta1"),
                                    llvm::cl::init(0.9)};
  PassOptions::Option<double> beta2{*this, "beta2", llvm::cl::desc("beta2"),
                                    llvm::cl::init(0.999)};
  PassOptions::Option<double> eps{
      *this, "eps", llvm::cl::desc("Epsilon (default: 1e-8, Adagrad 1e-10)"),
      llvm::cl::init(-1.0)};
  PassOptions::Option<double> weightDecay{*this, "weight-decay",
                                          llvm::cl::desc("Weight decay"),
                                          llvm::cl::init(0.0)};
  PassOptions::Option<double> momentum{
      *this, "momentum", llvm::cl::desc("SGD momentum"), llvm::cl::init(0.0)};
  PassOptions::Option<double> dampening{
      *this, "dampening", llvm::cl::desc("SGD dampening"), llvm::cl::init(0.0)};
  PassOptions::Option<bool> nesterov{*this, "nesterov",
                                     llvm::cl::desc("SGD Nesterov momentum"),
                                     llvm::cl::init(false)};
  PassOptions::Option<double> lrDecay{*this, "lr-decay",
                                      llvm::cl::desc("Adagrad lr decay"),
                                      llvm::cl::init(0.0)};
  PassOptions::Option<double> initialAccumulator{
      *this, "initial-accumulator",
      llvm::cl::desc("Adagrad initial accumulator"), llvm::cl::init(0.0)};
  PassOptions::Option<int64_t> accumulation{
      *this, "accumulation", llvm::cl::desc("Micro-batches per optimizer step"),
      llvm::cl::init(1)};
  PassOptions::Option<double> clip{
      *this, "clip", llvm::cl::desc("Gradient clipping norm (0: off)"),
      llvm::cl::init(0.0)};
  PassOptions::Option<int64_t> stage{
      *this, "stage", llvm::cl::desc("ZeRO stage: 0 (DDP), 1, 2 or 3"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> worldSize{*this, "world-size",
                                         llvm::cl::desc("Data-parallel ranks"),
                                         llvm::cl::init(1)};
  PassOptions::Option<int64_t> persistenceThreshold{
      *this, "persistence-threshold",
      llvm::cl::desc("Stage 3: smaller parameters stay replicated "
                     "(stage3_param_persistence_threshold)"),
      llvm::cl::init(deepspeed::kPersistenceThreshold)};
  PassOptions::Option<int64_t> maxReuseDistance{
      *this, "max-reuse-distance",
      llvm::cl::desc("Stage 3: stage3_max_reuse_distance"),
      llvm::cl::init(deepspeed::kMaxReuseDistance)};
  PassOptions::Option<int64_t> maxLiveParameters{
      *this, "max-live-parameters",
      llvm::cl::desc("Stage 3: stage3_max_live_parameters"),
      llvm::cl::init(deepspeed::kMaxLiveParameters)};
  PassOptions::Option<RematPolicy> remat{
      *this, "remat", llvm::cl::desc("Activations recomputed in the backward"),
      llvm::cl::init(RematPolicy::none),
      llvm::cl::values(
          clEnumValN(RematPolicy::none, "none", "keep every activation"),
          clEnumValN(RematPolicy::blocks, "blocks",
                     "keep the inputs of repeated blocks"),
          clEnumValN(RematPolicy::sqrt, "sqrt",
                     "keep the inputs of sqrt(n) segments"),
          clEnumValN(RematPolicy::budget, "budget",
                     "least recompute within remat-budget"))};
  PassOptions::Option<int64_t> rematSegments{
      *this, "remat-segments",
      llvm::cl::desc("sqrt: segments (0: sqrt of the forward's op count)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> rematBudget{
      *this, "remat-budget",
      llvm::cl::desc("budget: bytes the activations may hold at once"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> rematLeastPeak{
      *this, "remat-least-peak",
      llvm::cl::desc("budget: the activations' least peak, when known"),
      llvm::cl::init(-1)};
  PassOptions::Option<std::string> rematHardware{
      *this, "remat-hardware",
      llvm::cl::desc("budget: machine description costing the recompute "
                     "(empty: FLOPs)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> rematMatmulPrecision{
      *this, "remat-matmul-precision",
      llvm::cl::desc("budget: the peak f32 matmuls run at (fp32, tf32)"),
      llvm::cl::init("fp32")};
  PassOptions::Option<bool> formAttention{
      *this, "form-attention",
      llvm::cl::desc("Form zero.attention from 16-bit attention before "
                     "differentiation (a target with its kernels)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> rematGPU{
      *this, "remat-gpu",
      llvm::cl::desc("budget: the machine is a GPU the CUDA target runs on"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("Compute precision: fp32, bf16 or fp16 (fp32 master "
                     "weights)"),
      llvm::cl::init("fp32")};
  PassOptions::Option<bool> reduceInF32{
      *this, "reduce-in-f32",
      llvm::cl::desc("Reduce 16-bit gradients in fp32 "
                     "(communication_data_type: fp32)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> deferParamGathers{
      *this, "defer-param-gathers",
      llvm::cl::desc("Stages 1-2: gather each 16-bit parameter from its "
                     "master's shards at the start of the next step "
                     "(zero-defer-parameter-gathers)"),
      llvm::cl::init(true)};
};

/// What every imported model goes through: the model's own ONNX Gradient
/// nodes expanded, canonicalized, CSE'd.
void buildImportCleanup(OpPassManager &pm);

/// A model that brings its own training algorithm (TrainingInfoProto):
/// import cleanup, data parallelism over `worldSize` ranks (its Gradient
/// nodes differentiate the mean of the replicas' losses), the
/// collective-order verifier and the communication plan.
void buildAlgorithmPipeline(OpPassManager &pm, int64_t worldSize);

/// Import cleanup, training step (autodiff, optimizer, accumulation,
/// clipping), ZeRO partition up to the stage, optimizer lowering, the
/// collective-order verifier and the communication plan.
void buildTrainingPipeline(OpPassManager &pm,
                           const TrainingPipelineOptions &options);

/// The communication schedule's options (DeepSpeed's keys, in elements): a
/// group that a target's pipeline options hold, so each target lowering
/// takes the same option names and defaults.
struct ScheduleOptions {
  explicit ScheduleOptions(mlir::detail::PassOptions &owner);

  mlir::detail::PassOptions::Option<bool> overlapComm;
  mlir::detail::PassOptions::Option<int64_t> reduceBucketSize;
  mlir::detail::PassOptions::Option<int64_t> allgatherBucketSize;
  mlir::detail::PassOptions::Option<int64_t> prefetchBucketSize;
  mlir::detail::PassOptions::Option<int64_t> maxLiveParameters;
};

/// On the bufferized step: buckets, start/wait, waits at first use.
void buildCollectiveSchedule(OpPassManager &pm, const ScheduleOptions &options);
/// After deallocation placement: release at last use, then stage-3
/// prefetch within the budget and the live limit.
void buildReleaseAndPrefetch(OpPassManager &pm, const ScheduleOptions &options);

/// Registers `zero-training-pipeline`.
void registerZeroPipelines();

} // namespace mlir::zero

#endif
