//===- Compiler.cpp - the model compilation pipeline -----------*- C++ -*-===//
#include "zero-opt/Driver/Compiler.h"

#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Dialect/Zero/AutoDiff/AutoDiff.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Timeline.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Transforms/Pipelines.h"
#include "zero-opt/Target/CPU/CPUTarget.h"
#include "zero-opt/Target/CPU/Passes.h"
#include "zero-rt/Npz.h"
#include "zero-rt/Runtime.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;
using namespace mlir::zero;

/// The plan's name for a step function.
static std::string planName(func::FuncOp fn) {
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

/// The importer's view of a compile's options.
static ONNXImportOptions importOptions(const CompileOptions &options) {
  ONNXImportOptions importOpts = options.import;
  importOpts.batchSize = options.training.microBatch;
  return importOpts;
}

static LogicalResult cleanUpImport(ModuleOp module) {
  PassManager pm(module.getContext());
  buildImportCleanup(pm);
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
}

void mlir::zero::cpuLoweringOptions(const CompileOptions &options,
                                    cpu::CPULoweringOptions &o) {
  const TrainingConfig &c = options.training;
  o.overlapComm = c.overlapComm;
  o.reduceBucketSize = c.reduceBucketElements;
  o.allgatherBucketSize = c.allgatherBucketElements;
  o.prefetchBucketSize = c.prefetchElements;
  o.maxLiveParameters = c.maxLiveParameters;
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
    trained = true;
    options.training.optimizer = "onnx";
    return cleanUpImport(module);
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
  OwningOpRef<ModuleOp> module =
      importONNXModel(ctx, modelPath, importOptions(options), &params);
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

/// 1234567 -> "1,234,567".
static std::string grouped(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

static std::string humanBytes(int64_t v) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double x = v;
  int u = 0;
  while (x >= 1024 && u < 4) {
    x /= 1024;
    ++u;
  }
  return llvm::formatv("{0:f1} {1}", x, units[u]).str();
}

void mlir::zero::printMemoryReport(llvm::raw_ostream &os, ModuleOp planned,
                                   const CompileOptions &options) {
  auto memory = planned->getAttrOfType<DictionaryAttr>("zero.memory");
  if (!memory)
    return;
  auto i64 = [](DictionaryAttr d, StringRef k) {
    auto a = d ? d.getAs<IntegerAttr>(k) : IntegerAttr();
    return a ? a.getInt() : int64_t(0);
  };
  for (auto fn : planned.getOps<func::FuncOp>()) {
    auto m = memory.getAs<DictionaryAttr>(fn.getName());
    if (!m)
      continue;
    int64_t stage = 0;
    if (auto a = fn->getAttrOfType<IntegerAttr>("zero.stage"))
      stage = a.getInt();
    os << "memory per rank of " << fn.getName();
    if (fn.getName() == "train_step")
      os << " (ZeRO stage " << stage << ", " << options.worldSize
         << (options.worldSize == 1 ? " rank" : " ranks") << ")";
    os << "\n";
    os << llvm::formatv("  {0,-16} {1,18} {2,18} {3,18} {4,11}\n", "",
                        "resident", "peak", "at step peak", "");
    auto cats = m.getAs<DictionaryAttr>("categories");
    auto at = m.getAs<DictionaryAttr>("at_peak");
    for (unsigned c = 0; c <= (unsigned)MemoryCategory::other; ++c) {
      StringRef name = stringifyMemoryCategory((MemoryCategory)c);
      auto cat = cats.getAs<DictionaryAttr>(name);
      std::string label = name.str();
      std::replace(label.begin(), label.end(), '_', ' ');
      os << llvm::formatv("  {0,-16} {1,18} {2,18} {3,18} {4,11}\n", label,
                          grouped(i64(cat, "arguments")),
                          grouped(i64(cat, "peak")), grouped(i64(at, name)),
                          humanBytes(i64(cat, "peak")));
    }
    int64_t peak = i64(m, "peak");
    os << llvm::formatv("  step peak {0} B ({1})", grouped(peak),
                        humanBytes(peak));
    if (auto where = m.getAs<StringAttr>("peak_at");
        where && !where.getValue().empty())
      os << " at '" << where.getValue() << "'";
    if (auto phase = m.getAs<StringAttr>("peak_phase");
        phase && !phase.getValue().empty())
      os << " in the " << phase.getValue() << " pass";
    os << "\n";
    if (auto ms = m.getAs<DictionaryAttr>("model_states");
        ms && fn.getName() == "train_step") {
      int64_t p = i64(ms, "parameters"), g = i64(ms, "gradients"),
              o = i64(ms, "optimizer_state");
      os << llvm::formatv("  model states {0} B ({1}): parameters {2}, "
                          "gradients {3}, optimizer state {4}\n",
                          grouped(p + g + o), humanBytes(p + g + o), grouped(p),
                          grouped(g), grouped(o));
    }
  }
}

LogicalResult mlir::zero::predictTimeline(ModuleOp planned,
                                          CompileOptions &options) {
  auto hw = HardwareModel::load(options.hardware);
  if (!hw)
    return planned.emitError(llvm::toString(hw.takeError()));
  Builder b(planned.getContext());
  SmallVector<NamedAttribute> reports;
  std::string trace;
  llvm::raw_string_ostream os(trace);
  llvm::json::OStream j(os, 1);
  j.object([&] {
    j.attributeArray("traceEvents", [&] {
      const char *threads[] = {"step", "compute and waits", "communication"};
      for (int tid = 0; tid < 3; ++tid)
        j.object([&] {
          j.attribute("name", "thread_name");
          j.attribute("ph", "M");
          j.attribute("pid", 0);
          j.attribute("tid", tid);
          j.attributeObject("args", [&] { j.attribute("name", threads[tid]); });
        });
      for (auto fn : planned.getOps<func::FuncOp>()) {
        if (!fn->hasAttr(kEntryAttr) || fn.isExternal())
          continue;
        SimulateOptions o;
        o.worldSize = worldSizeOf(fn);
        o.overlap = options.training.overlapComm;
        o.precision = options.precision;
        if (llvm::Error e = hw->check(o.worldSize, o.precision)) {
          fn.emitError(llvm::toString(std::move(e)));
          reports.clear();
          return;
        }
        Timeline tl = simulateStep(fn, *hw, o);
        reports.push_back(
            b.getNamedAttr(fn.getName(), timelineAttr(b, tl)));
        // Only the training step is traced when there is one.
        if (fn.getName() == "main" && planned.lookupSymbol("train_step"))
          continue;
        auto event = [&](StringRef name, StringRef cat, int tid, double start,
                         double dur, int64_t bytes, int64_t id) {
          j.object([&] {
            j.attribute("name", name);
            j.attribute("cat", cat);
            j.attribute("ph", "X");
            j.attribute("pid", 0);
            j.attribute("tid", tid);
            j.attribute("ts", start * 1e6);
            j.attribute("dur", dur * 1e6);
            if (id >= 0)
              j.attributeObject("args", [&] {
                j.attribute("bytes", bytes);
                j.attribute("id", id);
              });
          });
        };
        event(planName(fn), "step", 0, 0, tl.stepSeconds, 0, -1);
        for (const Timeline::Event &e : tl.events)
          event(e.name, e.category, e.category == "communication" ? 2 : 1,
                e.start, e.duration, e.bytes, e.id);
      }
    });
    j.attribute("displayTimeUnit", "ms");
  });
  if (reports.empty())
    return failure();
  planned->setAttr("zero.timeline", b.getDictionaryAttr(reports));
  options.timelineEvents = std::move(trace);
  return success();
}

void mlir::zero::printTimelineReport(llvm::raw_ostream &os, ModuleOp planned,
                                     const CompileOptions &options) {
  auto timeline = planned->getAttrOfType<DictionaryAttr>("zero.timeline");
  if (!timeline)
    return;
  for (auto fn : planned.getOps<func::FuncOp>()) {
    auto t = timeline.getAs<DictionaryAttr>(fn.getName());
    if (!t)
      continue;
    auto f = [&](StringRef k) {
      auto a = t.getAs<FloatAttr>(k);
      return a ? a.getValueAsDouble() : 0.0;
    };
    auto i = [&](StringRef k) {
      auto a = t.getAs<IntegerAttr>(k);
      return a ? a.getInt() : int64_t(0);
    };
    auto ms = [](double s) { return llvm::formatv("{0,12:f3} ms", s * 1e3); };
    os << llvm::formatv("{0}: predicted step on {1} ({2} ranks, ZeRO stage "
                        "{3}, matmuls at the {4} peak), per rank\n",
                        planName(fn), options.hardware, options.worldSize,
                        options.training.stage, options.precision);
    os << "  step                    " << ms(f("step_seconds")) << "\n";
    os << "  compute                 " << ms(f("compute_seconds"))
       << llvm::formatv("   {0} ops, {1:e3} FLOP, MFU {2:f1}%\n",
                        i("compute_ops"), f("flops"), 100 * f("mfu"));
    os << "  communication           " << ms(f("communication_seconds"))
       << llvm::formatv("   {0} collectives, {1} bytes sent\n",
                        i("collectives"), i("bytes_sent"));
    os << "  exposed communication   " << ms(f("exposed_seconds")) << "\n";
    os << "  without overlap         " << ms(f("no_overlap_seconds")) << "\n";
    os << "  lower bound             " << ms(f("lower_bound_seconds"))
       << "   max(compute, communication)\n";
  }
}

static bool writeFile(StringRef path, StringRef text, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return false;
  }
  os << text;
  return true;
}

static const char *dtypeName(Type t) {
  if (t.isF32())
    return "float32";
  if (t.isF64())
    return "float64";
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isInteger(64))
    return "int64";
  if (t.isInteger(32))
    return "int32";
  if (t.isInteger(16))
    return "int16";
  if (t.isInteger(8))
    return "int8";
  if (t.isInteger(1))
    return "bool";
  return nullptr;
}

static void writeBuffer(llvm::json::OStream &j, DictionaryAttr attrs, Type type,
                        StringRef defaultRole) {
  auto t = cast<RankedTensorType>(type);
  auto name = attrs ? attrs.getAs<StringAttr>(kNameAttr) : StringAttr();
  auto role = attrs ? attrs.getAs<RoleAttr>(kRoleAttr) : RoleAttr();
  j.object([&] {
    j.attribute("name", name ? name.getValue() : "");
    j.attribute("role", role ? stringifyRole(role.getValue()) : defaultRole);
    j.attribute("category",
                stringifyMemoryCategory(role ? memoryCategoryOf(role.getValue())
                                             : MemoryCategory::other));
    j.attribute("dtype", dtypeName(t.getElementType()));
    j.attributeArray("shape", [&] {
      for (int64_t d : t.getShape())
        j.value(d);
    });
    if (auto of = attrs ? attrs.getAs<StringAttr>(kStateOfAttr) : nullptr)
      j.attribute("state_of", of.getValue());
    if (auto init = attrs ? attrs.getAs<FloatAttr>("zero.init") : nullptr)
      j.attribute("init", init.getValueAsDouble());
    // A flat, end-padded shard of a tensor of `shape`.
    if (auto sh = attrs ? attrs.getAs<DictionaryAttr>(kShardAttr) : nullptr)
      j.attributeObject("shard", [&] {
        j.attribute("numel", sh.getAs<IntegerAttr>("numel").getInt());
        j.attribute("size", sh.getAs<IntegerAttr>("shard").getInt());
        j.attributeArray("shape", [&] {
          for (int64_t d : sh.getAs<DenseI64ArrayAttr>("shape").asArrayRef())
            j.value(d);
        });
      });
  });
}

/// A report attribute (dictionaries of integers and strings) as JSON.
static void writeAttr(llvm::json::OStream &j, Attribute a) {
  if (auto d = dyn_cast<DictionaryAttr>(a))
    j.object([&] {
      for (NamedAttribute e : d) {
        j.attributeBegin(e.getName().strref());
        writeAttr(j, e.getValue());
        j.attributeEnd();
      }
    });
  else if (auto i = dyn_cast<IntegerAttr>(a))
    j.value(i.getInt());
  else if (auto s = dyn_cast<StringAttr>(a))
    j.value(s.getValue());
  else if (auto f = dyn_cast<FloatAttr>(a))
    j.value(f.getValueAsDouble());
  else
    j.value(nullptr);
}

static void writeTraining(llvm::json::OStream &j, const TrainingConfig &c,
                          int64_t microBatch) {
  if (c.optimizer == "onnx") {
    // The step is the model's TrainingInfoProto algorithm; learning rate and
    // iteration count live in its own tensors.
    j.attributeObject("training", [&] {
      j.attribute("optimizer", "onnx");
      j.attribute("gradient_accumulation_steps", 1);
      j.attribute("micro_batch_size", microBatch);
    });
    return;
  }
  j.attributeObject("training", [&] {
    j.attribute("optimizer", c.optimizer);
    j.attribute("lr", c.learningRate());
    j.attributeArray("betas", [&] {
      j.value(c.beta1);
      j.value(c.beta2);
    });
    j.attribute("eps", c.epsilon());
    j.attribute("weight_decay", c.weightDecay);
    j.attribute("momentum", c.momentum);
    j.attribute("dampening", c.dampening);
    j.attribute("nesterov", c.nesterov);
    j.attribute("lr_decay", c.lrDecay);
    j.attribute("initial_accumulator_value", c.initialAccumulator);
    j.attribute("gradient_accumulation_steps", c.accumulation);
    j.attribute("micro_batch_size", microBatch);
    j.attribute("gradient_clipping", c.clip);
    const LRSchedule &s = c.schedule;
    j.attributeObject("lr_schedule", [&] {
      j.attribute("type", s.type);
      if (s.type == "constant")
        return;
      j.attribute("warmup_min_lr", s.warmupMinLr);
      j.attribute("warmup_max_lr", s.warmupMaxLr.value_or(c.learningRate()));
      j.attribute("warmup_num_steps", s.warmupNumSteps);
      j.attribute("warmup_type", s.warmupType);
      if (s.type == "WarmupDecayLR")
        j.attribute("total_num_steps", s.totalNumSteps);
    });
  });
}

/// plan.json: what zero-run needs to call the steps and what users read.
static bool writePlan(StringRef path, StringRef model, ModuleOp signatures,
                      DictionaryAttr memory, DictionaryAttr comm,
                      DictionaryAttr timeline, const CompileOptions &options,
                      std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return false;
  }
  int64_t microBatch = 0;
  bool training = false;
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("format", "zero-opt-plan");
    j.attribute("version", 1);
    j.attribute("model", model);
    j.attribute("world_size", options.worldSize);
    j.attribute("stage", options.training.stage);
    j.attribute("overlap_comm", options.training.overlapComm);
    j.attribute("dtype", "float32");
    j.attribute("runtime_abi", ZERO_RT_ABI_VERSION);
    if (options.memoryReport) {
      // A plan without a program: zero-run refuses it.
      j.attribute("report", options.timelineReport ? "timeline" : "memory");
      if (options.timelineReport) {
        j.attribute("hardware", options.hardware);
        j.attribute("compute_precision", options.precision);
      }
    } else {
      j.attribute("library", "step.so");
      j.attribute("parameters", "params.npz");
    }
    j.attributeObject("functions", [&] {
      for (auto fn : signatures.getOps<func::FuncOp>()) {
        if (!fn->hasAttr(kEntryAttr))
          continue;
        training |= fn.getName() == "train_step";
        j.attributeObject(planName(fn), [&] {
          j.attribute("entry", (fn.getName() + "_entry").str());
          j.attributeArray("arguments", [&] {
            for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
              writeBuffer(j, fn.getArgAttrDict(i), fn.getArgumentTypes()[i],
                          "input");
              auto role = fn.getArgAttrOfType<RoleAttr>(i, kRoleAttr);
              auto t = cast<RankedTensorType>(fn.getArgumentTypes()[i]);
              if (fn.getName() == "main" && role &&
                  role.getValue() == Role::input && t.getRank() > 0)
                microBatch = t.getDimSize(0);
            }
          });
          // Results updated in place are not separate buffers.
          j.attributeArray("results", [&] {
            for (unsigned i = 0; i < fn.getNumResults(); ++i)
              if (!fn.getResultAttr(i, kUpdatesAttr))
                writeBuffer(j, fn.getResultAttrDict(i), fn.getResultTypes()[i],
                            "output");
          });
          // Bytes each rank sends per call, by collective (ring volumes).
          if (auto c = comm ? comm.getAs<DictionaryAttr>(fn.getName())
                            : DictionaryAttr())
            j.attributeObject("communication", [&] {
              for (StringRef k : {"bytes_sent_per_rank", "calls"})
                j.attributeObject(k, [&] {
                  for (NamedAttribute a : c.getAs<DictionaryAttr>(k))
                    j.attribute(a.getName().strref(),
                                cast<IntegerAttr>(a.getValue()).getInt());
                });
            });
          // Predicted by the simulator (--report=timeline).
          if (auto t = timeline ? timeline.getAs<DictionaryAttr>(fn.getName())
                                : DictionaryAttr()) {
            j.attributeBegin("timeline");
            writeAttr(j, t);
            j.attributeEnd();
          }
          auto mem = memory ? memory.getAs<DictionaryAttr>(fn.getName())
                            : DictionaryAttr();
          if (!mem)
            return;
          // Simulated from the compiled buffers (zero-cpu-memory-report).
          j.attributeBegin("memory");
          writeAttr(j, mem);
          j.attributeEnd();
        });
      }
    });
    if (training)
      writeTraining(j, options.training, microBatch);
  });
  os << "\n";
  return true;
}

static bool writeParams(StringRef path, const ParamValues &params,
                        std::string &error) {
  std::vector<::zero::rt::Array> arrays;
  for (const auto &[name, value] : params) {
    ::zero::rt::Array a;
    a.name = name;
    Type elt = value.getElementType();
    if (elt.isF32())
      a.dtype = ::zero::rt::DType::F32;
    else if (elt.isF64())
      a.dtype = ::zero::rt::DType::F64;
    else if (elt.isF16())
      a.dtype = ::zero::rt::DType::F16;
    else if (elt.isInteger(64))
      a.dtype = ::zero::rt::DType::I64;
    else if (elt.isInteger(32))
      a.dtype = ::zero::rt::DType::I32;
    else {
      error = "initial value '" + name +
              "' has an element type params.npz "
              "cannot hold";
      return false;
    }
    auto type = value.getType();
    a.shape.assign(type.getShape().begin(), type.getShape().end());
    ArrayRef<char> raw = value.getRawData();
    size_t bytes = type.getNumElements() * a.itemSize();
    a.data.resize(bytes);
    if (value.isSplat()) {
      for (size_t off = 0; off < bytes; off += raw.size())
        std::memcpy(a.data.data() + off, raw.data(), raw.size());
    } else {
      std::memcpy(a.data.data(), raw.data(), bytes);
    }
    arrays.push_back(std::move(a));
  }
  return ::zero::rt::writeNpz(path.str(), arrays, error);
}

llvm::Error mlir::zero::writeOutputFolder(ModuleOp lowered, ModuleOp signatures,
                                          const ParamValues &params,
                                          const CompileOptions &options,
                                          StringRef modelPath,
                                          StringRef outDir) {
  auto err = [](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  SmallString<256> out(outDir);
  llvm::sys::path::remove_dots(out, true);
  while (out.size() > 1 && llvm::sys::path::is_separator(out.back()))
    out.pop_back();
  if (llvm::sys::fs::exists(out)) {
    // Only ever replace an earlier output folder (or an empty one).
    std::error_code ec;
    bool empty = llvm::sys::fs::is_directory(out) &&
                 llvm::sys::fs::directory_iterator(out, ec) ==
                     llvm::sys::fs::directory_iterator();
    if (!empty && !llvm::sys::fs::exists(out + "/plan.json"))
      return err(out + " exists and is not a zero-opt output folder; "
                       "choose another -o");
  }
  SmallString<256> tmp;
  if (auto ec = llvm::sys::fs::createUniqueDirectory(out + ".partial", tmp))
    return err("cannot create a folder next to " + out + ": " + ec.message());
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(tmp); });
  auto inTmp = [&](StringRef f) {
    SmallString<256> p(tmp);
    llvm::sys::path::append(p, f);
    return std::string(p);
  };
  auto memory = lowered->getAttrOfType<DictionaryAttr>("zero.memory");
  auto comm = lowered->getAttrOfType<DictionaryAttr>("zero.comm");
  auto timeline = lowered->getAttrOfType<DictionaryAttr>("zero.timeline");
  if (!options.memoryReport)
    if (llvm::Error e =
            cpu::emitSharedLibrary(lowered, inTmp("step.so"), options.optLevel))
      return e;
  std::string error;
  if ((!options.memoryReport &&
       !writeParams(inTmp("params.npz"), params, error)) ||
      !writePlan(inTmp("plan.json"), modelPath, signatures, memory, comm,
                 timeline, options, error) ||
      (options.timelineReport && !options.timelineEvents.empty() &&
       !writeFile(inTmp("timeline.json"), options.timelineEvents, error)))
    return err(error);
  if (llvm::sys::fs::exists(out))
    if (auto ec = llvm::sys::fs::remove_directories(out))
      return err("cannot replace " + out + ": " + ec.message());
  if (auto ec = llvm::sys::fs::rename(tmp, out))
    return err("cannot move the output to " + out + ": " + ec.message());
  return llvm::Error::success();
}

LogicalResult mlir::zero::compileModel(MLIRContext *ctx, StringRef modelPath,
                                       const CompileOptions &requested,
                                       StringRef outDir) {
  // Training settings are resolved against the model (derived batch sizes).
  CompileOptions options = requested;
  ParamValues params;
  OwningOpRef<ModuleOp> module = buildStep(ctx, modelPath, options, params);
  if (!module)
    return failure();
  // Signatures (names, roles, in-place updates) before lowering erases them.
  OwningOpRef<ModuleOp> signatures = ModuleOp::create(module->getLoc());
  OpBuilder b(signatures->getBodyRegion());
  for (auto fn : module->getOps<func::FuncOp>())
    if (fn->hasAttr(kEntryAttr)) {
      auto decl = func::FuncOp::create(b, fn.getLoc(), fn.getName(),
                                       fn.getFunctionType());
      decl->setAttrs(fn->getAttrs());
      decl.setPrivate();
    }
  if (options.memoryReport) {
    if (failed(planStepMemory(*module, options)))
      return failure();
    if (options.timelineReport) {
      if (failed(predictTimeline(*module, options)))
        return failure();
      printTimelineReport(llvm::outs(), *module, options);
    } else {
      printMemoryReport(llvm::outs(), *module, options);
    }
    if (outDir.empty())
      return success();
  } else if (failed(lowerStepToLLVM(*module, options))) {
    return failure();
  }
  if (llvm::Error e = writeOutputFolder(*module, *signatures, params, options,
                                        modelPath, outDir))
    return emitError(FileLineColLoc::get(ctx, modelPath, 0, 0))
           << llvm::toString(std::move(e));
  return success();
}
