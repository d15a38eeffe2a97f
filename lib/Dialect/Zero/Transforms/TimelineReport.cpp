//===- TimelineReport.cpp - predicted timeline of each step ----*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Timeline.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROTIMELINEREPORT
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

int64_t zero::worldSizeOf(func::FuncOp fn) {
  auto n = fn->getAttrOfType<IntegerAttr>("zero.world_size");
  return n ? n.getInt() : 1;
}

DictionaryAttr zero::timelineAttr(Builder &b, const Timeline &tl) {
  auto f = [&](StringRef name, double v) {
    return b.getNamedAttr(name, b.getF64FloatAttr(v));
  };
  SmallVector<NamedAttribute> matmuls, bounds;
  for (const auto &[key, flops] : tl.matmulFlops)
    matmuls.push_back(f(key, flops));
  for (const auto &[bound, seconds] : tl.boundSeconds)
    bounds.push_back(f(bound, seconds));
  return b.getDictionaryAttr(
      {b.getNamedAttr("matmul_flops", b.getDictionaryAttr(matmuls)),
       b.getNamedAttr("bound_seconds", b.getDictionaryAttr(bounds)),
       b.getNamedAttr("mfu_peak", b.getStringAttr(tl.mfuPeak)),
       f("step_seconds", tl.stepSeconds),
       f("compute_seconds", tl.computeSeconds),
       f("communication_seconds", tl.commSeconds),
       f("exposed_seconds", tl.exposedSeconds),
       f("no_overlap_seconds", tl.noOverlapSeconds),
       f("lower_bound_seconds", tl.lowerBoundSeconds), f("flops", tl.flops),
       f("mfu", tl.mfu), f("recompute_seconds", tl.recomputeSeconds),
       f("recompute_flops", tl.recomputeFlops),
       b.getNamedAttr("recompute_ops", b.getI64IntegerAttr(tl.recomputeOps)),
       b.getNamedAttr("compute_ops", b.getI64IntegerAttr(tl.computeOps)),
       b.getNamedAttr("allocations", b.getI64IntegerAttr(tl.allocations)),
       b.getNamedAttr("serial_launches",
                      b.getI64IntegerAttr(tl.serialLaunches)),
       b.getNamedAttr("collectives", b.getI64IntegerAttr(tl.collectives)),
       b.getNamedAttr("bytes_sent", b.getI64IntegerAttr(tl.bytesSent))});
}

namespace {
struct ZeroTimelineReportPass
    : zero::impl::ZeroTimelineReportBase<ZeroTimelineReportPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (hardware.empty()) {
      module.emitError("zero-timeline-report needs hardware=FILE.json");
      return signalPassFailure();
    }
    if (loadBatch < 1) {
      module.emitError("zero-timeline-report: load-batch ")
          << static_cast<int64_t>(loadBatch) << " must be at least 1";
      return signalPassFailure();
    }
    auto hw = HardwareModel::load(hardware);
    if (!hw) {
      module.emitError(llvm::toString(hw.takeError()));
      return signalPassFailure();
    }
    Builder b(module.getContext());
    SmallVector<NamedAttribute> reports;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(kEntryAttr) || fn.isExternal())
        continue;
      SimulateOptions o;
      o.worldSize = worldSizeOf(fn);
      o.overlap = overlapComm;
      o.precision = precision;
      o.recordEvents = false;
      o.gpu = gpu;
      o.loadBatch = loadBatch;
      if (llvm::Error e = hw->check(o.worldSize, o.precision, o.gpu)) {
        fn.emitError(llvm::toString(std::move(e)));
        return signalPassFailure();
      }
      reports.push_back(b.getNamedAttr(
          fn.getName(), timelineAttr(b, simulateStep(fn, *hw, o))));
    }
    module->setAttr("zero.timeline", b.getDictionaryAttr(reports));
  }
};
} // namespace
