//===- zero-run.cpp - run a program compiled by zero-opt -------*- C++ -*-===//
#include "zero-opt/Export/ONNX/ModelFile.h"
#include "zero-rt/Batches.h"
#include "zero-rt/Checkpointing.h"
#include "zero-rt/Comm.h"
#include "zero-rt/CudaDevice.h"
#include "zero-rt/Files.h"
#include "zero-rt/Memory.h"
#include "zero-rt/Npz.h"
#include "zero-rt/RuntimeCUDA.h"
#include "zero-rt/Step.h"
#include "zero-rt/Trace.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <malloc.h>
#include <map>
#include <optional>

using namespace zero::rt;
namespace cl = llvm::cl;
namespace onnx_file = zero::onnx_file;

static int fail(const llvm::Twine &msg) {
  // One write per message: ranks share the terminal.
  std::string line = ("zero-run: error: " + msg + "\n").str();
  llvm::errs() << line;
  llvm::errs().flush();
  return 1;
}

namespace {
struct Options {
  std::string dir, data, out, log, saveWeights, loadWeights, stats, trace;
  int64_t steps = 0;
  std::string saveCheckpoint, resume;
  int64_t checkpointEvery = 0, keepCheckpoints = 0;
  std::string exportOnnx;
  onnx_file::ExternalDataMode externalData = onnx_file::ExternalDataMode::Auto;
};
} // namespace

/// The whole tensor behind a sharded parameter: every rank's shard,
/// gathered, unpadded and reshaped.
static Array gatherFull(const BufferSpec &spec, const Array &shard) {
  int64_t n = commWorldSize(), bytes = spec.numel() * shard.itemSize();
  std::vector<char> all(n * bytes);
  commAllGatherBytes(shard.data.data(), all.data(), bytes);
  Array a;
  a.name = spec.name;
  a.dtype = shard.dtype;
  a.shape = spec.fullShape;
  a.data.assign(all.begin(), all.begin() + spec.fullNumel * shard.itemSize());
  return a;
}

/// Each 16-bit parameter set to its fp32 master weight rounded, as the next
/// step would use it: at stages 1-2 the step gathers the parameter from the
/// master's shards when it starts, so between steps the parameter's buffer
/// is one update behind. Collective where the master is sharded and the
/// parameter is not: every rank calls it.
static void roundMasters(const Function &fn, std::vector<Array> &arrays,
                         const std::vector<size_t> &paramIdx,
                         const std::map<std::string, size_t> &masterIdx) {
  for (size_t i : paramIdx) {
    auto m = masterIdx.find(fn.arguments[i].name);
    if (m == masterIdx.end())
      continue;
    const BufferSpec &ms = fn.arguments[m->second];
    const Array &master = arrays[m->second];
    Array &p = arrays[i];
    Array full;
    const Array *from = &master;
    if (ms.sharded() && !fn.arguments[i].sharded())
      from = &(full = gatherFull(ms, master));
    convertElements(from->data.data(), from->dtype, p.data.data(), p.dtype,
                    p.numel());
  }
}

/// `device`: a CUDA run, whose device memory is reported beside the
/// step's buffers: what the runtime held after its setup (context, cuBLAS,
/// NCCL, the kernels), the peak, and the bytes the program asked for (the
/// arena and its buffers).
static bool writeStats(const std::string &path, int64_t steps,
                       CudaDevice *device, int64_t programBytes,
                       std::string &error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const CommStats &st = commStats();
  static const char *names[] = {"all_reduce", "reduce_scatter", "all_gather"};
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("world_size", commWorldSize());
    j.attribute("steps", steps);
    j.attributeObject("bytes_sent_per_rank", [&] {
      for (int k = 0; k < 3; ++k)
        j.attribute(names[k], st.bytesSent[k]);
    });
    j.attributeObject("calls", [&] {
      for (int k = 0; k < 3; ++k)
        j.attribute(names[k], st.calls[k]);
    });
    // This rank's step buffers: arguments, results and temporaries.
    const MemStats &m = memStats();
    j.attributeObject("memory", [&] {
      j.attribute("peak", m.totalPeak);
      j.attributeObject("categories", [&] {
        for (int c = 0; c < ZERO_RT_MEM_NUM_CATEGORIES; ++c)
          j.attributeObject(memoryCategoryName(c),
                            [&] { j.attribute("peak", m.peak[c]); });
      });
    });
    if (device)
      j.attributeObject("device_memory", [&] {
        int64_t peak = device->memoryPeak();
        j.attribute("runtime", device->runtimeBytes());
        j.attribute("peak", peak);
        j.attribute("program_peak", peak - device->runtimeBytes());
        j.attribute("program_allocated", programBytes);
      });
  });
  os << "\n";
  return writeTextFile(path, text, error);
}

/// The trace file of this rank: FILE itself on rank 0, FILE with ".r"
/// before its extension on rank r.
static std::string tracePath(const std::string &path) {
  int64_t r = commRank();
  if (r == 0)
    return path;
  llvm::StringRef p(path);
  size_t dot = p.rfind('.');
  size_t slash = p.rfind('/');
  if (dot == llvm::StringRef::npos ||
      (slash != llvm::StringRef::npos && dot < slash))
    return path + "." + std::to_string(r);
  return (p.substr(0, dot) + "." + std::to_string(r) + p.substr(dot)).str();
}

/// Chrome trace events (chrome://tracing, ui.perfetto.dev): steps, the
/// compute between waits, waits, and collectives on the communication
/// thread.
static bool writeTrace(const std::string &path, bool streams,
                       std::string &error) {
  std::vector<TraceEvent> events = traceEvents();
  // Compute is the step's time outside its waits: one sweep over the steps
  // and the waits, both in time order (waits happen on the step's thread).
  std::vector<const TraceEvent *> steps, waits;
  for (const TraceEvent &e : events) {
    if (e.category == "step")
      steps.push_back(&e);
    else if (e.category == "wait")
      waits.push_back(&e);
  }
  auto byTime = [](const TraceEvent *a, const TraceEvent *b) {
    return a->ts < b->ts;
  };
  llvm::sort(steps, byTime);
  llvm::sort(waits, byTime);
  std::vector<TraceEvent> compute;
  size_t w = 0;
  for (const TraceEvent *s : steps) {
    double t = s->ts, end = s->ts + s->dur;
    for (; w < waits.size() && waits[w]->ts < end; ++w) {
      if (waits[w]->ts > t)
        compute.push_back({"compute", "compute", 1, t, waits[w]->ts - t});
      t = std::max(t, waits[w]->ts + waits[w]->dur);
    }
    if (end > t)
      compute.push_back({"compute", "compute", 1, t, end - t});
  }
  llvm::append_range(events, compute);
  return writeChromeTrace(tracePath(path), commRank(), events, streams, error);
}

/// Buffers of one function call: arguments then results. A CUDA step gets
/// device copies of its device-resident buffers, in one allocation next to
/// the arena; the host arrays mirror them and are refreshed only where the
/// host reads them (results after each step, the rest for checkpoints and
/// saved weights).
struct Buffers {
  std::vector<Array> arrays;
  std::vector<void *> ptrs; ///< what the step gets
  std::vector<bool> onDevice;
  CudaDevice *device = nullptr;
  int64_t deviceBytes = 0;

  void finish(const Function &fn, CudaDevice *dev) {
    device = dev;
    std::vector<const BufferSpec *> specs;
    for (const auto *list : {&fn.arguments, &fn.results})
      for (const BufferSpec &spec : *list)
        specs.push_back(&spec);
    std::vector<int64_t> offsets;
    for (size_t i = 0; i < arrays.size(); ++i) {
      onDevice.push_back(device && specs[i]->onDevice);
      offsets.push_back(deviceBytes);
      if (onDevice.back())
        deviceBytes += (int64_t(arrays[i].data.size()) + 255) / 256 * 256;
    }
    char *base = nullptr;
    if (device) {
      device->arenaInit(fn.arenaBytes);
      base = static_cast<char *>(device->alloc(deviceBytes));
    }
    for (size_t i = 0; i < arrays.size(); ++i)
      ptrs.push_back(onDevice[i] ? static_cast<void *>(base + offsets[i])
                                 : arrays[i].data.data());
  }
  void *host(size_t i) { return arrays[i].data.data(); }
  void upload(size_t i) {
    if (onDevice[i])
      device->copy(ptrs[i], arrays[i].data.data(), arrays[i].data.size());
  }
  void download(size_t i) {
    if (onDevice[i])
      device->copy(arrays[i].data.data(), ptrs[i], arrays[i].data.size());
  }
  void upload(size_t first, size_t end) {
    for (size_t i = first; i < end; ++i)
      upload(i);
  }
  void download(size_t first, size_t end) {
    for (size_t i = first; i < end; ++i)
      download(i);
  }
  /// Waits for the step (a CUDA step only queues its work).
  void synchronize() {
    if (device)
      device->synchronize();
  }
};

static int infer(const Program &prog, const Options &o, CudaDevice *device) {
  const Function *fn = prog.function("forward");
  if (!fn)
    return fail(o.dir + " has no forward function");
  if (o.out.empty())
    return fail("--infer needs --out FILE.npz");
  std::vector<Array> data, params;
  std::string error;
  if (!readNpz(o.data, data, error))
    return fail(error);
  Batches batches;
  if (!batches.bind(*fn, std::move(data), error))
    return fail(o.data + ": " + error);
  if (!prog.loadParameters(*fn, params, error, o.loadWeights))
    return fail(error);

  int64_t n = batches.samples(), b = batches.batchSize();
  int64_t count = o.steps ? o.steps : (n + b - 1) / b;
  Buffers buf;
  std::vector<Array> outs;
  size_t nextParam = 0;
  for (const BufferSpec &spec : fn->arguments)
    buf.arrays.push_back(spec.initialized() ? std::move(params[nextParam++])
                                            : makeArray(spec));
  for (const BufferSpec &spec : fn->results) {
    buf.arrays.push_back(makeArray(spec));
    Array a = makeArray(spec);
    a.shape.insert(a.shape.begin(), count);
    a.data.assign(a.data.size() * count, 0);
    outs.push_back(std::move(a));
  }
  buf.finish(*fn, device);
  size_t firstResult = fn->arguments.size();
  buf.upload(0, firstResult);
  for (int64_t s = 0; s < count; ++s) {
    for (size_t i = 0; i < fn->arguments.size(); ++i)
      if (batches.inputFor(i) >= 0) {
        batches.copyRows(batches.inputFor(i), s * b, b, buf.host(i));
        buf.upload(i);
      }
    fn->run(buf.ptrs.data());
    buf.synchronize();
    buf.download(firstResult, buf.arrays.size());
    for (size_t r = 0; r < fn->results.size(); ++r) {
      const Array &res = buf.arrays[firstResult + r];
      std::memcpy(outs[r].data.data() + s * res.data.size(), res.data.data(),
                  res.data.size());
    }
  }
  // Every rank evaluated the same batches: one writes them.
  if (commRank() != 0)
    return 0;
  if (!writeNpz(o.out, outs, error))
    return fail(error);
  llvm::errs() << "zero-run: evaluated " << count << " batches of " << b
               << " samples -> " << o.out << "\n";
  return 0;
}

static double scalarOf(const Array &a) {
  return a.dtype == DType::F64 ? a.as<double>()[0] : a.as<float>()[0];
}

/// A log value: JSON has no NaN or infinity, so those are null.
static std::string jsonNumber(double v) {
  return std::isfinite(v) ? llvm::formatv("{0:e9}", v).str() : "null";
}

/// Every rank stopped at the same step for the same reason: no abort.
static constexpr int kAllRanksStopped = 2;

static int train(const Program &prog, const Options &o, CudaDevice *device) {
  const Function *fn = prog.function("train_step");
  if (!fn || !prog.training())
    return fail(o.dir + " holds no training step (the model has no scalar "
                        "loss output); run it with --infer, or compile with "
                        "--mode=train --loss=NAME");
  const Training &tr = *prog.training();
  std::vector<Array> data, params;
  std::string error;
  if (!readNpz(o.data, data, error))
    return fail(error);
  Batches batches;
  if (!batches.bind(*fn, std::move(data), error))
    return fail(o.data + ": " + error);
  int64_t rank = commRank(), world = commWorldSize();
  if (!prog.loadParameters(*fn, params, error, o.loadWeights, rank))
    return fail(error);

  std::unique_ptr<llvm::raw_fd_ostream> log;
  if (!o.log.empty() && rank == 0) {
    std::error_code ec;
    log = std::make_unique<llvm::raw_fd_ostream>(o.log, ec);
    if (ec)
      return fail("cannot write " + o.log + ": " + ec.message());
  }

  std::vector<Array> states;
  if (!prog.loadStates(*fn, states, error))
    return fail(error);
  Buffers buf;
  size_t nextParam = 0;
  std::vector<size_t> paramIdx;
  int lrIdx = -1, stepIdx = -1, scaleIdx = -1;
  // The fp32 master weight of each 16-bit parameter, by parameter name.
  std::map<std::string, size_t> masterIdx;
  for (const BufferSpec &spec : fn->arguments) {
    if (spec.initialized()) {
      if (spec.isMaster())
        masterIdx[spec.stateOf] = buf.arrays.size();
      else
        paramIdx.push_back(buf.arrays.size());
      buf.arrays.push_back(std::move(params[nextParam++]));
      continue;
    }
    // States start from the model's values (ONNX training models) or from
    // the optimizer's initial value.
    auto stored =
        std::find_if(states.begin(), states.end(),
                     [&](const Array &a) { return a.name == spec.name; });
    if (spec.role == "optimizer_state" && stored != states.end()) {
      buf.arrays.push_back(std::move(*stored));
      continue;
    }
    Array a = makeArray(spec);
    if (spec.role == "optimizer_state" && spec.init != 0.0) {
      if (a.dtype == DType::F32)
        std::fill_n(a.as<float>(), a.numel(), (float)spec.init);
      else if (a.dtype == DType::F64)
        std::fill_n(a.as<double>(), a.numel(), spec.init);
      else
        return fail("optimizer state '" + spec.name +
                    "' is neither float32 nor float64");
    }
    if (spec.role == "hyperparameter") {
      if (spec.name == "lr")
        lrIdx = buf.arrays.size();
      else if (spec.name == "step")
        stepIdx = buf.arrays.size();
      else if (spec.name == "loss_scale")
        scaleIdx = buf.arrays.size();
    }
    buf.arrays.push_back(std::move(a));
  }
  // Resuming replaces the initial state with the checkpoint's, mapped onto
  // this plan's layout.
  RunState run;
  if (!o.resume.empty()) {
    bool ok = loadCheckpoint(prog, *fn, rank, o.resume, buf.arrays, run, error);
    // The ranks mostly fail alike: one reports, and all stop without an
    // abort.
    if (!allRanksOk(ok, error)) {
      if (!error.empty())
        fail(error);
      return kAllRanksStopped;
    }
  }
  size_t firstResult = buf.arrays.size();
  for (const BufferSpec &spec : fn->results)
    buf.arrays.push_back(makeArray(spec));
  buf.finish(*fn, device);
  buf.upload(0, firstResult);
  for (const auto *specs : {&fn->arguments, &fn->results})
    for (const BufferSpec &spec : *specs)
      memTrack(spec.category, spec.bytes());
  // The loss is the result whose role says so, else the one named so, else
  // the first scalar float one.
  int lossIdx = -1, normIdx = fn->resultIndex("grad_norm");
  for (size_t r = 0; lossIdx < 0 && r < fn->results.size(); ++r)
    if (fn->results[r].role == "loss")
      lossIdx = r;
  if (lossIdx < 0)
    lossIdx = fn->resultIndex("loss");
  for (size_t r = 0; lossIdx < 0 && r < fn->results.size(); ++r)
    if (fn->results[r].numel() == 1 && (fn->results[r].dtype == DType::F32 ||
                                        fn->results[r].dtype == DType::F64))
      lossIdx = r;
  if (lossIdx < 0)
    return fail(o.dir + "/plan.json: the training step has no scalar loss");
  // fp16: the step overflowed where its gradient norm is not finite (the
  // norm is summed over the ranks, so they all agree), and then it left
  // parameters and states as they were.
  std::optional<LossScaler> scaler;
  if (scaleIdx >= 0) {
    if (!tr.lossScaling || normIdx < 0)
      return fail(o.dir + "/plan.json: the step takes a loss scale, but the "
                          "plan has no training.loss_scaling or the step no "
                          "grad_norm");
    scaler.emplace(*tr.lossScaling);
    if (run.lossScaler)
      scaler->restore(*run.lossScaler);
  }

  // Global batch G = N x b x g; micro-batch j of rank r is rows
  // first + (s - s0)*G + (j*N + r)*b ... + b of step s, where a resumed run
  // starts at step s0 with `first` samples read.
  int64_t n = batches.samples(), local = batches.batchSize();
  int64_t accum = std::max<int64_t>(1, tr.accumulation);
  int64_t micro = local / accum, global = local * world;
  int64_t s0 = run.steps, first = run.samples;
  // --steps counts from the start of training, so a resumed run with the
  // same command line stops where the uninterrupted one would.
  int64_t steps =
      o.steps ? o.steps
              : s0 + (std::max<int64_t>(0, n - first) + global - 1) / global;
  // Optimizer steps taken: the step count and the learning-rate schedule
  // advance only on steps that were not skipped, as DeepSpeed's do.
  int64_t taken = run.optimizerSteps;
  auto checkpoint = [&](int64_t done) {
    buf.download(0, firstResult);
    roundMasters(*fn, buf.arrays, paramIdx, masterIdx);
    RunState st{done, taken, first + (done - s0) * global, std::nullopt};
    if (scaler)
      st.lossScaler = scaler->state();
    bool ok = saveCheckpoint(prog, *fn, buf.arrays, st, o.saveCheckpoint,
                             o.keepCheckpoints, error);
    if (!ok && !error.empty())
      fail(error);
    return ok;
  };
  for (int64_t s = s0; s < steps; ++s) {
    for (size_t i = 0; i < fn->arguments.size(); ++i) {
      int d = batches.inputFor(i);
      if (d < 0)
        continue;
      size_t rowBytes = fn->arguments[i].bytes() / local;
      for (int64_t j = 0; j < accum; ++j)
        batches.copyRows(
            d, first + (s - s0) * global + (j * world + rank) * micro, micro,
            static_cast<char *>(buf.host(i)) + j * micro * rowBytes);
      buf.upload(i);
    }
    double lr = tr.schedule.lrAt(taken, tr.lr);
    if (lrIdx >= 0)
      buf.arrays[lrIdx].as<double>()[0] = lr;
    if (stepIdx >= 0)
      buf.arrays[stepIdx].as<double>()[0] = double(taken + 1);
    double scale = scaler ? scaler->scale() : 1.0;
    if (scaler)
      buf.arrays[scaleIdx].as<double>()[0] = scale;
    auto t0 = std::chrono::steady_clock::now();
    double us0 = commNow();
    fn->run(buf.ptrs.data());
    buf.synchronize();
    traceRecord({"step " + std::to_string(s), "step", 0, us0, commNow() - us0});
    buf.download(firstResult, buf.arrays.size());
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
    double loss = scalarOf(buf.arrays[firstResult + lossIdx]);
    double norm =
        normIdx >= 0 ? scalarOf(buf.arrays[firstResult + normIdx]) : 0.0;
    bool overflow = scaler && !std::isfinite(norm);
    if (log) {
      *log << "{\"step\": " << s << ", \"loss\": " << jsonNumber(loss);
      if (normIdx >= 0)
        *log << ", \"grad_norm\": " << jsonNumber(norm);
      if (lrIdx >= 0)
        *log << ", \"lr\": " << jsonNumber(lr);
      if (scaler)
        *log << ", \"loss_scale\": " << jsonNumber(scale)
             << ", \"skipped\": " << (overflow ? "true" : "false");
      *log << llvm::formatv(", \"time_ms\": {0:f3}}\n", ms);
      log->flush();
    }
    if (!overflow)
      ++taken;
    if (scaler && !scaler->update(overflow, error)) {
      if (rank == 0)
        fail("step " + std::to_string(s) + ": " + error);
      return kAllRanksStopped;
    }
    if (!o.saveCheckpoint.empty() &&
        ((o.checkpointEvery > 0 && (s + 1) % o.checkpointEvery == 0) ||
         s + 1 == steps)) {
      if (!checkpoint(s + 1))
        return kAllRanksStopped;
    }
  }
  if (rank == 0)
    llvm::errs() << "zero-run: trained "
                 << (s0 ? std::to_string(steps - s0) + " steps (" +
                              std::to_string(s0) + " to " +
                              std::to_string(steps) + ")"
                        : std::to_string(steps) + " steps")
                 << " of " << global << " samples (" << tr.optimizer << ", "
                 << world << (world == 1 ? " rank" : " ranks")
                 << ", ZeRO stage " << prog.stage() << ")"
                 << (scaler ? ", " + std::to_string(steps - taken) +
                                  " skipped on overflow"
                            : std::string())
                 << "\n";
  if (!o.stats.empty() && rank == 0 &&
      !writeStats(o.stats, steps, device, buf.deviceBytes + fn->arenaBytes,
                  error))
    return fail(error);
  if (!o.trace.empty() && !writeTrace(o.trace, device != nullptr, error))
    return fail(error);
  if (!o.saveWeights.empty() || !o.exportOnnx.empty()) {
    buf.download(0, firstResult);
    std::vector<Array> weights;
    for (size_t i : paramIdx) {
      // A 16-bit parameter is saved as its fp32 master weight.
      auto m = masterIdx.find(fn->arguments[i].name);
      size_t from = m == masterIdx.end() ? i : m->second;
      const BufferSpec &spec = fn->arguments[from];
      Array w = spec.sharded() ? gatherFull(spec, buf.arrays[from])
                               : buf.arrays[from];
      w.name = fn->arguments[i].name;
      weights.push_back(std::move(w));
    }
    // Frozen initializers are saved too, unchanged, so the file holds the
    // whole model.
    std::vector<Array> frozen;
    if (!prog.loadFrozen(*fn, frozen, error))
      return fail(error);
    for (Array &a : frozen)
      weights.push_back(std::move(a));
    if (rank != 0)
      return 0;
    if (!o.saveWeights.empty() && !writeNpz(o.saveWeights, weights, error))
      return fail(error);
    if (!o.exportOnnx.empty()) {
      std::vector<ArrayView> views;
      for (const Array &a : weights)
        views.push_back({a.name,
                         a.dtype,
                         a.shape,
                         a.data.data(),
                         a.data.size(),
                         false,
                         {}});
      if (!onnx_file::exportModel(prog.modelPath(), views, o.exportOnnx,
                                  o.externalData, prog.modelHash(), error))
        return fail(error);
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // A step frees and reallocates the same large temporaries every
  // iteration; keep them in the heap instead of mapping fresh zeroed pages
  // each time (page faults and zeroing cost about 5% of a GPT step).
  // M_MMAP_THRESHOLD cannot exceed 32 MiB, and setting the trim threshold
  // freezes it at 128 KiB, so mmap is turned off instead.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  cl::OptionCategory cat("zero-run options");
  cl::opt<std::string> dir(cl::Positional, cl::desc("<OUT folder>"),
                           cl::Required, cl::cat(cat));
  cl::opt<bool> inferMode("infer",
                          cl::desc("Evaluate the graph outputs for each batch "
                                   "instead of training"),
                          cl::cat(cat));
  cl::opt<std::string> data("data",
                            cl::desc("Data (.npz), one array per "
                                     "graph input"),
                            cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<std::string> out("out", cl::desc("With --infer: outputs (.npz)"),
                           cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<int64_t> steps("steps",
                         cl::desc("Steps (default: one pass over the data)"),
                         cl::init(0), cl::cat(cat));
  cl::opt<std::string> log("log",
                           cl::desc("Training log, one JSON line per "
                                    "optimizer step"),
                           cl::value_desc("FILE.jsonl"), cl::cat(cat));
  cl::opt<std::string> saveWeights("save-weights",
                                   cl::desc("Write the trained weights (.npz)"),
                                   cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<std::string> loadWeights(
      "load-weights",
      cl::desc("Start from these weights instead of the "
               "model's (.npz)"),
      cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<std::string> saveCheckpoint(
      "save-checkpoint",
      cl::desc("Write checkpoints (every rank's shards and a manifest) under "
               "this folder, every --checkpoint-every steps and at the end"),
      cl::value_desc("DIR"), cl::cat(cat));
  cl::opt<int64_t> checkpointEvery(
      "checkpoint-every",
      cl::desc("Optimizer steps between checkpoints (default: only at the "
               "end)"),
      cl::init(0), cl::cat(cat));
  cl::opt<int64_t> keepCheckpoints(
      "keep-checkpoints",
      cl::desc("Newest checkpoints to keep (default 0: all)"), cl::init(0),
      cl::cat(cat));
  cl::opt<std::string> resume(
      "resume",
      cl::desc("Continue from a checkpoint: a step-N folder, or a "
               "--save-checkpoint folder (its newest whole checkpoint); any "
               "world size, stage or precision"),
      cl::value_desc("DIR"), cl::cat(cat));
  cl::opt<std::string> exportOnnx(
      "export-onnx",
      cl::desc("After training, write the model the plan was compiled from "
               "with the trained weights as its initializers (ONNX)"),
      cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<onnx_file::ExternalDataMode> externalData(
      "external-data", cl::desc("With --export-onnx: where the weights go"),
      onnx_file::externalDataValues(),
      cl::init(onnx_file::ExternalDataMode::Auto), cl::cat(cat));
  // --stats is LLVM's own option name, so it is taken out before parsing.
  std::string stats;
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if ((a == "--stats" || a == "-stats") && i + 1 < argc) {
      stats = argv[++i];
      continue;
    }
    if (a.consume_front("--stats=") || a.consume_front("-stats=")) {
      stats = a.str();
      continue;
    }
    args.push_back(argv[i]);
  }
  cl::opt<std::string> trace(
      "trace",
      cl::desc("Write a Chrome/Perfetto timeline of each rank: compute, "
               "collectives (bytes, sequence number) and waits (rank r > 0 "
               "writes FILE with .r before its extension)"),
      cl::value_desc("FILE.json"), cl::cat(cat));
  enum class Comm : int {
    Nccl = ZERO_RT_CUDA_COMM_NCCL,
    Mpi = ZERO_RT_CUDA_COMM_MPI
  };
  cl::opt<Comm> comm(
      "comm",
      cl::desc("How a --target=cuda program's collectives run (default "
               "nccl)"),
      cl::values(
          clEnumValN(Comm::Nccl, "nccl", "NCCL on the GPUs, one GPU per rank"),
          clEnumValN(Comm::Mpi, "mpi",
                     "MPI through host memory: ranks may share a "
                     "GPU")),
      cl::init(Comm::Nccl), cl::cat(cat));
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      args.size(), args.data(),
      "zero-run: run a compiled model\n"
      "  --stats FILE.json  bytes sent per collective, peak bytes per memory "
      "category\n");

  Program prog;
  std::string error;
  if (!prog.load(dir, error))
    return fail(error);
  if (!prog.cuda() && comm.getNumOccurrences() && comm == Comm::Nccl)
    return fail("--comm=nccl is for programs compiled with --target=cuda; " +
                dir + " runs on the CPU, whose collectives use MPI");
  // Every rank checks the world size itself, so a mismatch is an error
  // everywhere instead of a hang.
  if (!commInit(&argc, &argv, prog.worldSize(), error)) {
    fail(error);
    commFinalize();
    return 1;
  }
  if (data.empty())
    return fail("no data: pass --data FILE.npz");
  // Report files are written after training; a bad folder should not cost
  // the run.
  for (const std::string *f :
       {&stats, &trace.getValue(), &exportOnnx.getValue()}) {
    llvm::StringRef parent = llvm::sys::path::parent_path(*f);
    if (!f->empty() && !parent.empty() && !llvm::sys::fs::is_directory(parent))
      return fail("cannot write " + *f + ": folder " + parent.str() +
                  " does not exist");
  }
  if (steps < 0)
    return fail("--steps must be positive");
  if (!saveCheckpoint.empty() && llvm::sys::fs::exists(saveCheckpoint) &&
      !llvm::sys::fs::is_directory(saveCheckpoint))
    return fail("--save-checkpoint " + saveCheckpoint +
                ": not a folder (checkpoints go in step-N folders under it)");
  if (checkpointEvery < 0 || keepCheckpoints < 0)
    return fail("--checkpoint-every and --keep-checkpoints must be >= 0");
  if ((checkpointEvery || keepCheckpoints) && saveCheckpoint.empty())
    return fail("--checkpoint-every and --keep-checkpoints need "
                "--save-checkpoint DIR");
  if (!resume.empty() && !loadWeights.empty())
    return fail("--resume and --load-weights both set the weights; pass one");
  if (inferMode && (!resume.empty() || !saveCheckpoint.empty()))
    return fail("--resume and --save-checkpoint are for training, not "
                "--infer (export the weights with zero-opt --consolidate "
                "and pass --load-weights)");
  if (externalData.getNumOccurrences() && exportOnnx.empty())
    return fail("--external-data goes with --export-onnx FILE");
  if (!exportOnnx.empty() && inferMode)
    return fail("--export-onnx writes the trained model; --infer trains "
                "nothing (export a checkpoint with zero-opt --consolidate DIR "
                "--export-onnx FILE)");
  if (!exportOnnx.empty() && !llvm::sys::fs::exists(prog.modelPath()))
    return fail("--export-onnx needs the model " + dir +
                " was compiled from, and " + prog.modelPath() +
                " is gone (train with --save-checkpoint and export it with "
                "zero-opt --consolidate DIR --export-onnx FILE --model "
                "MODEL.onnx)");
  commSetOverlap(prog.overlapComm());
  if (!trace.empty())
    traceEnable();
  // A CUDA program: this rank's GPU, its streams, cuBLAS and NCCL come
  // first, since loading the step loads its kernels onto that GPU. All
  // collectives run on one communication stream (NCCL orders the
  // operations of a communicator anyway; MPI's staging thread runs one at
  // a time).
  std::optional<CudaDevice> device;
  if (prog.cuda()) {
    device.emplace();
    if (!device->load(prog.cudaRuntimeAbi(), error))
      return fail(error);
    device->init(1, int(comm.getValue()));
    device->setOverlap(prog.overlapComm());
  }
  if (!prog.open(error))
    return fail(error);
  if (device)
    device->markRuntimeMemory();
  Options o{dir,
            data,
            out,
            log,
            saveWeights,
            loadWeights,
            stats,
            trace,
            steps,
            saveCheckpoint,
            resume,
            checkpointEvery,
            keepCheckpoints,
            exportOnnx,
            externalData};
  CudaDevice *dev = device ? &*device : nullptr;
  int rc = inferMode ? infer(prog, o, dev) : train(prog, o, dev);
  if (rc == kAllRanksStopped) {
    if (device)
      device->finalize();
    commFinalize();
    return 1;
  }
  if (rc != 0 && commWorldSize() > 1)
    commAbort("stopping every rank");
  if (device)
    device->finalize();
  commFinalize();
  return rc;
}
