//===- DropInPlaceResults.cpp - results updated in place -------*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUDROPINPLACERESULTS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

/// The block argument `v` is a whole-buffer view of, if any.
static BlockArgument viewedArgument(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto c = dyn_cast<memref::CollapseShapeOp>(def))
      v = c.getSrc();
    else if (auto e = dyn_cast<memref::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<memref::CastOp>(def))
      v = c.getSource();
    else
      return {};
  }
  return dyn_cast<BlockArgument>(v);
}

namespace {
struct ZeroCPUDropInPlaceResultsPass
    : zero::cpu::impl::ZeroCPUDropInPlaceResultsBase<
          ZeroCPUDropInPlaceResultsPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!fn->hasAttr("zero.entry") || fn.isExternal())
        continue;
      auto inPlace =
          fn->getAttrOfType<DenseI64ArrayAttr>("zero.inplace_results");
      if (!inPlace)
        continue;
      SmallVector<func::ReturnOp> returns;
      fn.walk([&](func::ReturnOp r) { returns.push_back(r); });
      llvm::BitVector drop(fn.getNumResults());
      for (int64_t i : inPlace.asArrayRef()) {
        if (i < 0 || i >= fn.getNumResults()) {
          fn.emitError("zero.inplace_results lists result ")
              << i << " of a function with " << fn.getNumResults()
              << " results";
          return signalPassFailure();
        }
        // In place only where every return hands back a view of the very
        // argument the result updates.
        auto updates = fn.getResultAttrOfType<IntegerAttr>(i, "zero.updates");
        if (!updates || updates.getInt() < 0 ||
            updates.getInt() >= fn.getNumArguments())
          continue;
        BlockArgument arg = fn.getArgument(updates.getInt());
        if (llvm::all_of(returns, [&](func::ReturnOp r) {
              return viewedArgument(r.getOperand(i)) == arg;
            }))
          drop.set(i);
      }
      // The list is consumed: running again changes nothing.
      fn->removeAttr("zero.inplace_results");
      if (drop.none())
        continue;
      for (func::ReturnOp r : returns)
        r->eraseOperands(drop);
      if (failed(fn.eraseResults(drop)))
        return signalPassFailure();
    }
  }
};
} // namespace
