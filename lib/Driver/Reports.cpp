//===- Reports.cpp - memory table and predicted timeline ------------------===//
#include "zero-opt/Driver/Reports.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Timeline.h"
#include "zero-opt/Target/CUDA/Mapping.h"
#include "zero-opt/Target/CUDA/Passes.h"
#include "zero-rt/Trace.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::zero;

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

/// An integer entry of a report dictionary (0 when absent).
static int64_t intEntry(DictionaryAttr d, StringRef key) {
  auto a = d ? d.getAs<IntegerAttr>(key) : IntegerAttr();
  return a ? a.getInt() : 0;
}

/// A floating-point entry of a report dictionary (0 when absent).
static double floatEntry(DictionaryAttr d, StringRef key) {
  auto a = d ? d.getAs<FloatAttr>(key) : FloatAttr();
  return a ? a.getValueAsDouble() : 0.0;
}

/// zero-rematerialize's figures: what the backward reads from the
/// forward before and after, the compute added, and the budget's solve.
static void printRemat(llvm::raw_ostream &os, DictionaryAttr remat,
                       const CompileOptions &options) {
  int64_t before = intEntry(remat, "activation_bytes_before"),
          after = intEntry(remat, "activation_bytes_after");
  double recompute = floatEntry(remat, "recompute_flops"),
         step = floatEntry(remat, "step_flops");
  auto saved = remat.getAs<ArrayAttr>("saved");
  os << llvm::formatv("  rematerialization ({0}): activations the backward "
                      "reads {1} B -> {2} B ({3:f1}%); recompute {4:e2} "
                      "FLOP ({5:f1}% of the step); {6} values saved\n",
                      options.training.remat, grouped(before), grouped(after),
                      before ? 100.0 * (after - before) / before : 0.0,
                      recompute, step > 0 ? 100 * recompute / step : 0.0,
                      saved ? saved.size() : 0);
  auto solver = remat.getAs<DictionaryAttr>("solver");
  if (!solver)
    return;
  auto method = solver.getAs<StringAttr>("method").getValue();
  auto optimal = solver.getAs<BoolAttr>("optimal");
  os << llvm::formatv("  memory budget {0} B ({1}): {2}{3} in {4:f2} s; "
                      "activation model peak {5} B (keeping all {6}, "
                      "least {7})\n",
                      grouped(options.training.memoryBudget),
                      humanBytes(options.training.memoryBudget),
                      method == "milp"        ? "CBC MILP"
                      : method == "heuristic" ? "heuristic"
                                              : "nothing recomputed",
                      optimal && optimal.getValue() ? ", optimal" : "",
                      floatEntry(solver, "seconds"),
                      grouped(intEntry(solver, "peak")),
                      grouped(intEntry(solver, "keep_all_peak")),
                      grouped(intEntry(solver, "least_peak")));
  if (auto note = solver.getAs<StringAttr>("note"))
    os << "    (" << note.getValue() << ")\n";
}

void mlir::zero::printMemoryReport(llvm::raw_ostream &os, ModuleOp planned,
                                   const CompileOptions &options) {
  auto memory = planned->getAttrOfType<DictionaryAttr>("zero.memory");
  if (!memory)
    return;
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
      os << llvm::formatv(
          "  {0,-16} {1,18} {2,18} {3,18} {4,11}\n", label,
          grouped(intEntry(cat, "arguments")), grouped(intEntry(cat, "peak")),
          grouped(intEntry(at, name)), humanBytes(intEntry(cat, "peak")));
    }
    int64_t peak = intEntry(m, "peak");
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
      int64_t p = intEntry(ms, "parameters"), g = intEntry(ms, "gradients"),
              o = intEntry(ms, "optimizer_state");
      os << llvm::formatv("  model states {0} B ({1}): parameters {2}, "
                          "gradients {3}, optimizer state {4}\n",
                          grouped(p + g + o), humanBytes(p + g + o), grouped(p),
                          grouped(g), grouped(o));
    }
    if (auto remat = fn->getAttrOfType<DictionaryAttr>("zero.remat"))
      printRemat(os, remat, options);
  }
}

LogicalResult mlir::zero::predictTimeline(ModuleOp planned,
                                          CompileOptions &options) {
  auto hw = HardwareModel::load(options.hardware);
  if (!hw)
    return planned.emitError(llvm::toString(hw.takeError()));
  // The CUDA target splits full reductions into partials and groups
  // launches (rows, independent ones) before it maps them to threads: its
  // launches are predicted after the same passes.
  if (options.cuda) {
    PassManager pm(planned.getContext());
    pm.addPass(cuda::createZeroGPUSplitReductions());
    pm.addPass(cuda::createZeroGPUOnlineSoftmax());
    pm.addPass(cuda::createZeroGPURowGroups());
    pm.addPass(cuda::createZeroGPUGroupLaunches());
    if (failed(pm.run(planned)))
      return failure();
  }
  Builder b(planned.getContext());
  SmallVector<NamedAttribute> reports;
  std::vector<::zero::rt::TraceEvent> trace;
  for (auto fn : planned.getOps<func::FuncOp>()) {
    if (!fn->hasAttr(kEntryAttr) || fn.isExternal())
      continue;
    SimulateOptions o;
    o.worldSize = worldSizeOf(fn);
    o.overlap = options.training.overlapComm;
    o.precision = options.precision;
    o.gpu = options.cuda;
    o.loadBatch = o.gpu ? cuda::kLoadBatch : 1;
    if (o.gpu)
      o.launchThreads = [](Operation *op) -> double {
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
          return cuda::gpuThreads(linalgOp, cuda::kDefaultThreadsPerBlock);
        if (auto loop = dyn_cast<scf::ForOp>(op))
          return cuda::gpuLoopThreads(loop, cuda::kDefaultThreadsPerBlock);
        if (auto group = dyn_cast<RowGroupOp>(op))
          return cuda::rowGroupThreads(group);
        return 1;
      };
    if (o.gpu)
      o.rowGroupShare = [](Operation *op) -> double {
        auto group = op->getParentOfType<RowGroupOp>();
        auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
        if (!group || !linalgOp)
          return 1;
        std::optional<WrittenRegion> region =
            cuda::rowGroupRegion(linalgOp, group.getRowDims());
        return region ? region->share() : 1;
      };
    if (llvm::Error e = hw->check(o.worldSize, o.precision, o.gpu))
      return fn.emitError(llvm::toString(std::move(e)));
    Timeline tl = simulateStep(fn, *hw, o);
    reports.push_back(b.getNamedAttr(fn.getName(), timelineAttr(b, tl)));
    // Only the training step is traced when there is one.
    if (fn.getName() == "main" && planned.lookupSymbol("train_step"))
      continue;
    // The same events zero-run --trace records, in microseconds.
    trace.push_back({planName(fn), "step", 0, 0, tl.stepSeconds * 1e6});
    for (const Timeline::Event &e : tl.events) {
      trace.push_back({e.name, e.category,
                       e.category == "communication" ? 2 : 1, e.start * 1e6,
                       e.duration * 1e6, e.bytes, e.id, e.node, e.kind});
      trace.back().ops = e.ops;
      trace.back().flops = e.flops;
      trace.back().traffic = e.bytesMoved;
      trace.back().threads = e.threads;
      trace.back().bound = e.bound;
    }
  }
  if (reports.empty())
    return failure();
  planned->setAttr("zero.timeline", b.getDictionaryAttr(reports));
  options.timelineEvents = ::zero::rt::chromeTrace(/*pid=*/0, trace);
  return success();
}

/// "fp32 peak", or "bf16 and fp32 peaks": the peaks the step's GEMMs ran
/// at, most FLOPs first.
static std::string matmulPeaks(DictionaryAttr timeline,
                               const CompileOptions &options) {
  SmallVector<std::pair<double, StringRef>> peaks;
  if (auto flops = timeline.getAs<DictionaryAttr>("matmul_flops"))
    for (NamedAttribute a : flops)
      peaks.push_back({cast<FloatAttr>(a.getValue()).getValueAsDouble(),
                       a.getName().strref()});
  if (peaks.empty())
    return options.precision + " peak";
  llvm::sort(peaks, [](auto &x, auto &y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  std::string s;
  for (auto [i, p] : llvm::enumerate(peaks))
    s += (i == 0                  ? ""
          : i + 1 == peaks.size() ? " and "
                                  : ", ") +
         p.second.str();
  return s + (peaks.size() == 1 ? " peak" : " peaks");
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
    auto f = [&](StringRef k) { return floatEntry(t, k); };
    auto i = [&](StringRef k) { return intEntry(t, k); };
    auto ms = [](double s) { return llvm::formatv("{0,12:f3} ms", s * 1e3); };
    os << llvm::formatv("{0}: predicted step on {1} ({2} ranks, ZeRO stage "
                        "{3}, matmuls at the {4}{5}), per rank\n",
                        planName(fn), options.hardware, options.worldSize,
                        options.training.stage, matmulPeaks(t, options),
                        options.cuda ? ", CUDA target" : "");
    os << "  step                    " << ms(f("step_seconds")) << "\n";
    os << "  compute                 " << ms(f("compute_seconds"));
    if (options.cuda)
      os << llvm::formatv("   {0} launches ({1} on one thread), {2:e3} FLOP, "
                          "MFU {3:f1}%\n",
                          i("compute_ops"), i("serial_launches"), f("flops"),
                          100 * f("mfu"));
    else
      os << llvm::formatv("   {0} ops, {1:e3} FLOP, MFU {2:f1}%\n",
                          i("compute_ops"), f("flops"), 100 * f("mfu"));
    if (i("recompute_ops") > 0)
      os << "  recompute               " << ms(f("recompute_seconds"))
         << llvm::formatv("   {0} ops, {1:e3} FLOP, {2:f1}% of compute\n",
                          i("recompute_ops"), f("recompute_flops"),
                          f("compute_seconds") > 0
                              ? 100 * f("recompute_seconds") /
                                    f("compute_seconds")
                              : 0.0);
    // What bounds the compute, longest first: where a faster kernel or a
    // better description would change the prediction.
    if (auto bounds = t.getAs<DictionaryAttr>("bound_seconds");
        bounds && !bounds.empty()) {
      SmallVector<std::pair<double, StringRef>> byBound;
      for (NamedAttribute a : bounds)
        byBound.push_back({cast<FloatAttr>(a.getValue()).getValueAsDouble(),
                           a.getName().strref()});
      llvm::sort(byBound, [](auto &x, auto &y) {
        return x.first != y.first ? x.first > y.first : x.second < y.second;
      });
      os << "  compute bound by       ";
      llvm::interleave(
          byBound, os,
          [&](const auto &entry) {
            os << llvm::formatv(" {0} {1:f3} ms", entry.second,
                                entry.first * 1e3);
          },
          ",");
      os << "\n";
    }
    os << "  communication           " << ms(f("communication_seconds"))
       << llvm::formatv("   {0} collectives, {1} bytes sent\n",
                        i("collectives"), i("bytes_sent"));
    os << "  exposed communication   " << ms(f("exposed_seconds")) << "\n";
    os << "  without overlap         " << ms(f("no_overlap_seconds")) << "\n";
    os << "  lower bound             " << ms(f("lower_bound_seconds"))
       << "   max(compute, communication)\n";
  }
}
