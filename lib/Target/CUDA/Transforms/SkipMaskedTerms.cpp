//===- SkipMaskedTerms.cpp - sums that skip a mask's zeros -----*- C++ -*-===//
//
// A causal softmax's probabilities are exactly zero where its constant mask
// is false, yet the softmax backward's row sum of dP x P reads both whole.
// Its terms are selected by the mask instead, so that the GPU loads neither
// operand there (zero-gpu-guard-loads); the sums are the same.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Utils/Masks.h"
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUSKIPMASKEDTERMS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {
/// Bounds the walks over a body's expressions.
constexpr unsigned kMaxDepth = 16;

/// Whether `v` is zero wherever `p` is (any finite other factor).
bool zeroIfZero(Value v, Value p, unsigned depth = 0) {
  if (v == p)
    return true;
  Operation *op = v.getDefiningOp();
  if (!op || depth > kMaxDepth)
    return false;
  if (isa<arith::ExtFOp, arith::TruncFOp, arith::NegFOp>(op))
    return zeroIfZero(op->getOperand(0), p, depth + 1);
  if (isa<arith::MulFOp>(op))
    return zeroIfZero(op->getOperand(0), p, depth + 1) ||
           zeroIfZero(op->getOperand(1), p, depth + 1);
  if (isa<arith::DivFOp>(op))
    return zeroIfZero(op->getOperand(0), p, depth + 1);
  return false;
}

/// Selects `r`'s term by a mask, where one is found; the new op, or null.
linalg::GenericOp skipMaskedTerms(RewriterBase &rewriter, linalg::GenericOp r,
                                  double maxFill,
                                  zero::MaskSliceCheck &slices) {
  if (!r.hasPureTensorSemantics() || r.getNumReductionLoops() == 0 ||
      r.getNumDpsInits() != 1 || r->getNumResults() != 1)
    return {};
  Block *body = r.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  BlockArgument acc = r.getMatchingBlockArgument(r.getDpsInitOperand(0));
  if (!add || add->getBlock() != body || !acc.hasOneUse())
    return {};
  unsigned termIndex = add.getLhs() == acc ? 1 : add.getRhs() == acc ? 0 : 2;
  if (termIndex == 2)
    return {};
  Value term = add->getOperand(termIndex);
  // Already selected by a mask: nothing to do.
  if (term.getDefiningOp<arith::SelectOp>())
    return {};
  for (OpOperand *in : r.getDpsInputOperands()) {
    if (!zeroIfZero(term, r.getMatchingBlockArgument(in)))
      continue;
    std::optional<zero::ZeroMask> mask = zero::maskedZerosOf(
        in->get(), r.getMatchingIndexingMap(in), maxFill, slices);
    if (!mask)
      continue;
    SmallVector<Value> inputs(r.getDpsInputs());
    inputs.push_back(mask->bits);
    SmallVector<AffineMap> maps = r.getIndexingMapsArray();
    maps.insert(maps.begin() + r.getNumDpsInputs(), mask->map);
    rewriter.setInsertionPoint(r);
    auto masked = linalg::GenericOp::create(
        rewriter, r.getLoc(), r->getResultTypes(), inputs, r.getDpsInits(),
        maps, r.getIteratorTypesArray());
    masked->setDiscardableAttrs(r->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(r.getRegion(), masked.getRegion(),
                                masked.getRegion().end());
    Block *block = masked.getBody();
    BlockArgument bit = block->insertArgument(
        r.getNumDpsInputs(), rewriter.getI1Type(), mask->bits.getLoc());
    rewriter.setInsertionPoint(add);
    Value zero = arith::ConstantOp::create(
        rewriter, add.getLoc(), rewriter.getZeroAttr(term.getType()));
    Value selected = arith::SelectOp::create(rewriter, add.getLoc(), bit,
                                             mask->zeroWhen ? zero : term,
                                             mask->zeroWhen ? term : zero);
    rewriter.modifyOpInPlace(add,
                             [&] { add->setOperand(termIndex, selected); });
    rewriter.replaceOp(r, masked->getResults());
    return masked;
  }
  return {};
}

struct ZeroGPUSkipMaskedTermsPass
    : zero::cuda::impl::ZeroGPUSkipMaskedTermsBase<ZeroGPUSkipMaskedTermsPass> {
  using Base::Base;
  void runOnOperation() override {
    // A larger fill's exponential is not zero in f32.
    if (failed(zero::checkMaxFill(getOperation(), maxFill)))
      return signalPassFailure();
    SmallVector<linalg::GenericOp> reductions;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (op.getNumReductionLoops() > 0)
        reductions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    zero::MaskSliceCheck slices;
    for (linalg::GenericOp r : reductions)
      (void)skipMaskedTerms(rewriter, r, maxFill, slices);
  }
};
} // namespace
