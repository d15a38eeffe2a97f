//===- Masks.cpp - values a constant mask makes zero ------------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Utils/Masks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

#include <sstream>

using namespace mlir;
using namespace mlir::zero;

namespace {
/// Bounds the walks over a body's expressions.
constexpr unsigned kMaxDepth = 16;

/// What makes a producer's value zero: the constant mask (its value, its
/// map in the producer's loops) whose elements equal to `zeroWhen` hide
/// (false where the select keeps its true value), the producer's loops that
/// a statistic subtracted on the way is taken over (each slice along them
/// must keep an element for it to be finite), and, before an exponential,
/// the bound of the value where the mask hides.
struct ZeroCause {
  Value bits;
  DenseElementsAttr values;
  AffineMap maskMap;
  bool zeroWhen = false;
  llvm::SmallBitVector statisticLoops;
  double bound = 0;
};

/// The mask of a select in `g`'s body whose condition is a constant i1
/// input (or its negation) and one of whose values is a constant that
/// `accept` takes (the fill); `bound` is that constant.
std::optional<ZeroCause>
selectOf(linalg::GenericOp g, Value v,
         llvm::function_ref<bool(const APFloat &)> accept) {
  auto select = v.getDefiningOp<arith::SelectOp>();
  if (!select)
    return std::nullopt;
  // The condition, or its negation.
  bool negated;
  auto cond =
      dyn_cast<BlockArgument>(withoutNegation(select.getCondition(), negated));
  if (!cond || cond.getOwner() != g.getBody() ||
      !g.isDpsInput(g.getMatchingOpOperand(cond)))
    return std::nullopt;
  OpOperand *operand = g.getMatchingOpOperand(cond);
  DenseElementsAttr bits;
  if (!matchPattern(operand->get(), m_Constant(&bits)) ||
      !bits.getElementType().isInteger(1))
    return std::nullopt;
  // Masks are written both ways: true keeps (select(m, s, fill)) or true
  // hides (select(m, fill, s)).
  for (bool whenTrue : {false, true}) {
    FloatAttr fill;
    Value side = whenTrue ? select.getTrueValue() : select.getFalseValue();
    if (matchPattern(side, m_Constant(&fill)) && accept(fill.getValue()))
      return ZeroCause{operand->get(),
                       bits,
                       g.getMatchingIndexingMap(operand),
                       whenTrue != negated,
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
std::optional<ZeroCause> inherited(linalg::GenericOp g, Value v, bool zero,
                                   double maxFill, MaskSliceCheck &slices,
                                   unsigned depth);

std::optional<ZeroCause> belowWhereHidden(linalg::GenericOp g, Value v,
                                          double maxFill,
                                          MaskSliceCheck &slices,
                                          unsigned depth = 0) {
  if (depth > kMaxDepth)
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op)
    return inherited(g, v, /*zero=*/false, maxFill, slices, depth + 1);
  if (auto cause = selectOf(g, v, [](const APFloat &f) {
        return f.isNegative() && !f.isNaN() && !f.isZero();
      }))
    return cause;
  if (isa<arith::ExtFOp, arith::TruncFOp>(op))
    return belowWhereHidden(g, op->getOperand(0), maxFill, slices, depth + 1);
  if (isa<arith::SubFOp, arith::AddFOp>(op)) {
    std::optional<ZeroCause> cause =
        belowWhereHidden(g, op->getOperand(0), maxFill, slices, depth + 1);
    Value other = op->getOperand(1);
    if (!cause && isa<arith::AddFOp>(op)) {
      cause = belowWhereHidden(g, other, maxFill, slices, depth + 1);
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
          belowWhereHidden(g, op->getOperand(i), maxFill, slices, depth + 1);
      if (cause)
        cause->bound *= c;
      return cause;
    }
  }
  return std::nullopt;
}

/// Why `v` is zero where a mask of `g` hides, if it is.
std::optional<ZeroCause> zeroWhereHidden(linalg::GenericOp g, Value v,
                                         double maxFill, MaskSliceCheck &slices,
                                         unsigned depth = 0) {
  if (depth > kMaxDepth)
    return std::nullopt;
  Operation *op = v.getDefiningOp();
  if (!op)
    return inherited(g, v, /*zero=*/true, maxFill, slices, depth + 1);
  if (auto cause = selectOf(g, v, [](const APFloat &f) { return f.isZero(); }))
    return cause;
  if (isa<arith::ExtFOp, arith::TruncFOp, arith::NegFOp>(op))
    return zeroWhereHidden(g, op->getOperand(0), maxFill, slices, depth + 1);
  if (isa<math::ExpOp>(op)) {
    std::optional<ZeroCause> cause =
        belowWhereHidden(g, op->getOperand(0), maxFill, slices, depth + 1);
    if (!cause || cause->bound > maxFill)
      return std::nullopt;
    return cause;
  }
  if (isa<arith::MulFOp>(op)) {
    if (auto cause =
            zeroWhereHidden(g, op->getOperand(0), maxFill, slices, depth + 1))
      return cause;
    return zeroWhereHidden(g, op->getOperand(1), maxFill, slices, depth + 1);
  }
  if (isa<arith::DivFOp>(op))
    return zeroWhereHidden(g, op->getOperand(0), maxFill, slices, depth + 1);
  return std::nullopt;
}

/// Why input element `v` of `g` is zero (or, `zero` false, at or below a
/// bound) where a mask hides: its producer's value is, a parallel generic
/// written in the order it is read (the CPU target's softmax stored in
/// stages: masked scores, their exponentials, the probabilities). A
/// statistic the producer subtracted is checked there; the mask's map
/// becomes `g`'s.
std::optional<ZeroCause> inherited(linalg::GenericOp g, Value v, bool zero,
                                   double maxFill, MaskSliceCheck &slices,
                                   unsigned depth) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != g.getBody())
    return std::nullopt;
  OpOperand *operand = g.getMatchingOpOperand(arg);
  auto p = operand->get().getDefiningOp<linalg::GenericOp>();
  if (!g.isDpsInput(operand) || !p || !p.hasPureTensorSemantics() ||
      p->getNumResults() != 1 || p.getNumLoops() != p.getNumParallelLoops())
    return std::nullopt;
  AffineMap produced = p.getMatchingIndexingMap(p.getDpsInitOperand(0));
  if (!produced.isPermutation())
    return std::nullopt;
  Value yielded =
      cast<linalg::YieldOp>(p.getBody()->getTerminator()).getOperand(0);
  std::optional<ZeroCause> cause =
      zero ? zeroWhereHidden(p, yielded, maxFill, slices, depth)
           : belowWhereHidden(p, yielded, maxFill, slices, depth);
  if (!cause || (cause->statisticLoops.any() &&
                 !slices.holds(cause->values, cause->maskMap,
                               cause->statisticLoops, !cause->zeroWhen)))
    return std::nullopt;
  cause->maskMap = cause->maskMap.compose(
      inversePermutation(produced).compose(g.getMatchingIndexingMap(operand)));
  if (!cause->maskMap.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  cause->statisticLoops = llvm::SmallBitVector(g.getNumLoops());
  return cause;
}

/// Each element's slice: whether all hold an element equal to `kept`.
bool everySliceHolds(DenseElementsAttr mask, ArrayRef<bool> along, bool kept) {
  if (mask.isSplat())
    return mask.getSplatValue<bool>() == kept;
  ArrayRef<int64_t> shape = cast<ShapedType>(mask.getType()).getShape();
  // Each element's slice: its index with the dimensions along zeroed.
  SmallVector<int64_t> strides(shape.size(), 1), sliceStrides(shape.size(), 0);
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
} // namespace

LogicalResult zero::checkMaxFill(Operation *op, double maxFill) {
  if (maxFill <= kMaxMaskFill)
    return success();
  std::ostringstream given;
  given << maxFill;
  return op->emitError() << "max-fill is " << given.str() << "; give "
                         << static_cast<int64_t>(kMaxMaskFill)
                         << " or less (exp of a larger value is not zero "
                            "in f32)";
}

Value zero::withoutNegation(Value condition, bool &negated) {
  negated = false;
  if (auto x = condition.getDefiningOp<arith::XOrIOp>())
    for (unsigned i : {0u, 1u})
      if (matchPattern(x->getOperand(1 - i), m_One())) {
        negated = true;
        return x->getOperand(i);
      }
  return condition;
}

bool MaskSliceCheck::holds(DenseElementsAttr mask, AffineMap map,
                           const llvm::SmallBitVector &loops, bool kept) {
  SmallVector<bool> along(map.getNumResults(), false);
  for (auto [dim, expr] : llvm::enumerate(map.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(expr))
      along[dim] = loops.test(d.getPosition());
  if (along.size() > 64)
    return everySliceHolds(mask, along, kept);
  uint64_t key = 0;
  for (auto [dim, a] : llvm::enumerate(along))
    key |= uint64_t(a) << dim;
  auto [it, inserted] = answers.try_emplace({mask, key, unsigned(kept)}, false);
  if (inserted)
    it->second = everySliceHolds(mask, along, kept);
  return it->second;
}

std::optional<ZeroMask> zero::maskedZerosOf(Value x, AffineMap xMap,
                                            double maxFill,
                                            MaskSliceCheck &slices) {
  auto g = x.getDefiningOp<linalg::GenericOp>();
  if (!g || !g.hasPureTensorSemantics() || g->getNumResults() != 1 ||
      g.getNumLoops() != g.getNumParallelLoops())
    return std::nullopt;
  AffineMap produced = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
  if (!produced.isPermutation())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  std::optional<ZeroCause> cause =
      zeroWhereHidden(g, yield.getOperand(0), maxFill, slices);
  if (!cause)
    return std::nullopt;
  if (cause->statisticLoops.any() &&
      !slices.holds(cause->values, cause->maskMap, cause->statisticLoops,
                    !cause->zeroWhen))
    return std::nullopt;
  AffineMap maskInUser =
      cause->maskMap.compose(inversePermutation(produced).compose(xMap));
  if (!maskInUser.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  return ZeroMask{cause->bits, cause->values, maskInUser, cause->zeroWhen};
}

void WrittenRegion::append(Run run) {
  if (!runs.empty() && runs.back().lo == run.lo && runs.back().hi == run.hi)
    runs.back().end = run.end;
  else
    runs.push_back(run);
}

double WrittenRegion::share() const {
  if (rows <= 0 || cols <= 0)
    return 1;
  double inside = 0;
  int64_t begin = 0;
  for (const Run &r : runs) {
    inside += double(r.end - begin) * double(r.hi - r.lo);
    begin = r.end;
  }
  return inside / (double(rows) * double(cols));
}

WrittenRegion WrittenRegion::rounded(int64_t multiple) const {
  WrittenRegion w{rows, cols, {}};
  for (const Run &r : runs) {
    Run x = r;
    if (x.lo < x.hi && multiple > 1) {
      x.lo = x.lo / multiple * multiple;
      x.hi = std::min(cols, (x.hi + multiple - 1) / multiple * multiple);
    }
    w.append(x);
  }
  return w;
}

SmallVector<int64_t> WrittenRegion::flat() const {
  SmallVector<int64_t> v;
  for (const Run &r : runs)
    v.append({r.end, r.lo, r.hi});
  return v;
}

std::optional<WrittenRegion> zero::writtenRegionOf(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  auto attr = op ? op->getAttrOfType<DenseI64ArrayAttr>(kWrittenRegionAttr)
                 : DenseI64ArrayAttr();
  if (!linalgOp || !attr || attr.size() == 0 || attr.size() % 3 != 0)
    return std::nullopt;
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  if (ranges.size() < 2 || ShapedType::isDynamic(ranges[ranges.size() - 2]) ||
      ShapedType::isDynamic(ranges.back()))
    return std::nullopt;
  WrittenRegion w{ranges[ranges.size() - 2], ranges.back(), {}};
  ArrayRef<int64_t> v = attr.asArrayRef();
  int64_t begin = 0;
  for (size_t i = 0; i < v.size(); i += 3) {
    WrittenRegion::Run r{v[i], v[i + 1], v[i + 2]};
    if (r.end <= begin || r.end > w.rows || r.lo < 0 || r.lo > r.hi ||
        r.hi > w.cols)
      return std::nullopt;
    w.runs.push_back(r);
    begin = r.end;
  }
  if (begin != w.rows)
    return std::nullopt;
  return w;
}
