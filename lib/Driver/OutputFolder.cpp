//===- OutputFolder.cpp - OUT/: step.so, plan.json, params.npz ------------===//
#include "zero-opt/Driver/OutputFolder.h"

#include "zero-opt/Conversion/RuntimeTypes.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-rt/Files.h"
#include "zero-rt/Npz.h"
#include "zero-rt/Runtime.h"
#include "zero-rt/RuntimeCUDA.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

#include "mlir/Support/Timing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <chrono>
#include <cstring>

using namespace mlir;
using namespace mlir::zero;

/// NumPy's name of an element type ("float32", "bfloat16", "bool", ...).
static const char *dtypeName(Type t) {
  std::optional<::zero::rt::DType> d = runtimeDType(t);
  return d ? ::zero::rt::dtypeName(*d) : nullptr;
}

/// `cuda`: the buffer's memory is named, device or host (hyperparameters,
/// which the step's host code reads).
static void writeBuffer(llvm::json::OStream &j, DictionaryAttr attrs, Type type,
                        StringRef defaultRole, bool cuda) {
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
    if (cuda)
      j.attribute("memory", role && isHostResidentRole(role.getValue())
                                ? "host"
                                : "device");
    j.attributeArray("shape", [&] {
      for (int64_t d : t.getShape())
        j.value(d);
    });
    if (auto of = attrs ? attrs.getAs<StringAttr>(kStateOfAttr) : nullptr)
      j.attribute("state_of", of.getValue());
    if (auto why = attrs ? attrs.getAs<StringAttr>(kReasonAttr) : nullptr)
      j.attribute("reason", why.getValue());
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
  else if (auto arr = dyn_cast<ArrayAttr>(a))
    j.array([&] {
      for (Attribute e : arr)
        writeAttr(j, e);
    });
  else if (auto flag = dyn_cast<BoolAttr>(a))
    j.value(flag.getValue());
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
                          uint64_t seed, int64_t microBatch,
                          DictionaryAttr remat) {
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
    j.attribute("seed", int64_t(seed));
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
    // Compute precision; 16-bit parameters train fp32 master weights.
    j.attribute("precision", c.precision);
    // The precision gradients are summed over the ranks in.
    j.attribute("communication_data_type",
                c.commDataType.empty() ? c.precision : c.commDataType);
    // fp16 loss scaling, which the runtime carries out between steps.
    if (c.precision == "fp16")
      j.attributeObject("loss_scaling", [&] {
        j.attribute("loss_scale", c.lossScale);
        j.attribute("initial_scale_power", c.initialScalePower);
        j.attribute("loss_scale_window", c.lossScaleWindow);
        j.attribute("hysteresis", c.hysteresis);
        j.attribute("consecutive_hysteresis", c.consecutiveHysteresis);
        j.attribute("min_loss_scale", c.minLossScale);
      });
    j.attributeObject("remat", [&] {
      j.attribute("policy", c.remat);
      if (c.remat == "sqrt")
        j.attribute("segments", c.rematSegments);
      if (c.remat == "budget")
        j.attribute("memory_budget", c.memoryBudget);
      // zero-rematerialize's report: bytes, FLOPs, saved values, solver.
      if (remat)
        for (NamedAttribute e : remat)
          if (e.getName() != "policy") {
            j.attributeBegin(e.getName().strref());
            writeAttr(j, e.getValue());
            j.attributeEnd();
          }
    });
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

/// The model's element type: its parameters', "mixed" when they differ,
/// and its floating-point outputs' when it has no parameter.
static std::string modelDType(ModuleOp signatures) {
  SmallVector<Type> params, outputs;
  for (auto fn : signatures.getOps<func::FuncOp>()) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto role = fn.getArgAttrOfType<RoleAttr>(i, kRoleAttr);
      if (role && role.getValue() == Role::parameter)
        params.push_back(
            cast<ShapedType>(fn.getArgumentTypes()[i]).getElementType());
    }
    if (fn.getName() == "main")
      for (Type t : fn.getResultTypes())
        if (isa<FloatType>(cast<ShapedType>(t).getElementType()))
          outputs.push_back(cast<ShapedType>(t).getElementType());
  }
  ArrayRef<Type> types = params.empty() ? outputs : params;
  if (types.empty())
    return "float32";
  if (!llvm::all_equal(types))
    return "mixed";
  const char *name = dtypeName(types.front());
  return name ? name : "mixed";
}

/// plan.json: what zero-run needs to call the steps and what users read.
static bool writePlan(StringRef path, StringRef model, ModuleOp signatures,
                      DictionaryAttr memory, DictionaryAttr comm,
                      DictionaryAttr timeline, const CompileOptions &options,
                      std::string &error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  int64_t microBatch = 0;
  bool training = false;
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("format", "zero-opt-plan");
    j.attribute("version", 1);
    j.attribute("model", model);
    // Absolute: --export-onnx rereads the model from wherever zero-run runs.
    SmallString<256> abs(model);
    llvm::sys::fs::make_absolute(abs);
    j.attribute("model_path", abs.str());
    if (auto hash = signatures->getAttrOfType<StringAttr>(kModelHashAttr))
      j.attribute("model_hash", hash.getValue());
    j.attribute("world_size", options.worldSize);
    j.attribute("stage", options.training.stage);
    j.attribute("overlap_comm", options.training.overlapComm);
    j.attribute("dtype", modelDType(signatures));
    j.attribute("runtime_abi", ZERO_RT_ABI_VERSION);
    j.attribute("target", options.cuda ? "cuda" : "cpu");
    if (options.cuda) {
      j.attribute("gpu_arch", options.gpuArch);
      if (options.hostKernels)
        j.attribute("host_kernels", true);
      j.attribute("cuda_runtime_abi", ZERO_RT_CUDA_ABI_VERSION);
    }
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
                          "input", options.cuda);
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
                            "output", options.cuda);
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
    if (training) {
      auto step = signatures.lookupSymbol<func::FuncOp>("train_step");
      writeTraining(j, options.training, options.import.seed, microBatch,
                    step ? step->getAttrOfType<DictionaryAttr>("zero.remat")
                         : DictionaryAttr());
      j.attributeObject("checkpoint", [&] {
        j.attribute("tag_validation", options.training.tagValidation);
      });
    }
  });
  os << "\n";
  return ::zero::rt::writeTextFile(path.str(), text, error);
}

/// Writes the initial values from the attributes' own storage: a large
/// model's weights are not copied again, and a splat is repeated as it is
/// written.
static bool writeParams(StringRef path, const ParamValues &params,
                        std::string &error) {
  std::vector<::zero::rt::ArrayView> arrays;
  for (const auto &[name, value] : params) {
    ::zero::rt::ArrayView a;
    a.name = name;
    std::optional<::zero::rt::DType> dtype =
        runtimeDType(value.getElementType());
    if (!dtype || !::zero::rt::numpyDescr(*dtype)) {
      error = "initial value '" + name +
              "' has an element type params.npz cannot hold";
      return false;
    }
    a.dtype = *dtype;
    auto type = value.getType();
    a.shape.assign(type.getShape().begin(), type.getShape().end());
    ArrayRef<char> raw = value.getRawData();
    a.size = type.getNumElements() * ::zero::rt::itemSize(a.dtype);
    a.data = raw.data();
    a.splat = value.isSplat();
    arrays.push_back(std::move(a));
  }
  return ::zero::rt::writeNpz(path.str(), arrays, error);
}

static llvm::Error makeError(const Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string OutputFolder::inTmp(StringRef file) const {
  SmallString<256> p(tmp);
  llvm::sys::path::append(p, file);
  return std::string(p);
}

llvm::Expected<std::unique_ptr<OutputFolder>>
OutputFolder::begin(StringRef outDir, const ParamValues *params) {
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
      return makeError(out + " exists and is not a zero-opt output folder; "
                             "choose another -o");
  }
  // Absolute: LLVM puts a relative unique name under the system's temp
  // folder, not next to `out`.
  SmallString<256> partial(out);
  llvm::sys::fs::make_absolute(partial);
  partial += ".partial";
  SmallString<256> tmp;
  if (auto ec = llvm::sys::fs::createUniqueDirectory(partial, tmp))
    return makeError("cannot create a folder next to " + out + ": " +
                     ec.message());
  std::unique_ptr<OutputFolder> folder(new OutputFolder);
  folder->out = std::string(out);
  folder->tmp = std::string(tmp);
  if (params) {
    OutputFolder *f = folder.get();
    f->paramsWriter = std::thread([f, params] {
      auto start = std::chrono::steady_clock::now();
      std::string error;
      if (!writeParams(f->inTmp("params.npz"), *params, error))
        f->paramsError = error.empty() ? "cannot write params.npz" : error;
      f->paramsSeconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
    });
  }
  return folder;
}

OutputFolder::~OutputFolder() {
  if (paramsWriter.joinable())
    paramsWriter.join();
  if (!committed)
    llvm::sys::fs::remove_directories(tmp);
}

/// The device code the step library embeds, also as files for the
/// toolkit's tools (cuobjdump, nvdisasm): kernels.<chip>.cubin, and
/// kernels.fatbin for several architectures.
llvm::Error OutputFolder::writeDeviceObjects(ModuleOp lowered) {
  std::string error;
  for (auto binary : lowered.getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(a);
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
      if (!target)
        continue;
      std::string file;
      if (object.getFormat() == gpu::CompilationTarget::Binary)
        file = ("kernels." + target.getChip() + ".cubin").str();
      else if (object.getFormat() == gpu::CompilationTarget::Fatbin)
        file = "kernels.fatbin";
      else
        continue;
      if (!::zero::rt::writeTextFile(inTmp(file),
                                     object.getObject().getValue().str(),
                                     error))
        return makeError(error);
    }
  return llvm::Error::success();
}

llvm::Error OutputFolder::commit(ModuleOp lowered, ModuleOp signatures,
                                 const CompileOptions &options,
                                 StringRef modelPath) {
  auto memory = lowered->getAttrOfType<DictionaryAttr>("zero.memory");
  auto comm = lowered->getAttrOfType<DictionaryAttr>("zero.comm");
  auto timeline = lowered->getAttrOfType<DictionaryAttr>("zero.timeline");
  if (!options.memoryReport) {
    cpu::CodegenOptions codegen;
    codegen.optLevel = options.optLevel;
    codegen.cacheDir = options.objectCache;
    codegen.threads = options.compileThreads;
    if (options.cuda) {
      // One module: the launches name the gpu.binary it holds. Linked
      // against the CUDA runtime, so an unresolved symbol fails here.
      StringRef dir = ZERO_CUDA_RUNTIME_DIR;
      codegen.splitKernels = false;
      codegen.linkArgs = {("-L" + dir).str(), ("-Wl,-rpath," + dir).str(),
                          "-lZeroRuntimeCUDA", "-lZeroRuntime",
                          "-Wl,--no-undefined"};
      if (llvm::Error e = writeDeviceObjects(lowered))
        return e;
    }
    cpu::CodegenStats stats;
    TimingScope t = options.timing ? options.timing->nest("code generation")
                                   : TimingScope();
    if (llvm::Error e =
            cpu::emitSharedLibrary(lowered, inTmp("step.so"), codegen, t,
                                   &stats))
      return e;
    if (options.timeReport) {
      auto kernels = lowered->getAttrOfType<DictionaryAttr>("zero.kernels");
      auto count = [&](StringRef k) {
        auto a = kernels ? kernels.getAs<IntegerAttr>(k) : IntegerAttr();
        return a ? a.getInt() : 0;
      };
      llvm::errs() << "zero-opt: kernels: " << count("formed")
                   << " formed, " << count("unique")
                   << " after deduplication";
      if (int64_t launches = count("gpu_launches"))
        llvm::errs() << ", mapped to " << launches << " GPU launches ("
                     << count("gpu_row_groups") << " row groups, "
                     << count("gpu_guarded_selects") << " guarded selects, "
                     << count("gpu_coarsened")
                     << " with several outputs a thread, "
                     << count("gpu_partial_writes")
                     << " writing part of their rows, "
                     << count("gpu_batched_loops")
                     << " loops loading in batches)";
      llvm::errs() << "; objects: " << stats.objects
                   << " (" << stats.kernels << " kernels and the step; "
                   << stats.objects - stats.cached << " compiled, "
                   << stats.cached << " from the cache)\n";
    }
  }
  TimingScope writing = options.timing ? options.timing->nest("output folder")
                                       : TimingScope();
  std::string error;
  if (!writePlan(inTmp("plan.json"), modelPath, signatures, memory, comm,
                 timeline, options, error) ||
      (options.timelineReport && !options.timelineEvents.empty() &&
       !::zero::rt::writeTextFile(inTmp("timeline.json"),
                                  options.timelineEvents, error)))
    return makeError(error);
  if (paramsWriter.joinable()) {
    paramsWriter.join();
    if (!paramsError.empty())
      return makeError(paramsError);
    if (options.timeReport)
      llvm::errs() << llvm::format(
          "zero-opt: params.npz written in %.1f s, beside the lowering\n",
          paramsSeconds);
  }
  if (llvm::sys::fs::exists(out))
    if (auto ec = llvm::sys::fs::remove_directories(out))
      return makeError("cannot replace " + out + ": " + ec.message());
  if (auto ec = llvm::sys::fs::rename(tmp, out))
    return makeError("cannot move the output to " + out + ": " + ec.message());
  committed = true;
  return llvm::Error::success();
}
