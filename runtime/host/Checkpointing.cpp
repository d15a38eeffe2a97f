//===- Checkpointing.cpp - saving and resuming a training run -------------===//
#include "zero-rt/Checkpointing.h"
#include "zero-rt/Comm.h"

#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <cctype>
#include <map>

using namespace zero::rt;
namespace fs = llvm::sys::fs;

bool zero::rt::isCheckpointed(const BufferSpec &spec) {
  return spec.fromModel() || spec.isMaster() || spec.role == "optimizer_state";
}

/// The layout of argument `spec` in a checkpoint of this plan; whole
/// tensors go to the ranks' files in turn.
static CheckpointTensor layoutOf(const BufferSpec &spec, int64_t &nextOwner,
                                 int64_t world) {
  CheckpointTensor t;
  t.name = spec.name;
  t.role = spec.role;
  t.stateOf = spec.stateOf;
  t.dtype = spec.dtype;
  if (spec.sharded()) {
    t.shape = spec.fullShape;
    t.shardNumel = spec.numel();
  } else {
    t.shape = spec.shape;
    t.file = nextOwner++ % world;
  }
  return t;
}

static std::string upper(std::string s) {
  for (char &c : s)
    c = char(std::toupper((unsigned char)c));
  return s;
}

bool zero::rt::allRanksOk(bool ok, std::string &error, int64_t value,
                          std::vector<int64_t> *values) {
  int64_t rank = commRank(), world = commWorldSize();
  int64_t mine[2] = {ok ? 1 : 0, value};
  std::vector<int64_t> all(2 * world);
  commAllGatherBytes(mine, all.data(), sizeof(mine));
  int64_t firstFailed = -1;
  for (int64_t r = world - 1; r >= 0; --r)
    if (all[2 * r] != 1)
      firstFailed = r;
  if (values)
    for (int64_t r = 0; r < world; ++r)
      (*values)[r] = all[2 * r + 1];
  if (firstFailed != rank)
    error.clear();
  return firstFailed < 0;
}

bool zero::rt::saveCheckpoint(const Program &prog, const Function &fn,
                              const std::vector<Array> &args,
                              const RunState &state, const std::string &root,
                              int64_t keep, std::string &error) {
  int64_t rank = commRank(), world = commWorldSize();
  std::string tag = checkpointTag(state.steps), tmp = root + "/.tmp-" + tag;
  std::vector<int64_t> values(world);
  bool ok = true;
  if (rank == 0) {
    std::error_code ec = fs::create_directories(root);
    if (!ec && fs::exists(tmp))
      ec = fs::remove_directories(tmp);
    if (!ec)
      ec = fs::create_directory(tmp);
    if (ec) {
      error = "cannot write checkpoint " + tmp + ": " + ec.message();
      ok = false;
    }
  }
  // The tag comes from the step count, which no rank can disagree on
  // unless something is badly wrong: DeepSpeed's tag_validation.
  if (!allRanksOk(ok, error, state.steps, &values))
    return false;
  std::string mode = upper(prog.training()->tagValidation);
  if (mode != "IGNORE" &&
      std::any_of(values.begin(), values.end(),
                  [&](int64_t v) { return v != values[0]; })) {
    std::string what = "the ranks disagree on the checkpoint's step (rank 0: " +
                       std::to_string(values[0]) + ")";
    if (mode == "FAIL") {
      if (rank == 0)
        error = what + " (checkpoint.tag_validation is Fail)";
      return false;
    }
    if (rank == 0)
      llvm::errs() << "zero-run: warning: " << what << "\n";
  }

  CheckpointManifest m;
  m.model = prog.model();
  m.modelPath = prog.modelPath();
  m.modelHash = prog.modelHash();
  m.worldSize = world;
  m.stage = prog.stage();
  m.precision = prog.training()->precision;
  m.optimizer = prog.training()->optimizer;
  m.steps = state.steps;
  m.optimizerSteps = state.optimizerSteps;
  m.samples = state.samples;
  m.seed = prog.training()->seed;
  m.lossScaler = state.lossScaler;
  std::vector<ArrayView> mine;
  int64_t nextOwner = 0;
  for (size_t i = 0; i < fn.arguments.size(); ++i) {
    const BufferSpec &spec = fn.arguments[i];
    if (!isCheckpointed(spec))
      continue;
    m.tensors.push_back(layoutOf(spec, nextOwner, world));
    const CheckpointTensor &t = m.tensors.back();
    if (t.sharded() || t.file == rank) {
      const Array &a = args[i];
      mine.push_back({t.name,
                      storageType(a.dtype),
                      a.shape,
                      a.data.data(),
                      a.data.size(),
                      false,
                      {}});
    }
  }
  // Frozen initializers, unchanged but part of the model: rank 0 copies
  // them from params.npz as it writes, so that a checkpoint alone
  // consolidates and exports.
  NpzReader params;
  std::vector<const NpzReader::Member *> frozen;
  ok = rank != 0 || prog.openFrozen(fn, params, frozen, error);
  for (const NpzReader::Member *f : frozen) {
    CheckpointTensor t;
    t.name = f->name;
    t.role = "frozen";
    t.dtype = f->dtype;
    t.shape = f->shape;
    m.tensors.push_back(t);
    ArrayView v{f->name, f->dtype, f->shape, nullptr, f->bytes, false, {}};
    v.read = [&params, f](uint64_t offset, void *out, size_t len,
                          std::string &err) {
      return params.read(*f, offset, out, len, err);
    };
    mine.push_back(std::move(v));
  }
  std::string file = tmp + "/" + rankFileName(rank);
  ok = ok && writeNpz(file, mine, error);
  uint64_t bytes = 0;
  if (ok) {
    if (std::error_code ec = fs::file_size(file, bytes)) {
      error = file + ": " + ec.message();
      ok = false;
    }
  }
  if (!allRanksOk(ok, error, int64_t(bytes), &values))
    return false;
  ok = true;
  if (rank == 0) {
    m.fileBytes.assign(values.begin(), values.end());
    ok = writeManifest(tmp, m, error) &&
         publishCheckpoint(tmp, root, tag, error) &&
         pruneCheckpoints(root, keep, error);
  }
  return allRanksOk(ok, error);
}

/// The model differs from the checkpoint's: one message naming the first
/// parameters or buffers that differ, else the graphs.
static bool sameModel(const Program &prog, const Function &fn,
                      const CheckpointReader &ck, std::string &error) {
  const CheckpointManifest &m = ck.manifest();
  std::string where = ck.dir() + " was written for " +
                      (m.model.empty() ? "another model" : m.model) +
                      ", this plan compiles " + prog.model();
  std::map<std::string, std::vector<int64_t>> planned, stored;
  for (const BufferSpec &spec : fn.arguments)
    if (spec.fromModel())
      planned[spec.name] = spec.sharded() ? spec.fullShape : spec.shape;
  for (const CheckpointTensor &t : m.tensors)
    if (t.role == "parameter" || t.role == "buffer")
      stored[t.name] = t.shape;
  for (const auto &[name, shape] : planned) {
    auto it = stored.find(name);
    if (it == stored.end()) {
      error = where + ": the checkpoint has no parameter '" + name + "'";
      return false;
    }
    if (it->second != shape) {
      error = where + ": parameter '" + name + "' is " +
              formatShape(it->second) + " in the checkpoint, " +
              formatShape(shape) + " in the model";
      return false;
    }
  }
  for (const auto &[name, shape] : stored)
    if (!planned.count(name)) {
      error = where + ": the model has no parameter '" + name +
              "', which the checkpoint holds";
      return false;
    }
  if (!m.modelHash.empty() && !prog.modelHash().empty() &&
      m.modelHash != prog.modelHash()) {
    error = where + ": same parameters, but another graph (model hash " +
            m.modelHash + " vs " + prog.modelHash() + ")";
    return false;
  }
  return true;
}

/// The checkpoint tensor that argument `spec` starts from: its namesake,
/// or across precisions the fp32 master weight of an fp32 parameter, or
/// the parameter a new master weight copies.
static const CheckpointTensor *sourceOf(const BufferSpec &spec,
                                        const CheckpointManifest &m) {
  if (spec.role == "parameter" && spec.dtype == DType::F32)
    if (const CheckpointTensor *t = m.masterOf(spec.name))
      return t;
  if (const CheckpointTensor *t = m.find(spec.name))
    return t;
  if (spec.isMaster())
    return m.find(spec.stateOf);
  return nullptr;
}

bool zero::rt::loadCheckpoint(const Program &prog, const Function &fn,
                              int64_t rank, const std::string &path,
                              std::vector<Array> &args, RunState &state,
                              std::string &error) {
  CheckpointReader ck;
  if (!ck.open(path, error) || !sameModel(prog, fn, ck, error))
    return false;
  const CheckpointManifest &m = ck.manifest();
  for (size_t i = 0; i < fn.arguments.size(); ++i) {
    const BufferSpec &spec = fn.arguments[i];
    if (!isCheckpointed(spec))
      continue;
    const CheckpointTensor *t = sourceOf(spec, m);
    if (!t) {
      error = ck.dir() + ": no " + spec.role + " '" + spec.name +
              "' (the checkpoint was written with optimizer " + m.optimizer +
              ", this plan uses " + prog.training()->optimizer + ")";
      return false;
    }
    const std::vector<int64_t> &shape =
        spec.sharded() ? spec.fullShape : spec.shape;
    if (t->shape != shape) {
      error = ck.dir() + ": '" + t->name + "' is " + formatShape(t->shape) +
              ", the plan's '" + spec.name + "' is " + formatShape(shape);
      return false;
    }
    int64_t count = spec.numel(), first = spec.sharded() ? rank * count : 0;
    if (!ck.read(*t, first, count, spec.dtype, args[i].data.data(), error))
      return false;
  }
  state.steps = m.steps;
  state.optimizerSteps = m.optimizerSteps;
  state.samples = m.samples;
  state.lossScaler = m.lossScaler;
  return true;
}
