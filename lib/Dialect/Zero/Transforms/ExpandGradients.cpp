//===- ExpandGradients.cpp - zero.gradient to backward ops -----*- C++ -*-===//
#include "zero-opt/Dialect/Zero/AutoDiff/AutoDiff.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROEXPANDGRADIENTS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
struct ZeroExpandGradientsPass
    : zero::impl::ZeroExpandGradientsBase<ZeroExpandGradientsPass> {
  void runOnOperation() override {
    SmallVector<GradientOp> ops;
    getOperation().walk([&](GradientOp op) { ops.push_back(op); });
    for (GradientOp op : ops) {
      OpBuilder b(op);
      auto grads = buildGradients(b, op.getLoc(), op.getY(), op.getXs());
      if (failed(grads))
        return signalPassFailure();
      op->replaceAllUsesWith(*grads);
      op->erase();
    }
  }
};
} // namespace
