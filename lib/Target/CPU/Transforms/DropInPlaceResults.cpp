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
      auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
      llvm::BitVector drop(fn.getNumResults());
      for (int64_t i : inPlace.asArrayRef()) {
        BlockArgument arg = viewedArgument(ret.getOperand(i));
        if (arg && arg.getOwner() == &fn.getBody().front())
          drop.set(i);
      }
      if (drop.none())
        continue;
      ret->eraseOperands(drop);
      if (failed(fn.eraseResults(drop)))
        return signalPassFailure();
    }
  }
};
} // namespace
