//===- SplitEmptyTensors.cpp - one tensor.empty per use --------*- C++ -*-===//
//
// CSE merges identical tensor.empty ops, so one empty tensor becomes the
// destination of many unrelated ops (every all-gather of a same-shaped
// parameter, say). One-shot bufferization then writes all of them in place
// into a single buffer, which must live from the first to the last: a
// stage-3 step would hold a gathered parameter from the forward pass to the
// end of the backward. Giving each use its own tensor.empty, right before
// it, gives each destination its own allocation where it is first written,
// which zero-release-early frees after its last use.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUSPLITEMPTYTENSORS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
struct ZeroCPUSplitEmptyTensorsPass
    : zero::cpu::impl::ZeroCPUSplitEmptyTensorsBase<
          ZeroCPUSplitEmptyTensorsPass> {
  void runOnOperation() override {
    // Reshapes and slices of an empty tensor become empty tensors, so that
    // a shared reshaped destination splits too.
    RewritePatternSet patterns(&getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    SmallVector<tensor::EmptyOp> empties;
    getOperation()->walk([&](tensor::EmptyOp e) { empties.push_back(e); });
    OpBuilder b(&getContext());
    for (tensor::EmptyOp e : empties) {
      if (e->hasOneUse() || e->use_empty())
        continue;
      // A copy right before each user: the allocation it becomes then
      // starts where the buffer is first written.
      SmallVector<OpOperand *> uses;
      for (OpOperand &u : e->getUses())
        uses.push_back(&u);
      for (OpOperand *u : uses) {
        b.setInsertionPoint(u->getOwner());
        u->set(b.clone(*e)->getResult(0));
      }
      e->erase();
    }
  }
};
} // namespace
