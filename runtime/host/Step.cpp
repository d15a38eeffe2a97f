//===- Step.cpp - loading and calling a compiled program -------*- C++ -*-===//
#include "zero-rt/Step.h"
#include "zero-rt/Checkpoint.h"
#include "zero-rt/Files.h"
#include "zero-rt/Memory.h"
#include "zero-rt/Runtime.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <map>

using namespace zero::rt;
namespace json = llvm::json;

int64_t BufferSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

int Function::argumentIndex(const std::string &name) const {
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].name == name)
      return i;
  return -1;
}

int Function::resultIndex(const std::string &name) const {
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].name == name)
      return i;
  return -1;
}

double Schedule::lrAt(int64_t step, double baseLr) const {
  if (type == "constant")
    return baseLr;
  int64_t j = step - 1;
  if (j < 0)
    return warmupMinLr;
  int64_t n = std::max<int64_t>(2, warmupNumSteps);
  double gamma;
  if (j < n) {
    gamma = warmupType == "linear"
                ? double(j) / double(n)
                : std::log(double(j + 1)) / std::log(double(n));
  } else if (type == "WarmupDecayLR") {
    gamma = std::max(0.0, double(totalNumSteps - j) /
                              std::max(1.0, double(totalNumSteps - n)));
  } else {
    gamma = 1.0;
  }
  return warmupMinLr + (warmupMaxLr - warmupMinLr) * gamma;
}

Program::~Program() {
  if (handle)
    dlclose(handle);
}

static bool parseBuffers(const json::Array *list, const std::string &what,
                         std::vector<BufferSpec> &out, std::string &error) {
  if (!list) {
    error = "plan.json: missing '" + what + "'";
    return false;
  }
  for (const json::Value &v : *list) {
    const json::Object *o = v.getAsObject();
    BufferSpec spec;
    auto name = o ? o->getString("name") : std::nullopt;
    auto role = o ? o->getString("role") : std::nullopt;
    auto dtype = o ? o->getString("dtype") : std::nullopt;
    const json::Array *shape = o ? o->getArray("shape") : nullptr;
    if (!name || !role || !dtype || !shape) {
      error = "plan.json: malformed entry in '" + what + "'";
      return false;
    }
    spec.name = name->str();
    spec.role = role->str();
    spec.stateOf = o->getString("state_of").value_or("").str();
    spec.category =
        memoryCategoryOf(o->getString("category").value_or("other").str());
    if (spec.category < 0) {
      error = "plan.json: unknown memory category in '" + what + "'";
      return false;
    }
    spec.init = o->getNumber("init").value_or(0.0);
    spec.onDevice = o->getString("memory").value_or("host") == "device";
    if (const json::Object *sh = o->getObject("shard")) {
      spec.fullNumel = sh->getInteger("numel").value_or(0);
      if (const json::Array *fs = sh->getArray("shape"))
        for (const json::Value &d : *fs)
          spec.fullShape.push_back(d.getAsInteger().value_or(0));
    }
    std::optional<DType> known = dtypeFromName(dtype->str());
    if (known)
      spec.dtype = *known;
    if (!known) {
      error = "plan.json: unknown dtype '" + dtype->str() + "'";
      return false;
    }
    for (const json::Value &d : *shape) {
      auto i = d.getAsInteger();
      if (!i || *i < 0) {
        error = "plan.json: bad shape of '" + spec.name + "'";
        return false;
      }
      spec.shape.push_back(*i);
    }
    out.push_back(std::move(spec));
  }
  return true;
}

bool Program::load(const std::string &dir, std::string &error) {
  dir_ = dir;
  std::string planPath = dir + "/plan.json";
  json::Value parsed = nullptr;
  if (!readJsonFile(planPath, "zero-opt-plan",
                    "(is this a folder written by zero-opt -o?)", parsed,
                    error))
    return false;
  const json::Object *plan = parsed.getAsObject();
  if (auto report = plan->getString("report")) {
    error = dir + " holds a " + report->str() +
            " report (zero-opt --report=" + report->str() +
            "), not a program; compile without --report to run the model";
    return false;
  }
  int64_t abi = plan->getInteger("runtime_abi").value_or(-1);
  if (abi != zero_rt_abi_version()) {
    error = planPath + ": compiled for runtime interface " +
            std::to_string(abi) + ", this zero-run has " +
            std::to_string(zero_rt_abi_version()) + "; recompile the model";
    return false;
  }
  worldSize_ = plan->getInteger("world_size").value_or(1);
  stage_ = plan->getInteger("stage").value_or(0);
  overlapComm_ = plan->getBoolean("overlap_comm").value_or(true);
  paramsFile = plan->getString("parameters").value_or("").str();
  model_ = plan->getString("model").value_or("").str();
  modelPath_ = plan->getString("model_path").value_or(model_).str();
  modelHash_ = plan->getString("model_hash").value_or("").str();
  std::string target = plan->getString("target").value_or("cpu").str();
  if (target != "cpu" && target != "cuda") {
    error = planPath + ": unknown target '" + target + "'";
    return false;
  }
  cuda_ = target == "cuda";
  cudaAbi_ = plan->getInteger("cuda_runtime_abi").value_or(-1);
  const json::Object *fns = plan->getObject("functions");
  if (!fns || fns->empty()) {
    error = planPath + ": no step functions";
    return false;
  }
  library_ = dir + "/" + plan->getString("library").value_or("step.so").str();
  for (const auto &kv : *fns) {
    const json::Object *o = kv.second.getAsObject();
    Function f;
    if (!o || !o->getString("entry")) {
      error = planPath + ": malformed function '" + kv.first.str() + "'";
      return false;
    }
    f.entry = o->getString("entry")->str();
    if (!parseBuffers(o->getArray("arguments"), "arguments", f.arguments,
                      error) ||
        !parseBuffers(o->getArray("results"), "results", f.results, error))
      return false;
    if (const json::Object *m = o->getObject("memory"))
      if (const json::Object *a = m->getObject("arena"))
        f.arenaBytes = a->getInteger("bytes").value_or(0);
    functions[kv.first.str()] = std::move(f);
  }
  if (const json::Object *t = plan->getObject("training")) {
    Training tr;
    tr.optimizer = t->getString("optimizer").value_or("").str();
    tr.lr = t->getNumber("lr").value_or(0);
    tr.accumulation = t->getInteger("gradient_accumulation_steps").value_or(1);
    tr.microBatch = t->getInteger("micro_batch_size").value_or(0);
    tr.clip = t->getNumber("gradient_clipping").value_or(0);
    tr.precision = t->getString("precision").value_or("fp32").str();
    tr.seed = uint64_t(t->getInteger("seed").value_or(0));
    if (const json::Object *s = t->getObject("lr_schedule")) {
      Schedule &sc = tr.schedule;
      sc.type = s->getString("type").value_or("constant").str();
      sc.warmupMinLr = s->getNumber("warmup_min_lr").value_or(0);
      sc.warmupMaxLr = s->getNumber("warmup_max_lr").value_or(tr.lr);
      sc.warmupNumSteps = s->getInteger("warmup_num_steps").value_or(1000);
      sc.totalNumSteps = s->getInteger("total_num_steps").value_or(0);
      sc.warmupType = s->getString("warmup_type").value_or("log").str();
    }
    if (const json::Object *l = t->getObject("loss_scaling")) {
      // Keys the plan leaves out keep DeepSpeed's defaults.
      LossScaling ls;
      ls.lossScale = l->getNumber("loss_scale").value_or(ls.lossScale);
      ls.initialScalePower =
          l->getInteger("initial_scale_power").value_or(ls.initialScalePower);
      ls.window = l->getInteger("loss_scale_window").value_or(ls.window);
      ls.hysteresis = l->getInteger("hysteresis").value_or(ls.hysteresis);
      ls.consecutiveHysteresis = l->getBoolean("consecutive_hysteresis")
                                     .value_or(ls.consecutiveHysteresis);
      ls.minScale = l->getNumber("min_loss_scale").value_or(ls.minScale);
      if (ls.window < 1 || ls.hysteresis < 1 || ls.minScale <= 0) {
        error = planPath + ": training.loss_scaling needs "
                           "loss_scale_window and hysteresis >= 1 and "
                           "min_loss_scale > 0";
        return false;
      }
      tr.lossScaling = ls;
    }
    if (const json::Object *c = plan->getObject("checkpoint"))
      tr.tagValidation =
          c->getString("tag_validation").value_or(tr.tagValidation).str();
    training_ = tr;
  }
  return true;
}

bool Program::open(std::string &error) {
  handle = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = "cannot load " + library_ + ": " + dlerror();
    return false;
  }
  for (auto &[name, f] : functions) {
    f.fn = reinterpret_cast<void (*)(void **)>(dlsym(handle, f.entry.c_str()));
    if (!f.fn) {
      error = library_ + ": no entry '" + f.entry + "'";
      return false;
    }
  }
  return true;
}

const Function *Program::function(const std::string &name) const {
  auto it = functions.find(name);
  return it == functions.end() ? nullptr : &it->second;
}

/// `a` (floats) as floats of type `to`, rounded to nearest even: the 16-bit
/// copy of an fp32 initializer, or an fp32 master weight of a stored 16-bit
/// one.
static Array convertFloats(const Array &a, DType to) {
  Array out;
  out.name = a.name;
  out.dtype = to;
  out.shape = a.shape;
  out.data.assign(a.numel() * itemSize(to), 0);
  convertElements(a.data.data(), a.dtype, out.data.data(), to, a.numel());
  return out;
}

/// Rank `rank`'s flat shard of `full` as `spec` lays it out, in `full`'s
/// element type, zero past the tensor's end.
static Array shardOf(const Array &full, const BufferSpec &spec, int64_t rank) {
  Array shard;
  shard.name = spec.name;
  shard.dtype = full.dtype;
  shard.shape = spec.shape;
  size_t es = full.itemSize();
  shard.data.assign(spec.numel() * es, 0);
  int64_t size = spec.numel(), first = rank * size;
  int64_t count =
      std::max<int64_t>(0, std::min<int64_t>(size, spec.fullNumel - first));
  if (count > 0)
    std::memcpy(shard.data.data(), full.data.data() + first * es, count * es);
  return shard;
}

bool Program::loadParameters(const Function &fn, std::vector<Array> &params,
                             std::string &error, const std::string &file,
                             int64_t rank) const {
  params.clear();
  std::vector<Array> stored;
  std::string path = file.empty() ? dir_ + "/" + paramsFile : file;
  if (!readNpz(path, stored, error))
    return false;
  // A master weight starts from its parameter's stored value.
  auto source = [](const BufferSpec &spec) -> const std::string & {
    return spec.isMaster() ? spec.stateOf : spec.name;
  };
  // Readers left per stored array: the last one takes it without a copy.
  std::map<std::string, int> readers;
  for (const BufferSpec &spec : fn.arguments)
    if (spec.initialized())
      ++readers[source(spec)];
  for (const BufferSpec &spec : fn.arguments) {
    if (!spec.initialized())
      continue;
    const std::string &name = source(spec);
    auto found = std::find_if(stored.begin(), stored.end(),
                              [&](const Array &a) { return a.name == name; });
    if (found == stored.end()) {
      error = path + ": no array for " + spec.role + " '" + name + "'";
      return false;
    }
    // Floats convert to the argument's type (16-bit copies of fp32
    // initializers, fp32 masters of 16-bit ones).
    bool convertible = found->dtype == spec.dtype ||
                       (isFloatType(found->dtype) && isFloatType(spec.dtype));
    Array a;
    if (convertible && spec.sharded() && found->shape == spec.fullShape) {
      a = shardOf(*found, spec, rank);
    } else if (convertible && found->shape == spec.shape) {
      a = --readers[name] == 0 ? std::move(*found) : *found;
    } else {
      error = path + ": " + spec.role + " '" + name + "' is " +
              dtypeName(found->dtype) + " " + formatShape(found->shape) +
              "; the model expects " + dtypeName(spec.dtype) + " " +
              formatShape(spec.sharded() ? spec.fullShape : spec.shape);
      return false;
    }
    if (a.dtype != spec.dtype)
      a = convertFloats(a, spec.dtype);
    a.name = spec.name;
    params.push_back(std::move(a));
  }
  return true;
}

bool Program::openFrozen(const Function &fn, NpzReader &reader,
                         std::vector<const NpzReader::Member *> &members,
                         std::string &error) const {
  members.clear();
  if (!reader.open(dir_ + "/" + paramsFile, error))
    return false;
  for (const NpzReader::Member &m : reader.members())
    if (fn.argumentIndex(m.name) < 0 &&
        (m.dtype == DType::F32 || m.dtype == DType::F64 ||
         m.dtype == DType::F16))
      members.push_back(&m);
  return true;
}

bool Program::loadFrozen(const Function &fn, std::vector<Array> &frozen,
                         std::string &error) const {
  frozen.clear();
  // Only the frozen members are read: the trained ones may be large.
  NpzReader reader;
  std::vector<const NpzReader::Member *> members;
  if (!openFrozen(fn, reader, members, error))
    return false;
  for (const NpzReader::Member *m : members) {
    Array a;
    if (!reader.readArray(*m, a, error))
      return false;
    frozen.push_back(std::move(a));
  }
  return true;
}

bool Program::loadStates(const Function &fn, std::vector<Array> &states,
                         std::string &error) const {
  states.clear();
  std::vector<Array> stored;
  std::string path = dir_ + "/" + paramsFile;
  if (!readNpz(path, stored, error))
    return false;
  for (const BufferSpec &spec : fn.arguments) {
    if (spec.role != "optimizer_state")
      continue;
    for (Array &a : stored)
      if (a.name == spec.name) {
        if (a.dtype != spec.dtype || a.shape != spec.shape) {
          error = path + ": state '" + spec.name +
                  "' has the wrong type or "
                  "shape";
          return false;
        }
        states.push_back(std::move(a));
      }
  }
  return true;
}

Array zero::rt::makeArray(const BufferSpec &spec) {
  Array a;
  a.name = spec.name;
  a.dtype = spec.dtype;
  a.shape = spec.shape;
  a.data.assign(spec.bytes(), 0);
  return a;
}
