//===- DecomposeSoftmax.cpp - linalg.softmax as TOSA ops --------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/TosaBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZERODECOMPOSESOFTMAX
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
/// Gives every op the builder creates the softmax's discardable
/// attributes: a recomputed or backward softmax stays one.
struct CopyAttributes : public OpBuilder::Listener {
  ArrayRef<NamedAttribute> attrs;
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    for (NamedAttribute a : attrs)
      op->setAttr(a.getName(), a.getValue());
  }
};

struct ZeroDecomposeSoftmaxPass
    : zero::impl::ZeroDecomposeSoftmaxBase<ZeroDecomposeSoftmaxPass> {
  void runOnOperation() override {
    SmallVector<linalg::SoftmaxOp> ops;
    getOperation().walk([&](linalg::SoftmaxOp op) { ops.push_back(op); });
    for (linalg::SoftmaxOp op : ops) {
      if (!op.hasPureTensorSemantics()) {
        op.emitError("softmax on buffers: expected tensors");
        return signalPassFailure();
      }
      SmallVector<NamedAttribute> attrs(op->getDiscardableAttrs());
      CopyAttributes listener;
      listener.attrs = attrs;
      OpBuilder b(op);
      b.setListener(&listener);
      TosaBuilder tb(b, op.getLoc());

      Value x = op.getInput();
      Type elt = TosaBuilder::typeOf(x).getElementType();
      // 16-bit inputs: fp32 throughout, one rounding of the result.
      Type f32 = b.getF32Type();
      bool narrow = cast<FloatType>(elt).getWidth() < 32;
      if (narrow)
        x = tb.castTo(x, f32);
      int64_t dim = op.getDimension();
      SmallVector<int64_t> reduced(TosaBuilder::shapeOf(x));
      reduced[dim] = 1;
      auto reducedTy = TosaBuilder::typeOf(x).clone(reduced);
      auto axis = b.getI32IntegerAttr(dim);
      auto mx = tosa::ReduceMaxOp::create(b, op.getLoc(), reducedTy, x, axis);
      // Were the result differentiated again: the max shifts, it takes no
      // gradient.
      mx->setAttr(kStopGradientAttr, b.getUnitAttr());
      Value sh = tb.sub(x, mx);
      Value e = tosa::ExpOp::create(b, op.getLoc(), sh.getType(), sh);
      Value s = tosa::ReduceSumOp::create(b, op.getLoc(), reducedTy, e, axis);
      Value y = tb.mul(e, tb.recip(s));
      if (narrow)
        y = tb.castTo(y, elt);
      op->getResult(0).replaceAllUsesWith(y);
      Value init = op.getOutput();
      op->erase();
      if (auto empty = init.getDefiningOp<tensor::EmptyOp>();
          empty && empty->use_empty())
        empty->erase();
    }
  }
};
} // namespace
