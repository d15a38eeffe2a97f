//===- Config.cpp - training settings from ds_config.json ------*- C++ -*-===//
#include "zero-opt/Driver/Config.h"

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

namespace {
/// A `//` comment: where it starts and where the line ends.
struct LineComment {
  size_t begin, lineEnd;
};
} // namespace

/// Blanks /* */ comments and finds // comments, outside strings.
static std::string scanComments(llvm::StringRef in,
                                std::vector<LineComment> &lineComments) {
  std::string out(in.str());
  bool inString = false;
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      size_t end = out.find('\n', i);
      if (end == std::string::npos)
        end = out.size();
      lineComments.push_back({i, end});
      i = end;
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

/// Blanks comments [k, n) assuming each ends at one of its candidate
/// positions, searching for the shortest ends that leave valid JSON. A `//`
/// comment normally runs to the end of its line, but configs copied from
/// web pages often lost their line breaks, leaving JSON after a comment on
/// the same line.
static bool resolveComments(std::string &text,
                            const std::vector<LineComment> &comments,
                            size_t k) {
  if (k == comments.size())
    return static_cast<bool>(json::parse(text));
  const LineComment &c = comments[k];
  // Candidate ends: before each JSON-looking character, nearest first,
  // then the line end.
  std::vector<size_t> ends;
  for (size_t i = c.begin + 2; i < c.lineEnd; ++i)
    if (llvm::StringRef("\"{}[],").contains(text[i]))
      ends.push_back(i);
  ends.push_back(c.lineEnd);
  std::string saved = text.substr(c.begin, c.lineEnd - c.begin);
  for (size_t e : ends) {
    for (size_t i = c.begin; i < e; ++i)
      text[i] = ' ';
    if (resolveComments(text, comments, k + 1))
      return true;
    text.replace(c.begin, saved.size(), saved);
  }
  return false;
}

/// The config text with comments removed; `warning` notes comments that
/// had to end before their line did.
static std::string stripComments(llvm::StringRef in, std::string &warning) {
  std::vector<LineComment> comments;
  std::string text = scanComments(in, comments);
  std::string plain = text;
  for (const LineComment &c : comments)
    for (size_t i = c.begin; i < c.lineEnd; ++i)
      plain[i] = ' ';
  if (comments.empty() || json::parse(plain))
    return plain;
  std::string resolved = text;
  if (comments.size() <= 16 && resolveComments(resolved, comments, 0)) {
    warning = "a // comment is followed by more JSON on the same line (were "
              "its line breaks lost?); read it as ending where the JSON "
              "resumes";
    return resolved;
  }
  return plain;
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

static bool parseOptimizer(Reader &r, const json::Object &o,
                           TrainingConfig &c) {
  std::string type;
  bool adamWMode = true;
  const json::Object *params = nullptr;
  for (const auto &kv : o) {
    std::string key = "optimizer." + kv.first.str();
    if (kv.first == "type") {
      if (!r.string(kv.second, key, type))
        return false;
    } else if (kv.first == "params") {
      if (!(params = r.object(kv.second, key)))
        return false;
    } else {
      return r.fail(key, "is not a DeepSpeed optimizer setting (expected "
                         "type and params)");
    }
  }
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
  for (const auto &kv : o) {
    std::string key = "scheduler." + kv.first.str();
    if (kv.first == "type") {
      if (!r.string(kv.second, key, type))
        return false;
    } else if (kv.first == "params") {
      if (!(params = r.object(kv.second, key)))
        return false;
    } else {
      return r.fail(key, "is not a DeepSpeed scheduler setting (expected "
                         "type and params)");
    }
  }
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

/// DeepSpeed keys that zero-opt reads elsewhere or does not implement yet.
static const llvm::StringSet<> &notYetImplemented() {
  static const llvm::StringSet<> keys = {"zero_optimization",
                                         "fp16",
                                         "bf16",
                                         "amp",
                                         "activation_checkpointing",
                                         "steps_per_print",
                                         "wall_clock_breakdown",
                                         "zero_allow_untested_optimizer",
                                         "prescale_gradients",
                                         "gradient_predivide_factor",
                                         "sparse_gradients",
                                         "communication_data_type",
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
      ok = r.integer(kv.second, key, config.accumulation);
      if (ok && config.accumulation < 1)
        ok = r.fail(key, "must be at least 1");
      config.accumulationSet = true;
    } else if (key == "gradient_clipping") {
      ok = r.number(kv.second, key, config.clip);
      if (ok && config.clip < 0)
        ok = r.fail(key, "must be >= 0 (0 turns clipping off)");
    } else if (key == "train_micro_batch_size_per_gpu") {
      ok = r.integer(kv.second, key, config.microBatch);
      if (ok && config.microBatch < 1)
        ok = r.fail(key, "must be at least 1");
    } else if (key == "train_batch_size") {
      ok = r.integer(kv.second, key, config.trainBatch);
      if (ok && config.trainBatch < 1)
        ok = r.fail(key, "must be at least 1");
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
  if (c.accumulation < 1)
    return bad("gradient accumulation steps must be at least 1");
  if (c.clip < 0)
    return bad("the gradient clipping norm must be >= 0");
  return true;
}
