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
// A splat constant that an op writes into (a scatter-add's zero start, as
// the backward of Gather has) would bufferize to a global of the whole
// tensor, copied into a buffer each time: an embedding gradient's zeros
// took 320 MB of the step library and of the arena. It becomes a fill of
// an empty tensor at each such use.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUSPLITEMPTYTENSORS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
/// Whether `use` writes into (a copy of) the tensor it names.
bool isDestination(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(user))
    return dps.isDpsInit(&use);
  if (auto loop = dyn_cast<scf::ForOp>(user))
    return use.getOperandNumber() >= loop.getNumControlOperands();
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(user))
    return use.get() == insert.getDest();
  if (auto insert = dyn_cast<tensor::InsertOp>(user))
    return use.get() == insert.getDest();
  return false;
}

/// Replaces every destination use of a splat tensor constant by a fill of
/// an empty tensor right before its user.
void fillSplatDestinations(Operation *root, OpBuilder &b) {
  SmallVector<std::pair<arith::ConstantOp, TypedAttr>> splats;
  root->walk([&](arith::ConstantOp c) {
    // A fill takes an integer, index or float scalar (not a complex one).
    auto attr = dyn_cast<SplatElementsAttr>(c.getValue());
    auto type = dyn_cast<RankedTensorType>(c.getType());
    if (attr && type && type.getElementType().isIntOrIndexOrFloat())
      splats.push_back({c, attr.getSplatValue<TypedAttr>()});
  });
  for (auto &[c, value] : splats) {
    auto type = cast<RankedTensorType>(c.getType());
    SmallVector<OpOperand *> uses;
    for (OpOperand &u : c->getUses())
      if (isDestination(u))
        uses.push_back(&u);
    for (OpOperand *u : uses) {
      Operation *user = u->getOwner();
      b.setInsertionPoint(user);
      Location loc = user->getLoc();
      Value scalar = arith::ConstantOp::create(b, loc, value);
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      u->set(linalg::FillOp::create(b, loc, scalar, empty).getResult(0));
    }
    if (c->use_empty())
      c->erase();
  }
}

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
    OpBuilder b(&getContext());
    fillSplatDestinations(getOperation(), b);
    // The same holds for a constant fill of an empty tensor (the zero or
    // -inf accumulator of a reduction), and a shared one costs a copy too:
    // every use but the last writes into a copy of it. Each use gets its
    // own fill of its own empty tensor instead.
    SmallVector<linalg::FillOp> fills;
    getOperation()->walk([&](linalg::FillOp f) {
      if (f.hasPureTensorSemantics() && !f->hasOneUse() && !f->use_empty() &&
          f.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        fills.push_back(f);
    });
    for (linalg::FillOp f : fills) {
      Operation *empty = f.getOutputs()[0].getDefiningOp();
      SmallVector<OpOperand *> uses;
      for (OpOperand &u : f->getUses())
        uses.push_back(&u);
      for (OpOperand *u : uses) {
        b.setInsertionPoint(u->getOwner());
        IRMapping map;
        map.map(empty->getResult(0), b.clone(*empty)->getResult(0));
        // The fill now belongs to its user's computation (CSE may have
        // kept the location of another one).
        Operation *fill = b.clone(*f, map);
        fill->setLoc(u->getOwner()->getLoc());
        u->set(fill->getResult(0));
      }
      f->erase();
      if (empty->use_empty())
        empty->erase();
    }
    SmallVector<tensor::EmptyOp> empties;
    getOperation()->walk([&](tensor::EmptyOp e) { empties.push_back(e); });
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
