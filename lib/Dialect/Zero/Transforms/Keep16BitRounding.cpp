//===- Keep16BitRounding.cpp - one rounding per 16-bit op -------*- C++ -*-===//
//
// Upstream's float emulation marks the conversions around each emulated op
// `contract`, which lets folds drop the rounding between two ops.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROKEEP16BITROUNDING
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

/// Whether `t` is, or holds, a float narrower than 32 bits.
static bool is16BitFloat(Type t) {
  auto f = dyn_cast<FloatType>(getElementTypeOrSelf(t));
  return f && f.getWidth() < 32;
}

namespace {
struct ZeroKeep16BitRoundingPass
    : zero::impl::ZeroKeep16BitRoundingBase<ZeroKeep16BitRoundingPass> {
  void runOnOperation() override {
    getOperation()->walk([&](Operation *op) {
      // extf from 16 bits and truncf to 16 bits: the two ends of an
      // emulated op.
      Type narrow;
      if (auto ext = dyn_cast<arith::ExtFOp>(op))
        narrow = ext.getIn().getType();
      else if (auto trunc = dyn_cast<arith::TruncFOp>(op))
        narrow = trunc.getType();
      else
        return;
      auto fm = dyn_cast<arith::ArithFastMathInterface>(op);
      if (!is16BitFloat(narrow) || !fm)
        return;
      arith::FastMathFlagsAttr flags = fm.getFastMathFlagsAttr();
      if (!flags ||
          !bitEnumContainsAny(flags.getValue(), arith::FastMathFlags::contract))
        return;
      arith::FastMathFlags rest =
          bitEnumClear(flags.getValue(), arith::FastMathFlags::contract);
      if (rest == arith::FastMathFlags::none)
        op->removeAttr(fm.getFastMathAttrName());
      else
        op->setAttr(fm.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(&getContext(), rest));
    });
  }
};
} // namespace
