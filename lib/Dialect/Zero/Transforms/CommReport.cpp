//===- CommReport.cpp - bytes sent per step, by collective -----*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROCOMMREPORT
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

/// How many times `op` runs per call of its function: the product of the
/// static trip counts of the loops around it (1 when unknown).
static int64_t timesRun(Operation *op) {
  int64_t times = 1;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>()) {
    auto lb = getConstantIntValue(loop.getLowerBound());
    auto ub = getConstantIntValue(loop.getUpperBound());
    auto st = getConstantIntValue(loop.getStep());
    if (lb && ub && st && *st > 0)
      times *= std::max<int64_t>(0, (*ub - *lb + *st - 1) / *st);
  }
  return times;
}

namespace {
struct ZeroCommReportPass : zero::impl::ZeroCommReportBase<ZeroCommReportPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(&getContext());
    SmallVector<NamedAttribute> reports;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(kEntryAttr))
        continue;
      int64_t bytes[3] = {0, 0, 0}, calls[3] = {0, 0, 0};
      // Synchronous and started collectives alike, before or after the
      // schedule.
      fn.walk([&](CollectiveOpInterface op) {
        auto kind = static_cast<unsigned>(op.getCollectiveKind());
        int64_t times = timesRun(op);
        bytes[kind] += times * op.getRingBytesSent();
        calls[kind] += times;
      });
      auto dict = [&](int64_t *v) {
        return b.getDictionaryAttr(
            {b.getNamedAttr("all_reduce", b.getI64IntegerAttr(v[0])),
             b.getNamedAttr("reduce_scatter", b.getI64IntegerAttr(v[1])),
             b.getNamedAttr("all_gather", b.getI64IntegerAttr(v[2]))});
      };
      reports.push_back(b.getNamedAttr(
          fn.getName(), b.getDictionaryAttr(
                            {b.getNamedAttr("bytes_sent_per_rank", dict(bytes)),
                             b.getNamedAttr("calls", dict(calls))})));
    }
    module->setAttr("zero.comm", b.getDictionaryAttr(reports));
  }
};
} // namespace
