//===- Config.h - training settings from flags and ds_config.json --------===//
#ifndef ZERO_OPT_DRIVER_CONFIG_H
#define ZERO_OPT_DRIVER_CONFIG_H

#include "zero-opt/Dialect/Zero/Transforms/DeepSpeedDefaults.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::zero {

/// A learning-rate schedule, as DeepSpeed defines them. Optimizer step k
/// (0-based) uses lr(k - 1), with lr(-1) = warmup_min_lr, because
/// DeepSpeed applies the schedule at construction and steps it after each
/// optimizer step.
struct LRSchedule {
  std::string type = "constant"; // constant, WarmupLR, WarmupDecayLR
  double warmupMinLr = 0.0;
  std::optional<double> warmupMaxLr; // default: the optimizer's lr
  int64_t warmupNumSteps = 1000;
  std::string warmupType = "log"; // log or linear
  int64_t totalNumSteps = 0;      // WarmupDecayLR
};

struct TrainingConfig {
  std::string optimizer = "adamw"; // adamw, adam, sgd, adagrad
  std::optional<double> lr;
  double beta1 = 0.9, beta2 = 0.999;
  std::optional<double> eps;
  double weightDecay = 0.0;
  double momentum = 0.0, dampening = 0.0;
  bool nesterov = false;
  double lrDecay = 0.0, initialAccumulator = 0.0;
  int64_t accumulation = 1;
  bool accumulationSet = false; // given explicitly (else derivable)
  double clip = 0.0;
  int64_t microBatch = 0; // 0: the model's batch dimension
  int64_t trainBatch = 0; // 0: derived
  LRSchedule schedule;
  // zero_optimization
  int64_t stage = 0;
  int64_t persistenceThreshold = deepspeed::kPersistenceThreshold;
  /// Collectives run on the communication thread and each wait is placed
  /// before the first use of what it produces; false: every collective
  /// completes where it starts.
  bool overlapComm = deepspeed::kOverlapComm;
  /// Stage 3: parameter elements gathered ahead of their use, at most;
  /// DeepSpeed's stage3_prefetch_bucket_size and its default.
  int64_t prefetchElements = deepspeed::kPrefetchBucketSize;
  /// Elements of the whole tensors in one bucket of gradient reductions,
  /// and of parameter gathers (reduce_bucket_size, allgather_bucket_size
  /// and their defaults).
  int64_t reduceBucketElements = deepspeed::kReduceBucketSize;
  int64_t allgatherBucketElements = deepspeed::kAllgatherBucketSize;
  /// Stage 3: a parameter used again in the backward pass after at most
  /// this many elements of other parameters keeps its forward gather
  /// (stage3_max_reuse_distance and its default).
  int64_t maxReuseDistance = deepspeed::kMaxReuseDistance;
  /// Stage 3: gathered parameter elements held at once, at most
  /// (stage3_max_live_parameters and its default).
  int64_t maxLiveParameters = deepspeed::kMaxLiveParameters;
  /// Rematerialization: none, blocks, sqrt or budget (--remat), and the
  /// number of sqrt segments (activation_checkpointing.number_checkpoints;
  /// 0: the square root of the forward's op count).
  std::string remat = "none";
  int64_t rematSegments = 0;
  /// budget: bytes per rank the step's planned peak may reach
  /// (--memory-budget), and the activation budget of the model that the
  /// compile found to meet it (-1: keep every activation).
  int64_t memoryBudget = 0;
  int64_t activationBudget = -1, leastActivationPeak = -1;
  /// Compute precision: fp32, bf16 or fp16 (--precision; the fp16 and bf16
  /// blocks).
  std::string precision = "fp32";
  /// Precision of the gradient reduction (communication_data_type): empty
  /// for the compute precision, or fp32.
  std::string commDataType;
  /// fp16 loss scaling, DeepSpeed's keys and defaults: loss_scale 0 is
  /// dynamic, starting at 2^initial_scale_power.
  double lossScale = 0;
  int64_t initialScalePower = 16, lossScaleWindow = 1000, hysteresis = 2;
  bool consecutiveHysteresis = false;
  double minLossScale = 1;
  /// checkpoint.tag_validation: WARN, IGNORE or FAIL, as zero-run treats
  /// ranks that disagree on a checkpoint's step.
  std::string tagValidation = "WARN";

  /// The learning rate, with the optimizer's default when unset.
  double learningRate() const;
  /// Epsilon, with the optimizer's default when unset.
  double epsilon() const;
};

/// Parses a DeepSpeed config (JSON with // and /* */ comments) into
/// `config`. Keys zero-opt implements are applied; DeepSpeed keys it does
/// not implement yet are appended to `warnings`; anything else is an error
/// naming the key. Returns false with `error` set.
bool parseDeepSpeedConfig(llvm::StringRef path, TrainingConfig &config,
                          std::vector<std::string> &warnings,
                          std::string &error);

/// Checks values (ranges, optimizer names, schedule fields).
bool validateTrainingConfig(const TrainingConfig &config, std::string &error);

} // namespace mlir::zero

#endif
