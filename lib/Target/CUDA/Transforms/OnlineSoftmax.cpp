//===- OnlineSoftmax.cpp - a softmax's max and sum in one pass ------------===//
//
// A softmax's statistics are a row maximum M and a sum of exp(x - M), two
// passes over the rows. Kept together as a running maximum m and a sum s
// relative to it (s * exp(m - m') + exp(x - m') when the maximum rises to
// m'), they read the rows once; split into partials, each partial's sum is
// rescaled to the row's maximum where the partials are combined.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUONLINESOFTMAX
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {
/// The value a reduction body folds into its one output with an op of
/// type `Combiner` (`out = combiner(v, out)` either way round), and that
/// op; nulls otherwise.
template <typename Combiner>
std::pair<Value, Operation *> folded(linalg::GenericOp g) {
  if (g.getNumDpsInits() != 1 || !g.hasPureBufferSemantics() ||
      g.getNumReductionLoops() == 0)
    return {};
  // Upstream's matcher: one combining op from the output to the yield.
  SmallVector<Operation *> combiners;
  if (!matchReduction(g.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return {};
  auto c = dyn_cast<Combiner>(combiners[0]);
  if (!c)
    return {};
  Value out = g.getRegionOutputArgs()[0];
  return {c.getLhs() == out ? c.getRhs() : c.getLhs(), c};
}

/// Whether `op` fills `buffer` with 0 (`zero`) or with -inf or the
/// lowest finite value (a maximum's start).
bool isFillOf(Operation *op, Value buffer, bool zero) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  if (!fill || fill.getOutputs()[0] != buffer)
    return false;
  if (zero)
    return zero::isZeroFill(fill);
  auto c = fill.getInputs()[0].getDefiningOp<arith::ConstantFloatOp>();
  if (!c)
    return false;
  APFloat v = c.value();
  return v.isNegative() && (v.isInfinity() || v.isLargest());
}

/// Whether `a` and `b` view all of one buffer's elements (a row maximum
/// written as [R] and read as [R, 1]).
bool sameWhole(Value a, Value b) {
  if (a == b)
    return true;
  auto x = dyn_cast<MemRefType>(a.getType()),
       y = dyn_cast<MemRefType>(b.getType());
  Value root = zero::rootBuffer(a);
  auto r = dyn_cast<MemRefType>(root.getType());
  return x && y && r && x.hasStaticShape() && y.hasStaticShape() &&
         r.hasStaticShape() && root == zero::rootBuffer(b) &&
         x.getNumElements() == r.getNumElements() &&
         y.getNumElements() == r.getNumElements();
}

/// The op before `op` in its block that writes `buffer` (or a view of all
/// of it) as a linalg output.
linalg::LinalgOp lastWriter(Operation *op, Value buffer) {
  for (Operation *p = op->getPrevNode(); p; p = p->getPrevNode())
    if (auto l = dyn_cast<linalg::LinalgOp>(p))
      if (llvm::any_of(l.getDpsInits(),
                       [&](Value init) { return sameWhole(init, buffer); }))
        return l;
  return nullptr;
}

/// Whether `op` lies between `from` and `to`, `to` after `from` in their
/// block: a walk over the few ops between them, where `isBeforeInBlock`
/// would number the whole step again after every rewrite.
bool liesBetween(Operation *from, Operation *op, Operation *to) {
  for (Operation *p = from->getNextNode(); p && p != to; p = p->getNextNode())
    if (p == op)
      return true;
  return false;
}

/// Whether `a` and `b` are one buffer: the same value, or the same view
/// (subviews, reshapes, casts) of one.
bool sameBuffer(Value a, Value b) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || !isa<ViewLikeOpInterface>(x) || x->getNumRegions() ||
      x->getName() != y->getName() || x->getAttrs() != y->getAttrs() ||
      a.getType() != b.getType() || x->getNumOperands() != y->getNumOperands())
    return false;
  return llvm::all_of(
      llvm::zip(x->getOperands(), y->getOperands()),
      [](auto p) { return sameBuffer(std::get<0>(p), std::get<1>(p)); });
}

/// Whether `a` computes in its body, from its inputs, what `b` does from
/// the same inputs, op for op up to `aEnd` and `bEnd` (excluded), and maps
/// `b`'s values to `a`'s.
bool sameChain(linalg::GenericOp a, Operation *aEnd, linalg::GenericOp b,
               Operation *bEnd, ArrayRef<unsigned> bInputs, IRMapping &map) {
  for (auto [i, j] : llvm::enumerate(bInputs))
    map.map(b.getBody()->getArgument(j), a.getBody()->getArgument(i));
  Operation *x = &a.getBody()->front(), *y = &b.getBody()->front();
  for (; x != aEnd && y != bEnd; x = x->getNextNode(), y = y->getNextNode()) {
    if (x->getName() != y->getName() || x->getAttrs() != y->getAttrs() ||
        x->getNumOperands() != y->getNumOperands() || x->getNumRegions())
      return false;
    for (auto [u, v] : llvm::zip(x->getOperands(), y->getOperands()))
      if (map.lookupOrDefault(v) != u)
        return false;
    for (auto [u, v] : llvm::zip(x->getResults(), y->getResults()))
      map.map(v, u);
  }
  return x == aEnd && y == bEnd;
}

struct Match {
  linalg::GenericOp max, sum;               // over the rows (or their partials)
  linalg::GenericOp maxCombine, sumCombine; // null when not split
  Value exponent;                           // in `sum`: x - M's x
  unsigned mInput;                          // `sum`'s input that is M
};

std::optional<Match> match(linalg::GenericOp sum) {
  auto [e, add] = folded<arith::AddFOp>(sum);
  auto exp = e ? e.getDefiningOp<math::ExpOp>() : nullptr;
  auto sub = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
  if (!sub || !exp->hasOneUse() || !sub->hasOneUse() ||
      add->getNextNode() != sum.getBody()->getTerminator() ||
      exp->getNextNode() != add || sub->getNextNode() != exp)
    return std::nullopt;
  auto m = dyn_cast<BlockArgument>(sub.getRhs());
  if (!m || m.getOwner() != sum.getBody() ||
      m.getArgNumber() >= sum.getNumDpsInputs())
    return std::nullopt;
  Match r;
  r.sum = sum;
  r.mInput = m.getArgNumber();
  r.exponent = sub.getLhs();
  Value mBuffer = sum.getDpsInputs()[r.mInput];
  if (llvm::count(sum.getDpsInputs(), mBuffer) != 1)
    return std::nullopt;
  // M's writer: the max over the rows itself, or the combine of its
  // partials, or after the combine the max of the tail the split left
  // (the combine's M folded with the tail's elements; the sum's own tail
  // reads the final M after its combine, as before).
  auto generic = [](linalg::LinalgOp op) {
    return dyn_cast_or_null<linalg::GenericOp>(op.getOperation());
  };
  // A max over another iteration space folding its one input into M.
  auto foldsIntoM = [&](linalg::GenericOp g) {
    return g && g.getNumDpsInputs() == 1 &&
           folded<arith::MaximumFOp>(g).first == g.getBody()->getArgument(0) &&
           g.getStaticLoopRanges() != sum.getStaticLoopRanges();
  };
  // Whether `combine`'s input is the partial maxima over the sum's
  // iterations.
  auto combinesPartials = [&](linalg::GenericOp combine) {
    linalg::GenericOp partial =
        generic(lastWriter(combine, combine.getDpsInputs()[0]));
    return partial && folded<arith::MaximumFOp>(partial).first &&
           partial.getStaticLoopRanges() == sum.getStaticLoopRanges();
  };
  linalg::GenericOp writer = generic(lastWriter(sum, mBuffer));
  if (!writer)
    return std::nullopt;
  if (foldsIntoM(writer) && !combinesPartials(writer)) {
    linalg::GenericOp combine = generic(lastWriter(writer, mBuffer));
    if (foldsIntoM(combine) && combinesPartials(combine))
      writer = combine;
  }
  Value partials;
  if (foldsIntoM(writer)) {
    r.maxCombine = writer;
    partials = writer.getDpsInputs()[0];
    r.max = dyn_cast_or_null<linalg::GenericOp>(
        lastWriter(writer, partials).getOperation());
  } else {
    r.max = writer;
  }
  if (!r.max || !folded<arith::MaximumFOp>(r.max).first)
    return std::nullopt;
  // The same iterations, inputs and output layout as the sum's.
  if (r.max.getStaticLoopRanges() != sum.getStaticLoopRanges() ||
      r.max.getIteratorTypesArray() != sum.getIteratorTypesArray() ||
      r.max.getNumDpsInputs() + 1 != sum.getNumDpsInputs() ||
      r.max.getIndexingMapsArray().back() !=
          sum.getIndexingMapsArray().back() ||
      r.max.getDpsInits()[0].getType() != sum.getDpsInits()[0].getType())
    return std::nullopt;
  SmallVector<unsigned> sumInputs;
  for (unsigned j = 0; j < sum.getNumDpsInputs(); ++j)
    if (j != r.mInput)
      sumInputs.push_back(j);
  for (auto [i, j] : llvm::enumerate(sumInputs))
    if (!sameBuffer(r.max.getDpsInputs()[i], sum.getDpsInputs()[j]) ||
        r.max.getIndexingMapsArray()[i] != sum.getIndexingMapsArray()[j])
      return std::nullopt;
  IRMapping map;
  auto [v, maxOp] = folded<arith::MaximumFOp>(r.max);
  if (maxOp->getNextNode() != r.max.getBody()->getTerminator() ||
      !sameChain(r.max, maxOp, sum, sub, sumInputs, map) ||
      map.lookupOrDefault(r.exponent) != v)
    return std::nullopt;
  // Both start from their identities.
  if (!isFillOf(r.max->getPrevNode(), r.max.getDpsInits()[0], false) ||
      !isFillOf(sum->getPrevNode(), sum.getDpsInits()[0], true))
    return std::nullopt;
  // The sum's buffer can be allocated before the max; nothing between the
  // two writes what they read (the max then reads it for both).
  Value sOut = sum.getDpsInits()[0];
  if (Operation *def = sOut.getDefiningOp();
      def && liesBetween(r.max, def, sum) &&
      (!isa<memref::AllocOp>(def) || def->getNumOperands()))
    return std::nullopt;
  DenseSet<Value> read, sumViews;
  for (Value in : r.max.getDpsInputs())
    read.insert(zero::rootBuffer(in));
  // The sum is now written at the max: nothing in between may use it.
  zero::collectViews(zero::rootBuffer(sOut), sumViews);
  for (Operation *op = r.max->getNextNode(); op != sum.getOperation();
       op = op->getNextNode()) {
    if (op != sum->getPrevNode() && zero::touchesViews(op, sumViews))
      return std::nullopt;
    if (isa<memref::AllocOp, memref::DeallocOp, arith::ConstantOp>(op) ||
        isa<ViewLikeOpInterface>(op))
      continue;
    auto l = dyn_cast<linalg::LinalgOp>(op);
    if (!l || !l.hasPureBufferSemantics() ||
        llvm::any_of(l.getDpsInits(), [&](Value init) {
          return read.contains(zero::rootBuffer(init));
        }))
      return std::nullopt;
  }
  if (!r.maxCombine)
    return r;
  // The partial sums' combine: the next op that reads them, into a
  // zero-filled sum.
  linalg::GenericOp combine;
  for (Operation *op = sum->getNextNode(); op && !combine;
       op = op->getNextNode()) {
    if (isa<memref::AllocOp, linalg::FillOp, arith::ConstantOp>(op) ||
        isa<ViewLikeOpInterface>(op))
      continue;
    combine = dyn_cast<linalg::GenericOp>(op);
    if (!combine)
      return std::nullopt;
  }
  if (!combine || combine.getNumDpsInputs() != 1 ||
      combine.getDpsInputs()[0] != sum.getDpsInits()[0] ||
      folded<arith::AddFOp>(combine).first !=
          combine.getBody()->getArgument(0) ||
      !isFillOf(combine->getPrevNode(), combine.getDpsInits()[0], true) ||
      combine.getIndexingMapsArray() != r.maxCombine.getIndexingMapsArray() ||
      combine.getIteratorTypesArray() != r.maxCombine.getIteratorTypesArray() ||
      // The rescaling reads the row's maximum as the sum is written.
      r.maxCombine.getDpsInits()[0].getType() !=
          combine.getDpsInits()[0].getType())
    return std::nullopt;
  r.sumCombine = combine;
  return r;
}

Value constantLike(OpBuilder &b, Location loc, Type t, double v) {
  return arith::ConstantOp::create(b, loc, FloatAttr::get(t, v));
}

/// `s` rescaled from maximum `m` to `to`: s * exp(m - to), 0 where m is
/// -inf (nothing folded yet).
Value rescale(OpBuilder &b, Location loc, Value s, Value m, Value to) {
  Type t = s.getType();
  Value e = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, m, to));
  Value empty = arith::CmpFOp::create(
      b, loc, arith::CmpFPredicate::OEQ, m,
      constantLike(b, loc, t, -std::numeric_limits<double>::infinity()));
  return arith::SelectOp::create(b, loc, empty, constantLike(b, loc, t, 0),
                                 arith::MulFOp::create(b, loc, s, e));
}

void rewrite(Match r) {
  linalg::GenericOp maxOp = r.max, sum = r.sum;
  Location loc = sum.getLoc();
  Value mOut = maxOp.getDpsInits()[0], sOut = sum.getDpsInits()[0];
  Operation *mFill = maxOp->getPrevNode(), *sFill = sum->getPrevNode();
  // The sum's buffer, zero-filled, before the max's fill.
  if (Operation *alloc = sOut.getDefiningOp();
      alloc && liesBetween(mFill, alloc, sum))
    alloc->moveBefore(mFill);
  OpBuilder b(maxOp);
  Type st = cast<MemRefType>(sOut.getType()).getElementType();
  // From -inf (partials), the sum's start is never read: it is rescaled
  // to 0 at the first value. From the lowest finite value it is read.
  auto mStart = cast<linalg::FillOp>(mFill)
                    .getInputs()[0]
                    .getDefiningOp<arith::ConstantFloatOp>();
  if (!mStart.value().isInfinity())
    linalg::FillOp::create(b, sFill->getLoc(), constantLike(b, loc, st, 0.0),
                           sOut);
  sFill->erase();

  SmallVector<AffineMap> maps = maxOp.getIndexingMapsArray();
  maps.push_back(maps.back());
  std::pair<Value, Operation *> maxFold = folded<arith::MaximumFOp>(maxOp);
  Value v = maxFold.first;
  Operation *maxCombiner = maxFold.second;
  linalg::GenericOp::create(
      b, maxOp.getLoc(), TypeRange{}, maxOp.getDpsInputs(),
      ValueRange{mOut, sOut}, maps, maxOp.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        IRMapping map;
        Block *body = maxOp.getBody();
        for (auto [from, to] : llvm::zip(body->getArguments(), args))
          map.map(from, to);
        for (Operation &op : body->without_terminator())
          if (&op != maxCombiner)
            nb.clone(op, map);
        Value m = args[args.size() - 2], s = args.back();
        Value x = map.lookupOrDefault(v);
        Value mNew = nb.clone(*maxCombiner, map)->getResult(0);
        // s * exp(m - m') + exp(x - m') (s counts as 0 while m is -inf);
        // 0 while m' is -inf.
        Value term = math::ExpOp::create(
            nb, loc, arith::SubFOp::create(nb, loc, x, mNew));
        Value sNew =
            arith::AddFOp::create(nb, loc, rescale(nb, loc, s, m, mNew), term);
        Value none = arith::CmpFOp::create(
            nb, loc, arith::CmpFPredicate::OEQ, mNew,
            constantLike(nb, loc, st,
                         -std::numeric_limits<double>::infinity()));
        linalg::YieldOp::create(
            nb, l,
            ValueRange{mNew, arith::SelectOp::create(
                                 nb, loc, none, constantLike(nb, loc, st, 0.0),
                                 sNew)});
      });
  if (r.sumCombine) {
    // Each partial sum rescaled to the row's maximum as it is combined.
    linalg::GenericOp old = r.sumCombine;
    Value partialMax = r.maxCombine.getDpsInputs()[0];
    Value rowMax = r.maxCombine.getDpsInits()[0];
    SmallVector<AffineMap> cmaps = old.getIndexingMapsArray();
    cmaps = {cmaps[0], cmaps[0], cmaps[1], cmaps[1]};
    OpBuilder cb(old);
    auto combined = linalg::GenericOp::create(
        cb, old.getLoc(), TypeRange{},
        ValueRange{old.getDpsInputs()[0], partialMax, rowMax},
        old.getDpsInits(), cmaps, old.getIteratorTypesArray(),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value scaled = rescale(nb, loc, args[0], args[1], args[2]);
          linalg::YieldOp::create(
              nb, l,
              arith::AddFOp::create(nb, loc, scaled, args[3]).getResult());
        });
    old->erase();
    // The partial maxima (written by the max) are read until then.
    for (Operation *user : llvm::make_early_inc_range(partialMax.getUsers()))
      if (isa<memref::DeallocOp>(user) && liesBetween(maxOp, user, combined))
        user->moveAfter(combined);
  }
  maxOp->erase();
  sum->erase();
}

struct ZeroGPUOnlineSoftmaxPass
    : zero::cuda::impl::ZeroGPUOnlineSoftmaxBase<ZeroGPUOnlineSoftmaxPass> {
  void runOnOperation() override {
    // One sweep over the generics in order, skipping those a rewrite
    // erased; sweeps until one matches nothing (one more, in practice).
    for (bool changed = true; changed;) {
      changed = false;
      SmallVector<linalg::GenericOp> generics;
      getOperation().walk([&](linalg::GenericOp g) { generics.push_back(g); });
      DenseSet<Operation *> erased;
      for (linalg::GenericOp g : generics) {
        if (erased.contains(g))
          continue;
        std::optional<Match> r = match(g);
        if (!r)
          continue;
        erased.insert(r->max);
        erased.insert(r->sum);
        if (r->sumCombine)
          erased.insert(r->sumCombine);
        rewrite(*r);
        changed = true;
      }
    }
  }
};
} // namespace
