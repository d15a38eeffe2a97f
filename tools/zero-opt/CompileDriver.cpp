//===- CompileDriver.cpp - zero-opt on an ONNX model -----------*- C++ -*-===//
//
// model.onnx -> import -> tensor-level step -> LLVM dialect -> OUT/step.so,
// with OUT/plan.json describing every buffer and OUT/params.npz holding the
// initial parameters. OUT/ is assembled in a temporary folder and renamed
// into place, so a failed compile leaves no partial output.
//
//===----------------------------------------------------------------------===//
#include "CompileDriver.h"

#include "zero-opt/Driver/Compiler.h"
#include "zero-opt/Dialect/Zero/Schedule/Timeline.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::zero;
namespace cl = llvm::cl;

static bool isModelPath(StringRef arg) {
  return arg.ends_with(".onnx") || arg.ends_with(".onnxtxt") ||
         arg.ends_with(".onnx.txt");
}

bool mlir::zero::isModelInvocation(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-' && isModelPath(argv[i]))
      return true;
  return false;
}

bool mlir::zero::isHelpInvocation(int argc, char **argv) {
  bool help = false;
  for (int i = 1; i < argc; ++i) {
    StringRef a = argv[i];
    if (!a.starts_with("-"))
      return false; // an input file: mlir-opt's help is about it
    help |= a == "--help" || a == "-help" || a == "-h";
  }
  return help;
}

bool mlir::zero::isListOpsInvocation(int argc, char **argv) {
  return argc == 2 && (StringRef(argv[1]) == "--list-ops" ||
                       StringRef(argv[1]) == "-list-ops");
}

int mlir::zero::listOpsMain() {
  llvm::raw_ostream &os = llvm::outs();
  for (auto [title, ops] :
       {std::pair<std::string, std::vector<std::string>>{
            "ai.onnx, opset " + std::to_string(kTargetOpset) +
                " (older opsets are converted)",
            supportedONNXOps("")},
        {"ai.onnx, evaluated at compile time when the inputs are constants",
         compileTimeONNXOps()},
        {kTrainingDomain.str(), supportedONNXOps(kTrainingDomain)}}) {
    os << title << ":\n";
    size_t col = 0;
    for (const std::string &op : ops) {
      if (col && col + op.size() + 1 > 76) {
        os << "\n";
        col = 0;
      }
      os << (col ? " " : "  ") << op;
      col += op.size() + (col ? 1 : 2);
    }
    os << "\n";
  }
  return 0;
}

namespace {
/// Formats diagnostics as "FILE: node 'NAME': message"; ONNX node names
/// travel as NameLocs around the model's file location.
class ModelDiagnostics {
public:
  explicit ModelDiagnostics(MLIRContext *ctx)
      : handler(ctx, [this](Diagnostic &d) { return handle(d); }) {}
  unsigned numErrors = 0;

private:
  LogicalResult handle(Diagnostic &d) {
    llvm::raw_ostream &os = llvm::errs();
    const char *sev = d.getSeverity() == DiagnosticSeverity::Error ? "error"
                      : d.getSeverity() == DiagnosticSeverity::Warning
                          ? "warning"
                          : "note";
    if (d.getSeverity() == DiagnosticSeverity::Error)
      ++numErrors;
    os << "zero-opt: " << sev << ": " << describe(d.getLocation()) << ": "
       << d.str() << "\n";
    return success();
  }
  static std::string describe(Location loc) {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (auto name = dyn_cast<NameLoc>(loc)) {
      if (auto file = dyn_cast<FileLineColLoc>(name.getChildLoc()))
        os << file.getFilename().getValue() << ": node '"
           << name.getName().getValue() << "'";
      else
        os << "'" << name.getName().getValue() << "'";
    } else if (auto file = dyn_cast<FileLineColLoc>(loc)) {
      os << file.getFilename().getValue();
      if (file.getLine())
        os << ":" << file.getLine() << ":" << file.getColumn();
    } else {
      os << loc;
    }
    return s;
  }
  ScopedDiagnosticHandler handler;
};
} // namespace

static int fail(const Twine &msg) {
  llvm::errs() << "zero-opt: error: " << msg << "\n";
  return 1;
}

/// Parses "NAME=V" or "NAME=AxBxC" option values.
static bool parseAssignment(StringRef s, StringRef &name,
                            SmallVectorImpl<int64_t> &dims) {
  auto [n, v] = s.split('=');
  if (n.empty() || v.empty())
    return false;
  name = n;
  SmallVector<StringRef> parts;
  v.split(parts, 'x');
  for (StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d <= 0)
      return false;
    dims.push_back(d);
  }
  return true;
}

/// "40G", "512M", "1000000": bytes, the suffixes in powers of 1024.
static std::optional<int64_t> parseBytes(StringRef s) {
  s = s.trim();
  int64_t scale = 1;
  if (!s.consume_back_insensitive("ib"))
    s.consume_back_insensitive("b");
  for (auto [suffix, factor] : {std::pair<char, int64_t>{'K', 1LL << 10},
                                {'M', 1LL << 20},
                                {'G', 1LL << 30},
                                {'T', 1LL << 40}})
    if (!s.empty() && llvm::toUpper(s.back()) == suffix) {
      s = s.drop_back();
      scale = factor;
    }
  double v;
  if (s.empty() || s.trim().getAsDouble(v) || v < 0 ||
      v * double(scale) >= 9.2e18)
    return std::nullopt;
  return int64_t(v * double(scale));
}

/// Parses "a,b" into two doubles.
static bool parsePair(StringRef s, double &a, double &b) {
  auto [x, y] = s.split(',');
  return !x.trim().getAsDouble(a) && !y.trim().getAsDouble(b);
}

int mlir::zero::compileMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::OptionCategory cat("zero-opt model compilation");
  cl::OptionCategory tcat("zero-opt training (flags override --config)");
  cl::opt<std::string> input(cl::Positional, cl::desc("<model.onnx>"),
                             cl::Required, cl::cat(cat));
  cl::opt<std::string> outDir("o", cl::desc("Output folder for zero-run"),
                              cl::value_desc("OUT"), cl::cat(cat));
  cl::opt<std::string> emit(
      "emit", cl::desc("Print instead of compiling: 'mlir'"), cl::cat(cat));
  cl::opt<std::string> report(
      "report",
      cl::desc("Print a report instead of generating code: 'memory' (the "
               "per-rank memory plan; with -o, OUT/plan.json only) or "
               "'timeline' (the predicted step on --hardware; with -o, also "
               "OUT/timeline.json)"),
      cl::cat(cat));
  cl::opt<std::string> hardware(
      "hardware",
      cl::desc("--report=timeline: machine description (hardware/*.json)"),
      cl::value_desc("FILE.json"), cl::cat(cat));
  cl::opt<std::string> precision(
      "compute-precision",
      cl::desc("--report=timeline: the peak_flops entry f32 matmuls run "
               "at (default fp32, as compiled; tf32 to allow TF32); others "
               "run at their type's (bf16, fp16 on GPUs, fp64)"),
      cl::init("fp32"), cl::cat(cat));
  cl::opt<std::string> emitAfter(
      "emit-after",
      cl::desc("With --emit=mlir, the stage to print: import, step "
               "(default) or llvm"),
      cl::init("step"), cl::cat(cat));
  cl::list<std::string> freeze(
      "freeze", cl::desc("Floating-point initializers to keep constant"),
      cl::CommaSeparated, cl::cat(cat));
  cl::list<std::string> dims(
      "dim", cl::desc("Size of a symbolic dimension: NAME=SIZE"), cl::cat(cat));
  cl::list<std::string> inputShapes(
      "input-shape", cl::desc("Static shape of a graph input: NAME=AxBxC"),
      cl::cat(cat));
  cl::opt<unsigned> optLevel(
      "O", cl::desc("Optimization level of the generated code (0-3)"),
      cl::init(2), cl::Prefix, cl::cat(cat));
  cl::opt<std::string> objectCache(
      "object-cache",
      cl::desc("Folder of compiled kernels and steps, reused by later "
               "compiles (default: $ZERO_OPT_CACHE_DIR, else "
               "~/.cache/zero-opt/objects)"),
      cl::value_desc("DIR"), cl::cat(cat));
  cl::opt<bool> noObjectCache("no-object-cache",
                              cl::desc("Compile every object afresh"),
                              cl::cat(cat));
  cl::opt<unsigned> threads(
      "compile-threads",
      cl::desc("Threads that compile objects, and ptxas's for --target=cuda "
               "(default: one per core)"),
      cl::init(0), cl::cat(cat));
  cl::opt<bool> timeReport(
      "time-report",
      cl::desc("Print where the compile's time went: import, training step, "
               "lowering (each pass), code generation, output; and the "
               "kernel counts"),
      cl::cat(cat));
  cl::opt<bool> simulateGPU(
      "simulate-gpu",
      cl::desc("Compile for the CPU with the kernels mapped to GPU blocks "
               "and threads as for the CUDA target, so that their numerics "
               "can be checked without a GPU"),
      cl::cat(cat));
  cl::opt<std::string> target(
      "target",
      cl::desc("What the step runs on: cpu (default) or cuda (NVIDIA GPUs, "
               "one per rank)"),
      cl::init("cpu"), cl::cat(cat));
  cl::opt<std::string> gpuArch(
      "gpu-arch",
      cl::desc("--target=cuda: the GPU architectures the kernels are "
               "assembled for, sm_80 (A100), sm_90 (H100; default) or "
               "sm_80,sm_90 (one fat binary for both)"),
      cl::init("sm_90"), cl::cat(cat));
  cl::opt<bool> hostKernels(
      "host-kernels",
      cl::desc("--target=cuda: the step also holds a host copy of every "
               "kernel, so that the CUDA host emulator "
               "(libzero-cuda-host-emulator.so) runs its values on a "
               "machine without a GPU"),
      cl::cat(cat));
  cl::opt<std::string> mode(
      "mode",
      cl::desc("auto (train when the model outputs a scalar loss), train or "
               "infer"),
      cl::init("auto"), cl::cat(cat));
  cl::opt<std::string> config("config",
                              cl::desc("DeepSpeed ds_config.json to read"),
                              cl::value_desc("FILE"), cl::cat(tcat));
  cl::opt<std::string> loss(
      "loss", cl::desc("Output to minimize (default: first scalar float)"),
      cl::cat(tcat));
  cl::opt<std::string> optimizer(
      "optimizer", cl::desc("adamw (default), adam, sgd or adagrad"),
      cl::cat(tcat));
  cl::opt<std::string> lr("lr", cl::desc("Learning rate"), cl::cat(tcat));
  cl::opt<std::string> betas("betas", cl::desc("Adam betas: B1,B2"),
                             cl::cat(tcat));
  cl::opt<std::string> eps("eps", cl::desc("Adam / Adagrad epsilon"),
                           cl::cat(tcat));
  cl::opt<std::string> weightDecay("weight-decay", cl::desc("Weight decay"),
                                   cl::cat(tcat));
  cl::opt<std::string> momentum("momentum", cl::desc("SGD momentum"),
                                cl::cat(tcat));
  cl::opt<std::string> dampening("dampening", cl::desc("SGD dampening"),
                                 cl::cat(tcat));
  cl::opt<bool> nesterov("nesterov", cl::desc("SGD Nesterov momentum"),
                         cl::cat(tcat));
  cl::opt<std::string> gradAccum("gradient-accumulation-steps",
                                 cl::desc("Micro-batches per optimizer step"),
                                 cl::cat(tcat));
  cl::opt<int64_t> stage("stage", cl::desc("ZeRO stage: 0 (DDP), 1, 2 or 3"),
                         cl::init(-1), cl::cat(tcat));
  cl::opt<int64_t> worldSize("world-size",
                             cl::desc("Data-parallel ranks (mpirun -np N)"),
                             cl::init(1), cl::cat(tcat));
  cl::opt<int64_t> persistence(
      "persistence-threshold",
      cl::desc("Stage 3: parameters with fewer elements stay replicated "
               "(DeepSpeed stage3_param_persistence_threshold, default 1e5)"),
      cl::init(-1), cl::cat(tcat));
  cl::opt<bool> overlapComm(
      "overlap-comm",
      cl::desc("Overlap collectives with compute (DeepSpeed overlap_comm, "
               "default true; =false runs each collective to completion "
               "where it starts)"),
      cl::cat(tcat));
  cl::opt<std::string> remat(
      "remat",
      cl::desc("Recompute activations in the backward pass instead of "
               "keeping them: none (default), blocks (keep the inputs of "
               "repeated blocks, found from node names), sqrt (keep the "
               "inputs of sqrt(n) segments of the forward), budget (the "
               "least recompute that fits --memory-budget)"),
      cl::cat(tcat));
  cl::opt<std::string> precisionFlag(
      "precision",
      cl::desc("Compute precision: fp32 (default), bf16 or fp16; 16-bit "
               "compute keeps fp32 master weights and optimizer states "
               "(DeepSpeed's bf16 / fp16 blocks)"),
      cl::cat(tcat));
  cl::opt<std::string> memoryBudget(
      "memory-budget",
      cl::desc("Per-rank peak the planned step must fit, in bytes with an "
               "optional K, M, G or T suffix (powers of 1024); implies "
               "--remat=budget"),
      cl::value_desc("BYTES"), cl::cat(tcat));
  cl::opt<std::string> batchNorm(
      "batchnorm",
      cl::desc("BatchNormalization statistics in training on N ranks: local "
               "(each rank's micro-batch, as DDP; default) or sync (the "
               "global micro-batch, as SyncBatchNorm)"),
      cl::init("local"), cl::cat(tcat));
  cl::opt<uint64_t> seed(
      "seed",
      cl::desc("Seed of Dropout's random masks in training (default 0; a "
               "node's own seed attribute takes precedence)"),
      cl::init(0), cl::cat(tcat));
  cl::opt<std::string> gradClip(
      "gradient-clipping",
      cl::desc("Clip gradients to this global norm (0: off)"), cl::cat(tcat));
  // --emit=mlir prints like mlir-opt (--mlir-print-debuginfo, ...).
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions({&cat, &tcat});
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "zero-opt: the ZeRO training compiler\n\n"
          "  zero-opt MODEL.onnx [options] -o OUT/   compile a model for "
          "zero-run\n"
          "  zero-opt FILE.mlir [options]            run passes, as mlir-opt "
          "does\n"
          "                                          (--help-mlir lists its "
          "options)\n"
          "  zero-opt --list-ops                     the ONNX ops it "
          "imports\n"))
    return 1;

  CompileOptions opts;
  ONNXImportOptions &imp = opts.import;
  imp.freeze.assign(freeze.begin(), freeze.end());
  if (batchNorm != "local" && batchNorm != "sync")
    return fail("--batchnorm=" + batchNorm + ": expected local or sync");
  imp.syncBatchNorm = batchNorm == "sync";
  imp.seed = seed;
  for (const std::string &d : dims) {
    StringRef name;
    SmallVector<int64_t> v;
    if (!parseAssignment(d, name, v) || v.size() != 1)
      return fail("--dim " + d + ": expected NAME=SIZE with SIZE > 0");
    imp.dims[name.str()] = v[0];
  }
  for (const std::string &s : inputShapes) {
    StringRef name;
    SmallVector<int64_t> v;
    if (!parseAssignment(s, name, v))
      return fail("--input-shape " + s +
                  ": expected NAME=AxBxC with positive sizes");
    imp.inputShapes[name.str()] = std::vector<int64_t>(v.begin(), v.end());
  }
  if (optLevel > 3)
    return fail("-O" + std::to_string(optLevel) + ": expected 0 to 3");
  opts.optLevel = optLevel;
  if (noObjectCache && objectCache.getNumOccurrences())
    return fail("--object-cache and --no-object-cache contradict each other; "
                "pass one of them");
  if (objectCache.getNumOccurrences()) {
    if (objectCache.empty())
      return fail("--object-cache=: expected a folder (or --no-object-cache)");
    opts.objectCache = objectCache;
  } else if (!noObjectCache) {
    // The default cache is a convenience: a compile goes on without it.
    opts.objectCache = cpu::defaultObjectCacheDir();
    if (!opts.objectCache.empty())
      if (std::error_code ec =
              llvm::sys::fs::create_directories(opts.objectCache)) {
        llvm::errs() << "zero-opt: warning: no object cache (" << ec.message()
                     << ": " << opts.objectCache
                     << "); set one with --object-cache=DIR\n";
        opts.objectCache.clear();
      }
  }
  opts.compileThreads = threads;
  opts.timeReport = timeReport;
  opts.simulateGPU = simulateGPU;
  if (target == "cuda")
    opts.cuda = true;
  else if (target != "cpu")
    return fail("--target=" + target + ": expected cpu or cuda");
  if (gpuArch.getNumOccurrences() && !opts.cuda)
    return fail("--gpu-arch is for --target=cuda");
  SmallVector<StringRef> archs;
  StringRef(gpuArch).split(archs, ',');
  for (StringRef arch : archs)
    if (arch != "sm_80" && arch != "sm_90")
      return fail("--gpu-arch=" + gpuArch +
                  ": expected sm_80, sm_90 or both (sm_80,sm_90)");
  opts.gpuArch = gpuArch;
  if (hostKernels && !opts.cuda)
    return fail("--host-kernels is for --target=cuda");
  opts.hostKernels = hostKernels;
  if (opts.cuda && simulateGPU)
    return fail("--simulate-gpu runs the GPU's kernels on the CPU; leave it "
                "out with --target=cuda");
  if (mode == "auto")
    opts.mode = CompileMode::Auto;
  else if (mode == "train")
    opts.mode = CompileMode::Train;
  else if (mode == "infer")
    opts.mode = CompileMode::Infer;
  else
    return fail("--mode=" + mode + ": expected auto, train or infer");

  TrainingConfig &tc = opts.training;
  if (!config.empty()) {
    std::vector<std::string> warnings;
    std::string error;
    if (!parseDeepSpeedConfig(config, tc, warnings, error))
      return fail(error);
    for (const std::string &w : warnings)
      llvm::errs() << "zero-opt: warning: " << w << "\n";
  }
  // Flags override the config file.
  auto number = [&](cl::opt<std::string> &o, const char *flag,
                    double &out) -> bool {
    if (o.empty())
      return true;
    if (StringRef(o).trim().getAsDouble(out)) {
      fail(Twine("--") + flag + "=" + o + ": expected a number");
      return false;
    }
    return true;
  };
  double d;
  if (!optimizer.empty())
    tc.optimizer = StringRef(optimizer).lower();
  if (!lr.empty()) {
    if (!number(lr, "lr", d))
      return 1;
    tc.lr = d;
  }
  if (!betas.empty() && !parsePair(betas, tc.beta1, tc.beta2))
    return fail("--betas=" + betas + ": expected B1,B2");
  if (!eps.empty()) {
    if (!number(eps, "eps", d))
      return 1;
    tc.eps = d;
  }
  if (!number(weightDecay, "weight-decay", tc.weightDecay) ||
      !number(momentum, "momentum", tc.momentum) ||
      !number(dampening, "dampening", tc.dampening) ||
      !number(gradClip, "gradient-clipping", tc.clip))
    return 1;
  if (nesterov)
    tc.nesterov = true;
  if (!gradAccum.empty() &&
      (StringRef(gradAccum).getAsInteger(10, tc.accumulation) ||
       tc.accumulation < 1))
    return fail("--gradient-accumulation-steps=" + gradAccum +
                ": expected an integer >= 1");
  if (!gradAccum.empty())
    tc.accumulationSet = true;
  if (stage.getNumOccurrences()) {
    if (stage < 0 || stage > 3)
      return fail("--stage=" + std::to_string(stage) +
                  ": expected 0, 1, 2 or 3");
    tc.stage = stage;
  }
  if (worldSize < 1)
    return fail("--world-size=" + std::to_string(worldSize) +
                ": expected at least 1");
  opts.worldSize = worldSize;
  if (persistence.getNumOccurrences()) {
    if (persistence < 0)
      return fail("--persistence-threshold=" + std::to_string(persistence) +
                  ": expected a number of elements >= 0");
    tc.persistenceThreshold = persistence;
  }
  if (overlapComm.getNumOccurrences())
    tc.overlapComm = overlapComm;
  // Checked with the config by validateTrainingConfig.
  if (precisionFlag.getNumOccurrences())
    tc.precision = precisionFlag;
  if (remat.getNumOccurrences()) {
    if (!symbolizeRematPolicy(remat))
      return fail("--remat=" + remat +
                  ": expected none, blocks, sqrt or budget");
    tc.remat = remat;
  }
  if (memoryBudget.getNumOccurrences()) {
    std::optional<int64_t> bytes = parseBytes(memoryBudget);
    if (!bytes || *bytes <= 0)
      return fail("--memory-budget=" + memoryBudget +
                  ": expected a positive number of bytes below 2^63, with an "
                  "optional K, M, G or T suffix (e.g. 40G)");
    tc.memoryBudget = *bytes;
    if (!remat.getNumOccurrences())
      tc.remat = "budget";
  }
  opts.loss = loss;
  std::string error;
  if (!validateTrainingConfig(tc, error))
    return fail(error);

  if (!emit.empty() && emit != "mlir")
    return fail("--emit=" + emit + ": the only format is 'mlir'");
  if (emitAfter != "import" && emitAfter != "step" && emitAfter != "llvm")
    return fail("--emit-after=" + emitAfter +
                ": expected import, step or llvm");
  if (!report.empty() && report != "memory" && report != "timeline")
    return fail("--report=" + report + ": expected memory or timeline");
  if (report == "timeline" && hardware.empty())
    return fail("--report=timeline needs --hardware=FILE.json (a machine "
                "description, as in the repository's hardware/ folder)");
  if (!hardware.empty() && report != "timeline" && tc.remat != "budget")
    return fail("--hardware is read only by --report=timeline and "
                "--remat=budget");
  // The budget's recompute costs are times on this machine.
  if (!hardware.empty() && tc.remat == "budget") {
    auto hw = HardwareModel::load(hardware);
    if (!hw)
      return fail(llvm::toString(hw.takeError()));
    opts.hardware = hardware;
  }
  if (precision.getNumOccurrences() && report != "timeline")
    return fail("--compute-precision is read only by --report=timeline");
  if (!report.empty() && !emit.empty())
    return fail("--report and --emit both print instead of compiling; pass "
                "one of them");
  if (emit.empty() && report.empty() && outDir.empty())
    return fail("no output folder: pass -o OUT (or --emit=mlir to print)");
  if (!emit.empty() && !outDir.empty())
    return fail("--emit prints the IR instead of writing " + outDir +
                "; pass one of them");

  registerCompilerPasses();
  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext ctx(registry);
  ModelDiagnostics diags(&ctx);

  if (!report.empty()) {
    opts.memoryReport = true;
    if (report == "timeline") {
      // Read the description before the (long) compile.
      auto hw = HardwareModel::load(hardware);
      if (!hw)
        return fail(llvm::toString(hw.takeError()));
      if (llvm::Error e = hw->check(worldSize, precision))
        return fail(llvm::toString(std::move(e)));
      opts.timelineReport = true;
      opts.hardware = hardware;
      opts.precision = precision;
    }
    opts.import.parameterShapesOnly = true;
    return failed(compileModel(&ctx, input, opts, outDir)) ? 1 : 0;
  }
  if (emit.empty()) {
    if (failed(compileModel(&ctx, input, opts, outDir)))
      return 1;
    llvm::errs() << "zero-opt: compiled " << input << " -> " << outDir << "\n";
    return 0;
  }

  ParamValues params;
  OwningOpRef<ModuleOp> module;
  if (emitAfter == "import")
    module = importONNXModel(&ctx, input, imp, &params);
  else
    module = buildStep(&ctx, input, opts, params);
  if (!module)
    return 1;
  if (emitAfter == "llvm" && failed(lowerStepToLLVM(*module, opts)))
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
