//===- TimelineReport.cpp - predicted timeline of each step ----*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Target/CPU/Timeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUTIMELINEREPORT
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;
using namespace mlir::zero;

zero::cpu::SimulateOptions zero::cpu::simulateOptionsFor(func::FuncOp fn) {
  SimulateOptions o;
  if (auto n = fn->getAttrOfType<IntegerAttr>("zero.world_size"))
    o.worldSize = n.getInt();
  if (auto overlap = fn->getAttrOfType<BoolAttr>("zero.overlap_comm"))
    o.overlap = overlap.getValue();
  return o;
}

DictionaryAttr zero::cpu::timelineAttr(Builder &b, const Timeline &tl) {
  auto f = [&](StringRef name, double v) {
    return b.getNamedAttr(name, b.getF64FloatAttr(v));
  };
  return b.getDictionaryAttr(
      {f("step_seconds", tl.stepSeconds),
       f("compute_seconds", tl.computeSeconds),
       f("communication_seconds", tl.commSeconds),
       f("exposed_seconds", tl.exposedSeconds),
       f("no_overlap_seconds", tl.noOverlapSeconds),
       f("lower_bound_seconds", tl.lowerBoundSeconds), f("flops", tl.flops),
       f("mfu", tl.mfu),
       b.getNamedAttr("compute_ops", b.getI64IntegerAttr(tl.computeOps)),
       b.getNamedAttr("allocations", b.getI64IntegerAttr(tl.allocations)),
       b.getNamedAttr("collectives", b.getI64IntegerAttr(tl.collectives)),
       b.getNamedAttr("bytes_sent", b.getI64IntegerAttr(tl.bytesSent))});
}

namespace {
struct ZeroCPUTimelineReportPass
    : zero::cpu::impl::ZeroCPUTimelineReportBase<ZeroCPUTimelineReportPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (hardware.empty()) {
      module.emitError("zero-cpu-timeline-report needs hardware=FILE.json");
      return signalPassFailure();
    }
    auto hw = cpu::HardwareModel::load(hardware);
    if (!hw) {
      module.emitError(llvm::toString(hw.takeError()));
      return signalPassFailure();
    }
    Builder b(module.getContext());
    SmallVector<NamedAttribute> reports;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(kEntryAttr) || fn.isExternal())
        continue;
      cpu::SimulateOptions o = cpu::simulateOptionsFor(fn);
      o.precision = precision;
      o.recordEvents = false;
      if (llvm::Error e = hw->check(o.worldSize, o.precision)) {
        fn.emitError(llvm::toString(std::move(e)));
        return signalPassFailure();
      }
      reports.push_back(b.getNamedAttr(
          fn.getName(), cpu::timelineAttr(b, cpu::simulateStep(fn, *hw, o))));
    }
    module->setAttr("zero.timeline", b.getDictionaryAttr(reports));
  }
};
} // namespace
