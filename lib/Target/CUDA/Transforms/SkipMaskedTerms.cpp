//===- SkipMaskedTerms.cpp - sums that skip a mask's zeros -----*- C++ -*-===//
//
// A causal softmax's probabilities are exactly zero where its constant mask
// is false, yet the softmax backward's row sum of dP x P reads both whole.
// Its terms are selected by the mask instead, so that the GPU loads neither
// operand there (zero-gpu-guard-loads); the sums are the same.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <sstream>

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUSKIPMASKEDTERMS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {
/// Bounds the walks over a body's expressions.
constexpr unsigned kMaxDepth = 16;
/// exp(x) rounds to zero in f32 (and every narrower type) below this.
constexpr double kMaxFill = -104;

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

/// What makes a producer's value zero: the block argument of the mask whose
/// elements equal to `zeroWhen` hide (false where the select keeps its true
/// value), the producer's loops that a statistic subtracted on the way is
/// taken over (each slice along them must keep an element for it to be
/// finite), and, before an exponential, the bound of the value where the
/// mask hides.
struct ZeroCause {
  BlockArgument condition;
  bool zeroWhen = false;
  llvm::SmallBitVector statisticLoops;
  double bound = 0;
};

/// The condition argument of a select in `g`'s body one of whose values
/// is a constant that `accept` takes (the fill); `bound` is that constant.
std::optional<ZeroCause>
selectOf(linalg::GenericOp g, Value v,
         llvm::function_ref<bool(const APFloat &)> accept) {
  auto select = v.getDefiningOp<arith::SelectOp>();
  if (!select)
    return std::nullopt;
  // The condition, or its negation (`xori` with true).
  Value condition = select.getCondition();
  bool negated = false;
  if (auto x = condition.getDefiningOp<arith::XOrIOp>()) {
    for (unsigned i : {0u, 1u})
      if (matchPattern(x->getOperand(1 - i), m_One())) {
        condition = x->getOperand(i);
        negated = true;
        break;
      }
  }
  auto cond = dyn_cast<BlockArgument>(condition);
  if (!cond || cond.getOwner() != g.getBody() ||
      !g.isDpsInput(g.getMatchingOpOperand(cond)))
    return std::nullopt;
  // Masks are written both ways: true keeps (select(m, s, fill)) or true
  // hides (select(m, fill, s)).
  for (bool whenTrue : {false, true}) {
    FloatAttr fill;
    Value side = whenTrue ? select.getTrueValue() : select.getFalseValue();
    if (matchPattern(side, m_Constant(&fill)) && accept(fill.getValue()))
      return ZeroCause{cond, whenTrue != negated,
                       llvm::SmallBitVector(g.getNumLoops()),
                       fill.getValue().convertToDouble()};
  }
  return std::nullopt;
}

/// A positive finite constant.
bool positiveConstant(Value v, double &value) {
  FloatAttr f;
  if (!matchPattern(v, m_Constant(&f)) || !f.getValue().isFinite() ||
      f.getValue().isNegative() || f.getValue().isZero())
    return false;
  value = f.getValue().convertToDouble();
  return true;
}

/// Why `v` lies at or below a negative bound where a mask of `g` hides, if
/// it does: a select of a negative constant (-inf, or a model's
/// finite stand-in such as -1e9), widened, narrowed, scaled by a positive
/// constant, shifted by a constant, or less a statistic of the rows (the
/// bound kept: the statistic is at least a row's unmasked value).
std::optional<ZeroCause> belowWhereHidden(linalg::GenericOp g, Value v,
                                          unsigned depth = 0) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > kMaxDepth)
    return std::nullopt;
  if (auto cause = selectOf(g, v, [](const APFloat &f) {
        return f.isNegative() && !f.isNaN() && !f.isZero();
      }))
    return cause;
  if (isa<arith::ExtFOp, arith::TruncFOp>(op))
    return belowWhereHidden(g, op->getOperand(0), depth + 1);
  if (isa<arith::SubFOp, arith::AddFOp>(op)) {
    std::optional<ZeroCause> cause =
        belowWhereHidden(g, op->getOperand(0), depth + 1);
    Value other = op->getOperand(1);
    if (!cause && isa<arith::AddFOp>(op)) {
      cause = belowWhereHidden(g, other, depth + 1);
      other = op->getOperand(0);
    }
    if (!cause)
      return std::nullopt;
    FloatAttr f;
    if (matchPattern(other, m_Constant(&f))) {
      if (!f.getValue().isFinite())
        return std::nullopt;
      double c = f.getValue().convertToDouble();
      cause->bound += isa<arith::SubFOp>(op) ? -c : c;
      return cause;
    }
    // A statistic of the rows (their maximum): the loops it is taken over.
    auto arg = dyn_cast<BlockArgument>(other);
    if (!arg || arg.getOwner() != g.getBody() || !isa<arith::SubFOp>(op))
      return std::nullopt;
    AffineMap map = g.getMatchingIndexingMap(g.getMatchingOpOperand(arg));
    for (unsigned loop = 0; loop < g.getNumLoops(); ++loop)
      if (!map.isFunctionOfDim(loop))
        cause->statisticLoops.set(loop);
    return cause;
  }
  if (isa<arith::MulFOp>(op)) {
    for (unsigned i : {0u, 1u}) {
      double c;
      if (!positiveConstant(op->getOperand(1 - i), c))
        continue;
      std::optional<ZeroCause> cause =
          belowWhereHidden(g, op->getOperand(i), depth + 1);
      if (cause)
        cause->bound *= c;
      return cause;
    }
  }
  return std::nullopt;
}

/// Why `v` is zero where a mask of `g` hides, if it is.
std::optional<ZeroCause> zeroWhereHidden(linalg::GenericOp g, Value v,
                                         double maxFill, unsigned depth = 0) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > kMaxDepth)
    return std::nullopt;
  if (auto cause = selectOf(g, v, [](const APFloat &f) { return f.isZero(); }))
    return cause;
  if (isa<arith::ExtFOp, arith::TruncFOp, arith::NegFOp>(op))
    return zeroWhereHidden(g, op->getOperand(0), maxFill, depth + 1);
  if (isa<math::ExpOp>(op)) {
    std::optional<ZeroCause> cause =
        belowWhereHidden(g, op->getOperand(0), depth + 1);
    if (!cause || cause->bound > maxFill)
      return std::nullopt;
    return cause;
  }
  if (isa<arith::MulFOp>(op)) {
    if (auto cause = zeroWhereHidden(g, op->getOperand(0), maxFill, depth + 1))
      return cause;
    return zeroWhereHidden(g, op->getOperand(1), maxFill, depth + 1);
  }
  if (isa<arith::DivFOp>(op))
    return zeroWhereHidden(g, op->getOperand(0), maxFill, depth + 1);
  return std::nullopt;
}

/// Whether every slice of `mask` along the dimensions that `map` gives
/// `loops` (the others fixed) holds an element equal to `kept`. Answers are
/// kept: every layer's softmax asks about the same mask.
class SliceCheck {
public:
  bool holds(DenseElementsAttr mask, AffineMap map,
             const llvm::SmallBitVector &loops, bool kept) {
    SmallVector<bool> along(map.getNumResults(), false);
    for (auto [dim, expr] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(expr))
        along[dim] = loops.test(d.getPosition());
    if (along.size() > 64)
      return compute(mask, along, kept);
    uint64_t key = 0;
    for (auto [dim, a] : llvm::enumerate(along))
      key |= uint64_t(a) << dim;
    auto [it, inserted] =
        answers.try_emplace({mask, key, unsigned(kept)}, false);
    if (inserted)
      it->second = compute(mask, along, kept);
    return it->second;
  }

private:
  static bool compute(DenseElementsAttr mask, ArrayRef<bool> along, bool kept) {
    if (mask.isSplat())
      return mask.getSplatValue<bool>() == kept;
    ArrayRef<int64_t> shape = cast<ShapedType>(mask.getType()).getShape();
    // Each element's slice: its index with the dimensions along zeroed.
    SmallVector<int64_t> strides(shape.size(), 1),
        sliceStrides(shape.size(), 0);
    int64_t slices = 1;
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      if (d + 1 < int64_t(shape.size()))
        strides[d] = strides[d + 1] * shape[d + 1];
      if (!along[d]) {
        sliceStrides[d] = slices;
        slices *= shape[d];
      }
    }
    std::vector<bool> seen(slices, false);
    int64_t index = 0;
    for (bool value : mask.getValues<bool>()) {
      if (value == kept) {
        int64_t slice = 0;
        for (size_t d = 0; d < shape.size(); ++d)
          slice += (index / strides[d]) % shape[d] * sliceStrides[d];
        seen[slice] = true;
      }
      ++index;
    }
    return llvm::all_of(seen, [](bool s) { return s; });
  }

  DenseMap<std::tuple<Attribute, uint64_t, unsigned>, bool> answers;
};

/// A constant mask, its indexing map in a reduction's loops, and the value
/// of its elements where the reduction's terms are zero.
struct Mask {
  Value bits;
  AffineMap map;
  bool zeroWhen;
};

/// The mask `r`'s term can be selected by: the constant condition input of
/// the producer of `r`'s input `in`. None when the producer's zeros are not
/// proven.
std::optional<Mask> maskFor(linalg::GenericOp r, OpOperand *in, double maxFill,
                            SliceCheck &slices) {
  auto g = in->get().getDefiningOp<linalg::GenericOp>();
  if (!g || !g.hasPureTensorSemantics() || g->getNumResults() != 1 ||
      g.getNumLoops() != g.getNumParallelLoops())
    return std::nullopt;
  AffineMap produced = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
  if (!produced.isPermutation())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  std::optional<ZeroCause> cause =
      zeroWhereHidden(g, yield.getOperand(0), maxFill);
  if (!cause)
    return std::nullopt;
  OpOperand *maskOperand = g.getMatchingOpOperand(cause->condition);
  DenseElementsAttr bits;
  if (!matchPattern(maskOperand->get(), m_Constant(&bits)) ||
      !bits.getElementType().isInteger(1))
    return std::nullopt;
  AffineMap maskInG = g.getMatchingIndexingMap(maskOperand);
  if (cause->statisticLoops.any() &&
      !slices.holds(bits, maskInG, cause->statisticLoops, !cause->zeroWhen))
    return std::nullopt;
  AffineMap maskInR = maskInG.compose(
      inversePermutation(produced).compose(r.getMatchingIndexingMap(in)));
  if (!maskInR.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  return Mask{maskOperand->get(), maskInR, cause->zeroWhen};
}

/// Selects `r`'s term by a mask, where one is found; the new op, or null.
linalg::GenericOp skipMaskedTerms(RewriterBase &rewriter, linalg::GenericOp r,
                                  double maxFill, SliceCheck &slices) {
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
    std::optional<Mask> mask = maskFor(r, in, maxFill, slices);
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
    if (maxFill > kMaxFill) {
      std::ostringstream given;
      given << static_cast<double>(maxFill);
      getOperation()->emitError()
          << "max-fill is " << given.str() << "; give "
          << static_cast<int64_t>(kMaxFill)
          << " or less (exp of a larger value is not zero in f32)";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> reductions;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (op.getNumReductionLoops() > 0)
        reductions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    SliceCheck slices;
    for (linalg::GenericOp r : reductions)
      (void)skipMaskedTerms(rewriter, r, maxFill, slices);
  }
};
} // namespace
