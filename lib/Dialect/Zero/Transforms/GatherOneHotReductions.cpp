//===- GatherOneHotReductions.cpp - a one-hot sum reads one element -------===//
//
// A loss picks each sample's target score as a sum over the classes of a
// one-hot select, select(label == class, v, 0), and its gradient sums a
// one-hot tensor the same way. Each such sum reads (or writes) a value per
// class to keep one; as a gather it reads the label's class alone.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROGATHERONEHOTREDUCTIONS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// A tensor a body argument reads, at `map` over the sum's loops.
struct Source {
  Value value;
  AffineMap map;
};

/// An elementwise op whose body is computed in place of reading its
/// result, at `loops` (its loops in terms of the sum's).
struct Inlined {
  linalg::GenericOp producer;
  AffineMap loops;
};

/// A sum over one class loop of select(label == class, v, 0). The select,
/// its condition, the summand and what varies with the class may come from
/// elementwise ops that write the sum's operands: their bodies are read in
/// place of those operands.
struct OneHotSum {
  linalg::LinalgOp sum;
  unsigned classLoop = 0;
  int64_t classes = 0;
  BlockArgument label, classIds;
  llvm::MapVector<BlockArgument, Source> sources;
  SmallVector<Inlined> inlined;
  /// Body arguments read from an inlined op: its index in `inlined`.
  SmallVector<std::pair<BlockArgument, unsigned>> inlinedArgs;
};

/// One result and one destination on tensors, read through projected
/// permutations, without linalg.index.
bool isPlain(linalg::LinalgOp op) {
  return op && op.hasPureTensorSemantics() && op.getNumDpsInits() == 1 &&
         op->getNumResults() == 1 && !op.hasIndexSemantics() &&
         llvm::all_of(op.getIndexingMapsArray(), [](AffineMap m) {
           return m.isProjectedPermutation(/*allowZeroInResults=*/true);
         });
}

/// `v` without the negations applied to it (a negated zero is a zero).
Value stripNegations(Value v) {
  while (auto neg = v.getDefiningOp<arith::NegFOp>())
    v = neg.getOperand();
  return v;
}

/// Whether `source` is a constant holding 0, 1, ..., n-1 along `loop`, the
/// one loop its map reads.
bool isClassIds(const Source &source, unsigned loop, int64_t n) {
  std::optional<unsigned> position;
  for (auto [i, e] : llvm::enumerate(source.map.getResults())) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      if (d.getPosition() != loop || position)
        return false;
      position = i;
    }
  }
  DenseIntElementsAttr ids;
  if (!position || !matchPattern(source.value, m_Constant(&ids)))
    return false;
  if (ids.isSplat())
    return n == 1 && ids.getSplatValue<APInt>().isZero();
  auto type = cast<RankedTensorType>(ids.getType());
  if (type.getDimSize(*position) != n)
    return false;
  // The other results are constant indices.
  int64_t base = 0, stride = 1, classStride = 1;
  for (int64_t i = type.getRank() - 1; i >= 0; --i) {
    if (i == int64_t(*position))
      classStride = stride;
    else
      base +=
          stride * cast<AffineConstantExpr>(source.map.getResult(i)).getValue();
    stride *= type.getDimSize(i);
  }
  auto values = ids.getValues<APInt>();
  for (int64_t k = 0; k < n; ++k)
    if (values[base + k * classStride].getSExtValue() != k)
      return false;
  return true;
}

/// If `v` is a body argument read from an elementwise op's result (maybe
/// through reshapes by unit dimensions), that op's yielded value, its
/// arguments then read at the sum's loops; else `v`.
Value lookThrough(OneHotSum &m, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto it = arg ? m.sources.find(arg) : m.sources.end();
  if (it == m.sources.end())
    return v;
  Value produced = it->second.value;
  AffineMap read = it->second.map;
  while (isa_and_present<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
      produced.getDefiningOp())) {
    Operation *reshape = produced.getDefiningOp();
    std::optional<AffineMap> r = zero::readThroughUnitReshape(reshape, read);
    if (!r)
      return v;
    produced = reshape->getOperand(0);
    read = *r;
  }
  auto producer = produced.getDefiningOp<linalg::GenericOp>();
  if (!isPlain(producer) || producer.getNumReductionLoops() != 0 ||
      producer->getBlock() != m.sum->getBlock() ||
      producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)) ||
      !producer.getIndexingMapsArray().back().isPermutation())
    return v;
  AffineMap loops =
      inversePermutation(producer.getIndexingMapsArray().back()).compose(read);
  Value yielded = producer.getBody()->getTerminator()->getOperand(0);
  auto same = llvm::find_if(
      m.inlined, [&](const Inlined &in) { return in.producer == producer; });
  if (same != m.inlined.end()) {
    // Computed once: read again only at the same loops.
    if (same->loops != loops)
      return v;
  } else {
    for (OpOperand *in : producer.getDpsInputOperands())
      m.sources[producer.getMatchingBlockArgument(in)] = {
          in->get(), producer.getMatchingIndexingMap(in).compose(loops)};
    m.inlined.push_back({producer, loops});
    same = std::prev(m.inlined.end());
  }
  m.sources.erase(arg);
  m.inlinedArgs.push_back({arg, unsigned(same - m.inlined.begin())});
  return yielded;
}

/// Whether `v`, in the sum's body or an inlined one, is a zero.
bool isZero(const OneHotSum &m, Value v) {
  if (matchPattern(v, m_AnyZeroFloat()))
    return true;
  auto arg = dyn_cast<BlockArgument>(v);
  auto it = arg ? m.sources.find(arg) : m.sources.end();
  return it != m.sources.end() &&
         matchPattern(it->second.value, m_AnyZeroFloat());
}

/// Whether `op` is a sum over one class loop of a one-hot select.
std::optional<OneHotSum> matchOneHotSum(linalg::LinalgOp op) {
  if (!isa<linalg::GenericOp, linalg::ReduceOp>(op) || !isPlain(op) ||
      op.getNumReductionLoops() == 0 ||
      !cast<ShapedType>(op.getDpsInits()[0].getType()).hasStaticShape())
    return std::nullopt;
  OneHotSum m;
  m.sum = op;
  // One reduction loop over the classes; the others have one iteration.
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::optional<unsigned> classLoop;
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type != utils::IteratorType::reduction || ranges[i] == 1)
      continue;
    if (classLoop || ShapedType::isDynamic(ranges[i]))
      return std::nullopt;
    classLoop = i;
  }
  if (!classLoop)
    return std::nullopt;
  m.classLoop = *classLoop;
  m.classes = ranges[*classLoop];

  // The body adds its summand to the accumulator, used nowhere else.
  Block *body = op.getBlock();
  BlockArgument acc = op.getRegionOutputArgs()[0];
  auto add =
      body->getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || !acc.hasOneUse())
    return std::nullopt;
  Value summand;
  if (add.getLhs() == acc)
    summand = add.getRhs();
  else if (add.getRhs() == acc)
    summand = add.getLhs();
  else
    return std::nullopt;

  for (OpOperand *in : op.getDpsInputOperands())
    m.sources[op.getMatchingBlockArgument(in)] = {
        in->get(), op.getMatchingIndexingMap(in)};
  for (Value next = stripNegations(summand);; next = stripNegations(next)) {
    summand = next;
    next = lookThrough(m, summand);
    if (next == summand)
      break;
  }
  auto select = summand.getDefiningOp<arith::SelectOp>();
  if (!select || !isZero(m, select.getFalseValue()))
    return std::nullopt;
  auto cmp =
      lookThrough(m, select.getCondition()).getDefiningOp<arith::CmpIOp>();
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq)
    return std::nullopt;
  auto lhs = dyn_cast<BlockArgument>(cmp.getLhs());
  auto rhs = dyn_cast<BlockArgument>(cmp.getRhs());
  if (!lhs || !rhs || !m.sources.contains(lhs) || !m.sources.contains(rhs))
    return std::nullopt;
  if (isClassIds(m.sources[rhs], m.classLoop, m.classes))
    std::tie(m.label, m.classIds) = std::make_pair(lhs, rhs);
  else if (isClassIds(m.sources[lhs], m.classLoop, m.classes))
    std::tie(m.label, m.classIds) = std::make_pair(rhs, lhs);
  else
    return std::nullopt;
  if (m.sources[m.label].map.isFunctionOfDim(m.classLoop))
    return std::nullopt;

  // What varies with the class is read at one class: elementwise ops are
  // computed there rather than written whole to be read once per row.
  for (bool changed = true; changed;) {
    changed = false;
    SmallVector<BlockArgument> varying;
    for (auto &[arg, source] : m.sources)
      if (arg != m.classIds && source.map.isFunctionOfDim(m.classLoop))
        varying.push_back(arg);
    for (BlockArgument arg : varying)
      changed |= lookThrough(m, arg) != arg;
  }
  return m;
}

/// The sum as an elementwise op over its parallel loops: the operands that
/// vary with the class are read at the label's class, and the select
/// keeps a label outside [0, classes) at zero, as the sum did.
Value buildGather(RewriterBase &rewriter, const OneHotSum &m) {
  linalg::LinalgOp sum = m.sum;
  MLIRContext *ctx = sum.getContext();
  Location loc = sum.getLoc();
  SmallVector<int64_t> newLoop(sum.getNumLoops(), -1);
  unsigned kept = 0;
  for (auto [i, type] : llvm::enumerate(sum.getIteratorTypesArray()))
    if (type == utils::IteratorType::parallel)
      newLoop[i] = kept++;
  // Loops of one iteration index 0.
  auto translate = [&](AffineMap map) {
    SmallVector<AffineExpr> results;
    for (AffineExpr e : map.getResults()) {
      auto d = dyn_cast<AffineDimExpr>(e);
      if (!d)
        results.push_back(e);
      else if (newLoop[d.getPosition()] >= 0)
        results.push_back(getAffineDimExpr(newLoop[d.getPosition()], ctx));
      else
        results.push_back(getAffineConstantExpr(0, ctx));
    }
    return AffineMap::get(kept, 0, results, ctx);
  };

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<BlockArgument> inputArgs, gathered;
  for (auto &[arg, source] : m.sources) {
    if (arg == m.classIds)
      continue;
    if (source.map.isFunctionOfDim(m.classLoop)) {
      gathered.push_back(arg);
      continue;
    }
    inputArgs.push_back(arg);
    inputs.push_back(source.value);
    maps.push_back(translate(source.map));
  }
  // The initial value is an input: an elementwise op that read its
  // destination would, fused into a consumer with more loops, be computed
  // on its own result.
  Value init = sum.getDpsInits()[0];
  AffineMap outMap = translate(sum.getIndexingMapsArray().back());
  unsigned accArg = inputs.size();
  inputs.push_back(init);
  maps.push_back(outMap);
  maps.push_back(outMap);
  auto initType = cast<RankedTensorType>(init.getType());
  Value dest = tensor::EmptyOp::create(rewriter, loc, initType.getShape(),
                                       initType.getElementType());
  // Inlined ops in the order they compute: each reads only ops before it.
  SmallVector<unsigned> order =
      llvm::to_vector(llvm::seq<unsigned>(0, m.inlined.size()));
  llvm::sort(order, [&](unsigned a, unsigned b) {
    return m.inlined[a].producer->isBeforeInBlock(m.inlined[b].producer);
  });

  auto build = [&](OpBuilder &b, Location loc, ValueRange args) {
    IRMapping map;
    for (auto [arg, value] : llvm::zip(inputArgs, args))
      map.map(arg, value);
    Value label = map.lookup(m.label);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value index = arith::IndexCastOp::create(b, loc, b.getIndexType(), label);
    Value inRange = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult, index,
        arith::ConstantIndexOp::create(b, loc, m.classes));
    Value safe = arith::SelectOp::create(b, loc, inRange, index, zero);
    // The class compared with the label: the label itself when in range,
    // else class 0, which it is not.
    map.map(m.classIds,
            arith::IndexCastOp::create(b, loc, m.classIds.getType(), safe));
    for (BlockArgument arg : gathered) {
      const Source &source = m.sources.find(arg)->second;
      SmallVector<Value> indices;
      for (AffineExpr e : source.map.getResults()) {
        auto d = dyn_cast<AffineDimExpr>(e);
        if (!d)
          indices.push_back(arith::ConstantIndexOp::create(
              b, loc, cast<AffineConstantExpr>(e).getValue()));
        else if (d.getPosition() == m.classLoop)
          indices.push_back(safe);
        else if (newLoop[d.getPosition()] >= 0)
          indices.push_back(
              linalg::IndexOp::create(b, loc, newLoop[d.getPosition()]));
        else
          indices.push_back(zero);
      }
      map.map(arg, tensor::ExtractOp::create(b, loc, source.value, indices));
    }
    for (unsigned i : order) {
      linalg::GenericOp producer = m.inlined[i].producer;
      Block *body = producer.getBody();
      for (Operation &op : body->without_terminator())
        b.clone(op, map);
      Value result = map.lookupOrDefault(body->getTerminator()->getOperand(0));
      for (auto [arg, index] : m.inlinedArgs)
        if (index == i)
          map.map(arg, result);
    }
    map.map(sum.getRegionOutputArgs()[0], args[accArg]);
    Block *body = sum.getBlock();
    for (Operation &op : body->without_terminator())
      b.clone(op, map);
    linalg::YieldOp::create(
        b, loc, map.lookupOrDefault(body->getTerminator()->getOperand(0)));
  };
  auto gather = linalg::GenericOp::create(
      rewriter, loc, sum->getResultTypes(), inputs, ValueRange{dest}, maps,
      SmallVector<utils::IteratorType>(kept, utils::IteratorType::parallel),
      build);
  return gather->getResult(0);
}

struct OneHotSumToGather : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<OneHotSum> m = matchOneHotSum(op);
    if (!m)
      return rewriter.notifyMatchFailure(op, "not a one-hot sum");
    rewriter.replaceOp(op, buildGather(rewriter, *m));
    return success();
  }
};

struct ZeroGatherOneHotReductionsPass
    : zero::impl::ZeroGatherOneHotReductionsBase<
          ZeroGatherOneHotReductionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    zero::populateGatherOneHotReductionsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void zero::populateGatherOneHotReductionsPatterns(RewritePatternSet &patterns) {
  patterns.add<OneHotSumToGather>(patterns.getContext());
}
