//===- Step.h - loading and calling a compiled program ----------*- C++ -*-===//
//
// Reads OUT/plan.json, loads OUT/step.so and calls its step functions
// (`forward`, `train_step`) with one buffer per argument and result, in the
// plan's order.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_STEP_H
#define ZERO_RT_STEP_H

#include "zero-rt/LossScaler.h"
#include "zero-rt/Npz.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace zero::rt {

struct BufferSpec {
  std::string name;
  std::string role;
  int category = 5; ///< memory category (zero-rt/Memory.h numbering)
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string stateOf; ///< optimizer state: its parameter
  double init = 0.0;   ///< optimizer state: initial value
  /// A rank's flat, end-padded shard of a tensor of `fullShape`
  /// (`fullNumel` elements); empty when not sharded.
  std::vector<int64_t> fullShape;
  int64_t fullNumel = 0;
  /// CUDA programs: the buffer lives in device memory (all but the
  /// hyperparameters, which the step's host code reads).
  bool onDevice = false;
  bool sharded() const { return fullNumel > 0; }
  /// Model state read from params.npz and saved with the weights:
  /// parameters and buffers (BatchNorm running statistics).
  bool fromModel() const { return role == "parameter" || role == "buffer"; }
  /// The fp32 master weight of the (16-bit) parameter `stateOf`: it starts
  /// from that parameter's value in params.npz and is what is saved.
  bool isMaster() const { return role == "master_weight"; }
  /// Read from params.npz (or --load-weights) at the start.
  bool initialized() const { return fromModel() || isMaster(); }
  int64_t numel() const;
  size_t bytes() const { return numel() * itemSize(dtype); }
};

/// One compiled step function.
struct Function {
  std::string entry;
  std::vector<BufferSpec> arguments, results;
  /// CUDA programs: the device arena the step lays its temporaries in.
  int64_t arenaBytes = 0;
  void (*fn)(void **) = nullptr;
  /// `buffers` holds arguments then results, each sized as its spec.
  void run(void **buffers) const { fn(buffers); }
  int argumentIndex(const std::string &name) const;
  int resultIndex(const std::string &name) const;
};

/// DeepSpeed's learning-rate schedules. Optimizer step k (0-based) uses
/// lr(k - 1), with lr(-1) = warmup_min_lr.
struct Schedule {
  std::string type = "constant";
  double warmupMinLr = 0, warmupMaxLr = 0;
  int64_t warmupNumSteps = 1000, totalNumSteps = 0;
  std::string warmupType = "log";
  double lrAt(int64_t step, double baseLr) const;
};

struct Training {
  std::string optimizer;
  double lr = 0;
  int64_t accumulation = 1, microBatch = 0;
  double clip = 0;
  Schedule schedule;
  /// fp16: the step takes a `loss_scale` argument, set between steps.
  std::optional<LossScaling> lossScaling;
  std::string precision = "fp32";
  uint64_t seed = 0; ///< of Dropout's masks
  /// DeepSpeed's checkpoint.tag_validation: WARN, IGNORE or FAIL when the
  /// ranks disagree on the checkpoint they write.
  std::string tagValidation = "WARN";
};

class Program {
public:
  Program() = default;
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;
  ~Program();

  /// Reads the plan of the compiled program in folder `dir`; false with
  /// `error` set.
  bool load(const std::string &dir, std::string &error);
  /// Loads its step library and binds the step functions. A CUDA program's
  /// library loads its kernels onto the current device, so the device
  /// runtime is initialized first.
  bool open(std::string &error);

  /// The function named in the plan ("forward", "train_step"), or null.
  const Function *function(const std::string &name) const;
  const std::optional<Training> &training() const { return training_; }
  const std::string &dir() const { return dir_; }
  /// The ONNX model compiled (its path as given and absolute) and the hash
  /// of its structure (checkpoints record it).
  const std::string &model() const { return model_; }
  const std::string &modelPath() const { return modelPath_; }
  const std::string &modelHash() const { return modelHash_; }
  /// Compiled with --target=cuda, for this CUDA runtime interface.
  bool cuda() const { return cuda_; }
  int64_t cudaRuntimeAbi() const { return cudaAbi_; }
  int worldSize() const { return worldSize_; }
  int stage() const { return stage_; }
  /// Whether collectives overlap compute (the config's overlap_comm).
  bool overlapComm() const { return overlapComm_; }

  /// The initial parameters from OUT/params.npz (or `file` when given),
  /// one per parameter, buffer or master weight argument of `fn`
  /// (`initialized()`), in argument order, converted to the argument's
  /// float type (16-bit copies round to nearest even). Sharded arguments
  /// get rank `rank`'s shard.
  bool loadParameters(const Function &fn, std::vector<Array> &params,
                      std::string &error, const std::string &file = "",
                      int64_t rank = 0) const;

  /// Floating-point initializers of OUT/params.npz that are not arguments of
  /// `fn` (frozen ones).
  bool loadFrozen(const Function &fn, std::vector<Array> &frozen,
                  std::string &error) const;

  /// Opens OUT/params.npz in `reader` and lists its frozen members.
  bool openFrozen(const Function &fn, NpzReader &reader,
                  std::vector<const NpzReader::Member *> &members,
                  std::string &error) const;

  /// Initial values of `fn`'s optimizer states that OUT/params.npz holds
  /// (those of ONNX training models), by name.
  bool loadStates(const Function &fn, std::vector<Array> &states,
                  std::string &error) const;

private:
  std::string dir_;
  std::map<std::string, Function> functions;
  std::optional<Training> training_;
  std::string paramsFile, model_, modelPath_, modelHash_, library_;
  bool cuda_ = false;
  int64_t cudaAbi_ = 0;
  int worldSize_ = 1, stage_ = 0;
  bool overlapComm_ = true;
  void *handle = nullptr;
};

/// An Array shaped and typed as `spec`, zero-filled.
Array makeArray(const BufferSpec &spec);

} // namespace zero::rt

#endif
