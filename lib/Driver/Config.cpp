//===- Config.cpp - training settings from ds_config.json ------*- C++ -*-===//
#include "zero-opt/Driver/Config.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::zero;
namespace json = llvm::json;

double TrainingConfig::learningRate() const {
  if (lr)
    return *lr;
  return optimizer == "adagrad" ? 1e-2 : 1e-3;
}

double TrainingConfig::epsilon() const {
  if (eps)
    return *eps;
  return optimizer == "adagrad" ? 1e-10 : 1e-8;
}

/// Blanks /* */ comments outside strings.
static std::string blankBlockComments(llvm::StringRef in) {
  std::string out(in.str());
  bool inString = false;
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      size_t end = out.find("*/", i + 2);
      end = end == std::string::npos ? out.size() : end + 2;
      for (size_t k = i; k < end; ++k)
        if (out[k] != '\n')
          out[k] = ' ';
      i = end - 1;
    }
  }
  return out;
}

/// Position of the next `//` outside strings at or after `pos`, or npos.
static size_t nextLineComment(const std::string &text, size_t pos) {
  bool inString = false;
  for (size_t i = pos; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      return i;
    }
  }
  return std::string::npos;
}

/// Blanks the `//` comments from `pos` on. A comment normally runs to the
/// end of its line; configs copied from web pages often lost their line
/// breaks, leaving JSON after a comment on the same line, so when the
/// result is not valid JSON, shorter endings (before a JSON-looking
/// character, nearest first) are tried, resolving the comments after each
/// in turn. `depth` bounds the search.
static bool resolveComments(std::string &text, size_t pos, bool lenient,
                            unsigned depth = 0) {
  size_t begin = nextLineComment(text, pos);
  if (begin == std::string::npos)
    return static_cast<bool>(json::parse(text));
  size_t lineEnd = text.find('\n', begin);
  if (lineEnd == std::string::npos)
    lineEnd = text.size();
  std::vector<size_t> ends;
  if (lenient && depth < 16)
    for (size_t i = begin + 2; i < lineEnd; ++i)
      if (llvm::StringRef("\"{}[],").contains(text[i]))
        ends.push_back(i);
  ends.push_back(lineEnd);
  std::string saved = text.substr(begin, lineEnd - begin);
  for (size_t e : ends) {
    for (size_t i = begin; i < e; ++i)
      text[i] = ' ';
    if (resolveComments(text, e, lenient, depth + 1))
      return true;
    text.replace(begin, saved.size(), saved);
  }
  return false;
}

/// The config text with comments removed; `warning` notes comments that
/// had to end before their line did.
static std::string stripComments(llvm::StringRef in, std::string &warning) {
  std::string text = blankBlockComments(in);
  std::string plain = text;
  if (resolveComments(plain, 0, /*lenient=*/false))
    return plain;
  std::string resolved = text;
  if (resolveComments(resolved, 0, /*lenient=*/true)) {
    warning = "a // comment is followed by more JSON on the same line (were "
              "its line breaks lost?); read it as ending where the JSON "
              "resumes";
    return resolved;
  }
  // Not valid either way: report the plain reading's error.
  std::string fallback = text;
  for (size_t p = nextLineComment(fallback, 0); p != std::string::npos;
       p = nextLineComment(fallback, p)) {
    size_t e = fallback.find('\n', p);
    e = e == std::string::npos ? fallback.size() : e;
    for (size_t i = p; i < e; ++i)
      fallback[i] = ' ';
  }
  return fallback;
}

namespace {
/// Reads typed values out of JSON objects, reporting the dotted key path.
class Reader {
public:
  Reader(llvm::StringRef file, std::vector<std::string> &warnings)
      : file(file.str()), warnings(warnings) {}
  std::string error;

  bool fail(const std::string &key, const std::string &what) {
    if (error.empty())
      error = file + ": key '" + key + "' " + what;
    return false;
  }
  void warn(const std::string &key, const std::string &what) {
    warnings.push_back(file + ": key '" + key + "' " + what);
  }

  bool number(const json::Value &v, const std::string &key, double &out) {
    if (auto d = v.getAsNumber()) {
      out = *d;
      return true;
    }
    return fail(key, "must be a number");
  }
  bool integer(const json::Value &v, const std::string &key, int64_t &out) {
    if (auto i = v.getAsInteger()) {
      out = *i;
      return true;
    }
    // DeepSpeed configs write sizes like 5e8.
    if (auto d = v.getAsNumber(); d && *d == (double)(int64_t)*d) {
      out = (int64_t)*d;
      return true;
    }
    return fail(key, "must be an integer");
  }
  /// An integer of at least 1.
  bool positive(const json::Value &v, const std::string &key, int64_t &out) {
    if (!integer(v, key, out))
      return false;
    return out >= 1 || fail(key, "must be at least 1");
  }
  bool boolean(const json::Value &v, const std::string &key, bool &out) {
    if (auto b = v.getAsBoolean()) {
      out = *b;
      return true;
    }
    return fail(key, "must be true or false");
  }
  bool string(const json::Value &v, const std::string &key, std::string &out) {
    if (auto s = v.getAsString()) {
      out = s->str();
      return true;
    }
    return fail(key, "must be a string");
  }
  const json::Object *object(const json::Value &v, const std::string &key) {
    const json::Object *o = v.getAsObject();
    if (!o)
      fail(key, "must be an object");
    return o;
  }

  std::string file;
  std::vector<std::string> &warnings;
};
} // namespace

/// The {"type": ..., "params": {...}} shape of DeepSpeed's optimizer and
/// scheduler sections.
static bool readTypeAndParams(Reader &r, const json::Object &o,
                              llvm::StringRef section, std::string &type,
                              const json::Object *&params) {
  for (const auto &kv : o) {
    std::string key = section.str() + "." + kv.first.str();
    if (kv.first == "type") {
      if (!r.string(kv.second, key, type))
        return false;
    } else if (kv.first == "params") {
      if (!(params = r.object(kv.second, key)))
        return false;
    } else {
      return r.fail(key, "is not a DeepSpeed " + section.str() +
                             " setting (expected type and params)");
    }
  }
  return true;
}

static bool parseOptimizer(Reader &r, const json::Object &o,
                           TrainingConfig &c) {
  std::string type;
  bool adamWMode = true;
  const json::Object *params = nullptr;
  if (!readTypeAndParams(r, o, "optimizer", type, params))
    return false;
  std::string lower = llvm::StringRef(type).lower();
  if (lower != "adam" && lower != "adamw" && lower != "sgd" &&
      lower != "adagrad")
    return r.fail("optimizer.type",
                  "is '" + type +
                      "'; zero-opt implements Adam, AdamW, SGD and Adagrad");
  static const json::Object noParams;
  if (!params)
    params = &noParams;
  static const llvm::StringSet<> adamKeys = {
      "lr",         "betas",           "eps",    "weight_decay", "adam_w_mode",
      "torch_adam", "bias_correction", "amsgrad"};
  static const llvm::StringSet<> sgdKeys = {"lr", "momentum", "dampening",
                                            "weight_decay", "nesterov"};
  static const llvm::StringSet<> adagradKeys = {
      "lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"};
  const llvm::StringSet<> &allowed = lower == "sgd"       ? sgdKeys
                                     : lower == "adagrad" ? adagradKeys
                                                          : adamKeys;
  for (const auto &kv : *params) {
    std::string key = "optimizer.params." + kv.first.str();
    llvm::StringRef k = kv.first;
    if (!allowed.contains(k))
      return r.fail(key, "is not a parameter of " + type);
    double d;
    bool b;
    if (k == "lr") {
      if (!r.number(kv.second, key, d))
        return false;
      c.lr = d;
    } else if (k == "betas") {
      const json::Array *a = kv.second.getAsArray();
      if (!a || a->size() != 2 || !(*a)[0].getAsNumber() ||
          !(*a)[1].getAsNumber())
        return r.fail(key, "must be a list of two numbers");
      c.beta1 = *(*a)[0].getAsNumber();
      c.beta2 = *(*a)[1].getAsNumber();
    } else if (k == "eps") {
      if (!r.number(kv.second, key, d))
        return false;
      c.eps = d;
    } else if (k == "weight_decay") {
      if (!r.number(kv.second, key, c.weightDecay))
        return false;
    } else if (k == "adam_w_mode") {
      if (!r.boolean(kv.second, key, adamWMode))
        return false;
    } else if (k == "torch_adam") {
      if (!r.boolean(kv.second, key, b))
        return false;
    } else if (k == "bias_correction") {
      if (!r.boolean(kv.second, key, b))
        return false;
      if (!b)
        return r.fail(key, "false is not supported (Adam always applies "
                           "bias correction here)");
    } else if (k == "amsgrad") {
      if (!r.boolean(kv.second, key, b))
        return false;
      if (b)
        return r.fail(key, "true is not supported");
    } else if (k == "momentum") {
      if (!r.number(kv.second, key, c.momentum))
        return false;
    } else if (k == "dampening") {
      if (!r.number(kv.second, key, c.dampening))
        return false;
    } else if (k == "nesterov") {
      if (!r.boolean(kv.second, key, c.nesterov))
        return false;
    } else if (k == "lr_decay") {
      if (!r.number(kv.second, key, c.lrDecay))
        return false;
    } else if (k == "initial_accumulator_value") {
      if (!r.number(kv.second, key, c.initialAccumulator))
        return false;
    }
  }
  // DeepSpeed's "Adam" is decoupled (AdamW) unless adam_w_mode is false.
  if (lower == "adam")
    c.optimizer = adamWMode ? "adamw" : "adam";
  else
    c.optimizer = lower;
  return true;
}

static bool parseScheduler(Reader &r, const json::Object &o,
                           TrainingConfig &c) {
  std::string type;
  const json::Object *params = nullptr;
  if (!readTypeAndParams(r, o, "scheduler", type, params))
    return false;
  if (type != "WarmupLR" && type != "WarmupDecayLR")
    return r.fail("scheduler.type", "is '" + type +
                                        "'; zero-opt implements WarmupLR and "
                                        "WarmupDecayLR");
  LRSchedule &s = c.schedule;
  s.type = type;
  if (!params)
    return type == "WarmupLR" || r.fail("scheduler.params.total_num_steps",
                                        "is required by WarmupDecayLR");
  bool haveTotal = false;
  for (const auto &kv : *params) {
    std::string key = "scheduler.params." + kv.first.str();
    llvm::StringRef k = kv.first;
    double d;
    if (k == "warmup_min_lr") {
      if (!r.number(kv.second, key, s.warmupMinLr))
        return false;
    } else if (k == "warmup_max_lr") {
      if (!r.number(kv.second, key, d))
        return false;
      s.warmupMaxLr = d;
    } else if (k == "warmup_num_steps") {
      if (!r.integer(kv.second, key, s.warmupNumSteps))
        return false;
      if (s.warmupNumSteps <= 0)
        return r.fail(key, "must be positive");
    } else if (k == "warmup_type") {
      if (!r.string(kv.second, key, s.warmupType))
        return false;
      if (s.warmupType != "log" && s.warmupType != "linear")
        return r.fail(key, "must be \"log\" or \"linear\"");
    } else if (k == "total_num_steps" && type == "WarmupDecayLR") {
      if (!r.integer(kv.second, key, s.totalNumSteps))
        return false;
      haveTotal = true;
    } else if (k == "last_batch_iteration") {
      int64_t v;
      if (!r.integer(kv.second, key, v))
        return false;
      if (v != -1)
        return r.fail(key, "other than -1 (resuming a schedule) is not "
                           "supported");
    } else {
      return r.fail(key, "is not a parameter of " + type);
    }
  }
  if (type == "WarmupDecayLR" && !haveTotal)
    return r.fail("scheduler.params.total_num_steps",
                  "is required by WarmupDecayLR");
  return true;
}

/// zero_optimization.offload_optimizer / offload_param. Device "none" is
/// what zero-opt does; "cpu" and "nvme" are not implemented: a warning that
/// `what` (a clause: "the optimizer state stays") in device memory.
static bool parseOffload(Reader &r, const json::Value &v,
                         const std::string &key, llvm::StringRef what) {
  // DeepSpeed's keys of both sections; only `device` matters here.
  static const llvm::StringSet<> known = {
      "device",     "nvme_path",  "buffer_count",  "buffer_size",
      "max_in_cpu", "pin_memory", "pipeline_read", "pipeline_write",
      "fast_init",  "ratio"};
  const json::Object *o = r.object(v, key);
  if (!o)
    return false;
  std::string device = "none";
  for (const auto &kv : *o) {
    std::string k = key + "." + kv.first.str();
    if (!known.contains(kv.first))
      return r.fail(k, "is not a DeepSpeed offload setting");
    if (kv.first == "device") {
      if (!r.string(kv.second, k, device))
        return false;
      if (device != "none" && device != "cpu" && device != "nvme")
        return r.fail(k, "is '" + device + "'; expected none, cpu or nvme");
    }
  }
  if (device != "none")
    r.warn(key + ".device",
           "is '" + device + "': offloading is not implemented; " + what.str() +
               " in device memory (plan.json's memory says how much)");
  return true;
}

/// A boolean whose value `done` is what zero-opt does; the other value warns
/// with `otherwise` (none: either value is what it does).
static bool parseFixed(Reader &r, const json::Value &v, const std::string &key,
                       bool done, const char *otherwise) {
  bool value = done;
  if (!r.boolean(v, key, value))
    return false;
  if (value != done && otherwise)
    r.warn(key,
           std::string("is ") + (value ? "true" : "false") + ": " + otherwise);
  return true;
}

static bool parseZero(Reader &r, const json::Object &o, TrainingConfig &c) {
  // Accepted with a warning until implemented.
  static const llvm::StringSet<> later = {
      "stage3_gather_16bit_weights_on_model_save",
      "sub_group_size",
      "load_from_fp32_weights",
      "elastic_checkpoint",
      "zero_quantized_weights",
      "zero_quantized_gradients",
      "zero_hpz_partition_size",
      "mics_shard_size",
      "ignore_unused_parameters",
      "use_multi_rank_bucket_allreduce"};
  // Booleans: the value zero-opt's plan has by construction, and what the
  // other value gets instead.
  static const char *kNoOffload =
      "offloading is not implemented; it has no effect";
  static const llvm::StringMap<std::pair<bool, const char *>> fixed = {
      // DeepSpeed's older spelling of offload_optimizer / offload_param.
      {"cpu_offload", {false, kNoOffload}},
      {"cpu_offload_params", {false, kNoOffload}},
      {"cpu_offload_use_pin_memory", {false, kNoOffload}},
      // Gradients lie at the plan's fixed offsets either way: no copies
      // and no fragmentation to avoid.
      {"contiguous_gradients", {true, nullptr}},
      {"reduce_scatter",
       {true, "zero-opt reduce-scatters gradients at stages 1-3 all the same "
              "(half an all-reduce's bytes)"}},
      {"allgather_partitions",
       {true, "zero-opt all-gathers the updated shards all the same (one "
              "collective instead of a broadcast per rank)"}},
      {"round_robin_gradients",
       {false, "it orders offloaded gradients' copies, and offloading is not "
               "implemented; it has no effect"}}};
  for (const auto &kv : o) {
    std::string key = "zero_optimization." + kv.first.str();
    if (kv.first == "offload_optimizer" || kv.first == "offload_param") {
      if (!parseOffload(r, kv.second, key,
                        kv.first == "offload_optimizer"
                            ? "the optimizer state stays"
                            : "the parameters' shards stay"))
        return false;
    } else if (auto it = fixed.find(kv.first); it != fixed.end()) {
      if (!parseFixed(r, kv.second, key, it->second.first, it->second.second))
        return false;
    } else if (kv.first == "stage") {
      if (!r.integer(kv.second, key, c.stage))
        return false;
      if (c.stage < 0 || c.stage > 3)
        return r.fail(key, "must be 0, 1, 2 or 3");
    } else if (kv.first == "stage3_param_persistence_threshold") {
      if (!r.integer(kv.second, key, c.persistenceThreshold))
        return false;
      if (c.persistenceThreshold < 0)
        return r.fail(key, "must be >= 0");
    } else if (kv.first == "stage3_prefetch_bucket_size") {
      if (!r.integer(kv.second, key, c.prefetchElements))
        return false;
      if (c.prefetchElements < 0)
        return r.fail(key, "must be >= 0 (0 turns prefetching off)");
    } else if (kv.first == "reduce_bucket_size" ||
               kv.first == "allgather_bucket_size") {
      int64_t &e = kv.first == "reduce_bucket_size" ? c.reduceBucketElements
                                                    : c.allgatherBucketElements;
      if (!r.integer(kv.second, key, e))
        return false;
      if (e < 0)
        return r.fail(key, "must be >= 0 (0 turns bucketing off)");
    } else if (kv.first == "stage3_max_reuse_distance") {
      if (!r.integer(kv.second, key, c.maxReuseDistance))
        return false;
      if (c.maxReuseDistance < 0)
        return r.fail(key, "must be >= 0 (0 keeps a gathered parameter "
                           "only when no other is used before its reuse)");
    } else if (kv.first == "stage3_max_live_parameters") {
      if (!r.integer(kv.second, key, c.maxLiveParameters))
        return false;
      if (c.maxLiveParameters < 0)
        return r.fail(key, "must be >= 0");
    } else if (kv.first == "overlap_comm") {
      if (!r.boolean(kv.second, key, c.overlapComm))
        return false;
    } else if (later.contains(kv.first)) {
      r.warn(key, "is accepted but not implemented yet; it has no effect");
    } else {
      return r.fail(key, "is not a DeepSpeed zero_optimization setting");
    }
  }
  return true;
}

/// activation_checkpointing: the section turns recomputation on, chosen by
/// the compiler: `number_checkpoints` segments of the forward (the sqrt
/// policy with that count), else one per repeated block. DeepSpeed's other
/// keys steer how its runtime stores checkpoints; zero-opt does not
/// implement them.
static bool parseActivationCheckpointing(Reader &r, const json::Object &o,
                                         TrainingConfig &c) {
  c.remat = "blocks";
  for (const auto &kv : o) {
    std::string key = "activation_checkpointing." + kv.first.str();
    if (kv.first == "number_checkpoints") {
      if (kv.second.kind() == json::Value::Null)
        continue;
      if (!r.integer(kv.second, key, c.rematSegments))
        return false;
      if (c.rematSegments < 1)
        return r.fail(key, "must be at least 1 (or null)");
      c.remat = "sqrt";
    } else if (kv.first == "partition_activations" ||
               kv.first == "cpu_checkpointing" ||
               kv.first == "contiguous_memory_optimization" ||
               kv.first == "synchronize_checkpoint_boundary" ||
               kv.first == "profile") {
      bool on = false;
      if (!r.boolean(kv.second, key, on))
        return false;
      r.warn(key, "is not implemented; it has no effect (zero-opt chooses "
                  "and recomputes checkpoints itself)");
    } else {
      return r.fail(key, "is not a DeepSpeed activation_checkpointing "
                         "setting");
    }
  }
  return true;
}

/// checkpoint: how zero-run's checkpoints are validated and loaded.
/// tag_validation is DeepSpeed's (Warn, Ignore or Fail when the ranks
/// disagree on a checkpoint's step); every load maps shards through the
/// manifests, so load_universal is always on; the storage keys tune
/// DeepSpeed's writer, which zero-run does not share.
static bool parseCheckpoint(Reader &r, const json::Object &o,
                            TrainingConfig &c) {
  for (const auto &kv : o) {
    std::string key = "checkpoint." + kv.first.str();
    if (kv.first == "tag_validation") {
      std::string v;
      if (!r.string(kv.second, key, v))
        return false;
      std::string upper = llvm::StringRef(v).upper();
      if (upper != "WARN" && upper != "IGNORE" && upper != "FAIL")
        return r.fail(key, "must be Warn, Ignore or Fail");
      c.tagValidation = upper;
    } else if (kv.first == "load_universal") {
      bool on = false;
      if (!r.boolean(kv.second, key, on))
        return false;
    } else if (kv.first == "use_node_local_storage" ||
               kv.first == "parallel_write" ||
               kv.first == "checkpoint_serialization" || kv.first == "writer") {
      r.warn(key, "is not implemented; it has no effect (every rank writes "
                  "its own shard file into the shared checkpoint folder)");
    } else {
      return r.fail(key, "is not a DeepSpeed checkpoint setting");
    }
  }
  return true;
}

/// The fp16 and bf16 blocks: `enabled` turns the precision on; fp16's
/// loss-scaling keys are DeepSpeed's (bf16 has no scaling).
static bool parsePrecision(Reader &r, const std::string &block,
                           const json::Object &o, TrainingConfig &c,
                           bool &enabled) {
  enabled = false;
  for (const auto &kv : o) {
    llvm::StringRef k = kv.first;
    std::string key = block + "." + k.str();
    bool ok = true;
    if (k == "enabled") {
      ok = r.boolean(kv.second, key, enabled);
    } else if (block == "fp16" && k == "loss_scale") {
      ok = r.number(kv.second, key, c.lossScale);
      if (ok && c.lossScale < 0)
        ok = r.fail(key, "must be 0 (dynamic) or a positive scale");
    } else if (block == "fp16" && k == "initial_scale_power") {
      ok = r.integer(kv.second, key, c.initialScalePower);
      if (ok && (c.initialScalePower < 0 || c.initialScalePower > 127))
        ok = r.fail(key, "must be in [0, 127]");
    } else if (block == "fp16" && k == "loss_scale_window") {
      ok = r.positive(kv.second, key, c.lossScaleWindow);
    } else if (block == "fp16" && k == "hysteresis") {
      ok = r.positive(kv.second, key, c.hysteresis);
    } else if (block == "fp16" && k == "consecutive_hysteresis") {
      ok = r.boolean(kv.second, key, c.consecutiveHysteresis);
    } else if (block == "fp16" && k == "min_loss_scale") {
      ok = r.number(kv.second, key, c.minLossScale);
      if (ok && c.minLossScale <= 0)
        ok = r.fail(key, "must be positive");
    } else if (k == "auto_cast" || k == "fp16_master_weights_and_grads" ||
               k == "immediate_grad_update") {
      r.warn(key, "is not implemented; it has no effect (master weights "
                  "and gradients: fp32 masters in the optimizer state, "
                  "16-bit gradients)");
    } else {
      return r.fail(key, "is not a DeepSpeed " + block + " setting");
    }
    if (!ok)
      return false;
  }
  return true;
}

/// DeepSpeed keys that zero-opt reads elsewhere or does not implement yet.
static const llvm::StringSet<> &notYetImplemented() {
  static const llvm::StringSet<> keys = {"amp",
                                         "steps_per_print",
                                         "wall_clock_breakdown",
                                         "zero_allow_untested_optimizer",
                                         "prescale_gradients",
                                         "gradient_predivide_factor",
                                         "sparse_gradients",
                                         "flops_profiler",
                                         "tensorboard",
                                         "wandb",
                                         "csv_monitor",
                                         "comms_logger",
                                         "memory_breakdown",
                                         "dump_state"};
  return keys;
}

bool mlir::zero::parseDeepSpeedConfig(llvm::StringRef path,
                                      TrainingConfig &config,
                                      std::vector<std::string> &warnings,
                                      std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = path.str() + ": " + buf.getError().message();
    return false;
  }
  std::string commentWarning;
  std::string text = stripComments((*buf)->getBuffer(), commentWarning);
  if (!commentWarning.empty())
    warnings.push_back(path.str() + ": " + commentWarning);
  auto parsed = json::parse(text);
  if (!parsed) {
    error =
        path.str() + ": not valid JSON: " + llvm::toString(parsed.takeError());
    return false;
  }
  Reader r(path, warnings);
  const json::Object *top = parsed->getAsObject();
  if (!top) {
    error = path.str() + ": the config must be a JSON object";
    return false;
  }
  bool fp16 = false, bf16 = false;
  for (const auto &kv : *top) {
    std::string key = kv.first.str();
    bool ok = true;
    if (key == "optimizer") {
      const json::Object *o = r.object(kv.second, key);
      ok = o && parseOptimizer(r, *o, config);
    } else if (key == "scheduler") {
      const json::Object *o = r.object(kv.second, key);
      ok = o && parseScheduler(r, *o, config);
    } else if (key == "gradient_accumulation_steps") {
      ok = r.positive(kv.second, key, config.accumulation);
      config.accumulationSet = true;
    } else if (key == "gradient_clipping") {
      ok = r.number(kv.second, key, config.clip);
      if (ok && config.clip < 0)
        ok = r.fail(key, "must be >= 0 (0 turns clipping off)");
    } else if (key == "zero_optimization") {
      const json::Object *o = r.object(kv.second, key);
      ok = o && parseZero(r, *o, config);
    } else if (key == "activation_checkpointing") {
      const json::Object *o = r.object(kv.second, key);
      ok = o && parseActivationCheckpointing(r, *o, config);
    } else if (key == "fp16" || key == "bf16") {
      const json::Object *o = r.object(kv.second, key);
      ok = o && parsePrecision(r, key, *o, config, key == "fp16" ? fp16 : bf16);
    } else if (key == "checkpoint") {
      const json::Object *o = r.object(kv.second, key);
      ok = o && parseCheckpoint(r, *o, config);
    } else if (key == "communication_data_type") {
      std::string t;
      ok = r.string(kv.second, key, t);
      if (ok && t != "fp32" && t != "fp16" && t != "bf16")
        ok = r.fail(key, "must be fp32, fp16 or bf16");
      if (ok)
        config.commDataType = t;
    } else if (key == "train_micro_batch_size_per_gpu") {
      ok = r.positive(kv.second, key, config.microBatch);
    } else if (key == "train_batch_size") {
      ok = r.positive(kv.second, key, config.trainBatch);
    } else if (notYetImplemented().contains(key)) {
      r.warn(key, "is accepted but not implemented yet; it has no effect");
    } else {
      ok = r.fail(key, "is not a DeepSpeed configuration key");
    }
    if (!ok) {
      error = r.error;
      return false;
    }
  }
  if (fp16 && bf16) {
    error = path.str() + ": the fp16 and bf16 blocks are both enabled; "
                         "enable one";
    return false;
  }
  if (bf16)
    config.precision = "bf16";
  if (fp16)
    config.precision = "fp16";
  return validateTrainingConfig(config, error);
}

bool mlir::zero::validateTrainingConfig(const TrainingConfig &c,
                                        std::string &error) {
  auto bad = [&](const std::string &msg) {
    error = msg;
    return false;
  };
  if (c.optimizer != "adamw" && c.optimizer != "adam" && c.optimizer != "sgd" &&
      c.optimizer != "adagrad")
    return bad("unknown optimizer '" + c.optimizer +
               "' (expected adamw, adam, sgd or adagrad)");
  if (c.optimizer == "sgd" && !c.lr)
    return bad("SGD needs a learning rate (--lr or optimizer.params.lr)");
  if (c.learningRate() < 0)
    return bad("the learning rate must be >= 0");
  if (c.beta1 < 0 || c.beta1 >= 1 || c.beta2 < 0 || c.beta2 >= 1)
    return bad("betas must be in [0, 1)");
  if (c.epsilon() < 0 || c.weightDecay < 0 || c.momentum < 0 ||
      c.dampening < 0 || c.lrDecay < 0 || c.initialAccumulator < 0)
    return bad("eps, weight decay, momentum, dampening, lr decay and the "
               "initial accumulator must be >= 0");
  if (c.nesterov && (c.momentum <= 0 || c.dampening != 0))
    return bad("Nesterov momentum needs momentum > 0 and dampening 0");
  if (c.precision != "fp32" && c.precision != "bf16" && c.precision != "fp16")
    return bad("--precision=" + c.precision + ": expected fp32, bf16 or fp16");
  // Gradients are reduced in the compute precision or, on request, fp32.
  if (!c.commDataType.empty() && c.commDataType != "fp32" &&
      c.commDataType != c.precision)
    return bad("communication_data_type " + c.commDataType +
               " with compute precision " + c.precision +
               ": gradients are reduced in fp32 or in the compute precision");
  if (c.accumulation < 1)
    return bad("gradient accumulation steps must be at least 1");
  if (c.clip < 0)
    return bad("the gradient clipping norm must be >= 0");
  if (c.remat == "budget" && c.memoryBudget <= 0)
    return bad("--remat=budget needs --memory-budget=BYTES (the per-rank "
               "peak the step must fit)");
  if (c.remat != "budget" && c.memoryBudget > 0)
    return bad("--memory-budget is read only by --remat=budget (the "
               "rematerialization policy is " +
               c.remat + ")");
  return true;
}
