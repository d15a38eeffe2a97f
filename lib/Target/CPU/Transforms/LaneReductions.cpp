//===- LaneReductions.cpp - reductions in a fixed, vectorizable order -----===//
//
// A float reduction in loop order is a chain of dependent operations. LLVM
// vectorizes it only when allowed to reorder it, and then in an order of its
// own that follows the loop's body, so one sum fused into two different
// kernels could round differently. Here the innermost reduced dimension is
// dealt into lanes, independent chains that vectorize as they are, combined
// in a fixed tree: the order depends on the reduction's extents alone.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPULANEREDUCTIONS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
/// How one output folds a value into its accumulator.
struct Combiner {
  Operation *op;      ///< the combining op of the body
  Value acc;          ///< the output's block argument
  TypedAttr identity; ///< what a lane starts from
};

/// The exact identity of a combining op, if it is one: -0 for sums
/// (-0 + x is x for every x, +0 and -0 included).
std::optional<TypedAttr> identityOf(Operation *op, FloatType t) {
  const llvm::fltSemantics &sem = t.getFloatSemantics();
  if (isa<arith::AddFOp>(op))
    return FloatAttr::get(t, APFloat::getZero(sem, /*Negative=*/true));
  if (isa<arith::MulFOp>(op))
    return FloatAttr::get(t, APFloat::getOne(sem));
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return FloatAttr::get(t, APFloat::getInf(sem, /*Negative=*/true));
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
    return FloatAttr::get(t, APFloat::getInf(sem));
  return std::nullopt;
}

/// Each output's combiner, or nothing when some output is not a plain
/// fold of one value into its accumulator.
std::optional<SmallVector<Combiner>> matchCombiners(linalg::LinalgOp op) {
  SmallVector<Combiner> combiners;
  Operation *yield = op.getBlock()->getTerminator();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    auto type = dyn_cast<FloatType>(acc.getType());
    Value folded =
        yield->getOperand(init.getOperandNumber() - op.getNumDpsInputs());
    Operation *def = folded.getDefiningOp();
    if (!type || !def || def->getBlock() != op.getBlock() ||
        def->getNumOperands() != 2 || !acc.hasOneUse() ||
        def->getOperand(0) == def->getOperand(1) ||
        !llvm::is_contained(def->getOperands(), Value(acc)))
      return std::nullopt;
    std::optional<TypedAttr> identity = identityOf(def, type);
    if (!identity)
      return std::nullopt;
    combiners.push_back({def, acc, *identity});
  }
  return combiners;
}

/// `lhs op rhs` with the combiner's own op (its flags kept), on scalars
/// or vectors of lanes.
Value combine(OpBuilder &b, const Combiner &c, Value lhs, Value rhs) {
  OperationState state(c.op->getLoc(), c.op->getName());
  state.addOperands({lhs, rhs});
  state.addTypes(lhs.getType());
  state.addAttributes(c.op->getAttrs());
  return b.create(state)->getResult(0);
}

/// The indices an indexing map gives at the loop indices `ivs`: only the
/// loops it uses are read.
SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
                             ArrayRef<Value> ivs) {
  return SmallVector<Value>(*affine::expandAffineMap(b, loc, map, ivs));
}

struct LaneReduction {
  linalg::LinalgOp op;
  SmallVector<Combiner> combiners;
  SmallVector<int64_t> ranges;
  SmallVector<utils::IteratorType> kinds;
  unsigned split; ///< the loop dealt into lanes
  int64_t lanes;
  bool vec; ///< the lanes one vector per output
  Location loc;
  SmallVector<Value> ivs; ///< current index of every loop

  /// The body once at `ivs`, each output's accumulator `accs[j]`: the
  /// values it folds in.
  SmallVector<Value> body(OpBuilder &b, ArrayRef<Value> accs) {
    IRMapping map;
    for (OpOperand *in : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(in);
      Value v = in->get();
      if (!isa<MemRefType>(v.getType())) {
        map.map(arg, v);
        continue;
      }
      map.map(arg, memref::LoadOp::create(
                       b, loc, v,
                       indicesAt(b, loc, op.getMatchingIndexingMap(in), ivs)));
    }
    for (auto [c, acc] : llvm::zip(combiners, accs))
      map.map(c.acc, acc);
    for (Operation &o : op.getBlock()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(o))
        map.map(index.getResult(), ivs[index.getDim()]);
      else
        b.clone(o, map);
    }
    SmallVector<Value> folded;
    for (Value v : op.getBlock()->getTerminator()->getOperands())
      folded.push_back(map.lookup(v));
    return folded;
  }

  /// Whether the body has a vector form: elementwise ops (and constants)
  /// on 32- and 64-bit floats, integers and indices. The vector form
  /// computes what the lanes would one by one, in one vector each.
  bool vectorizable() {
    auto plain = [](Type t) {
      if (auto f = dyn_cast<FloatType>(t))
        return f.getWidth() >= 32;
      return t.isIntOrIndex();
    };
    for (BlockArgument arg : op.getBlock()->getArguments())
      if (!plain(arg.getType()))
        return false;
    for (Operation &o : op.getBlock()->without_terminator()) {
      if (isa<linalg::IndexOp>(o) || o.hasTrait<OpTrait::ConstantLike>())
        continue;
      if (!OpTrait::hasElementwiseMappableTraits(&o) || o.getNumRegions() ||
          !llvm::all_of(o.getOperandTypes(), plain) ||
          !llvm::all_of(o.getResultTypes(), plain))
        return false;
    }
    return true;
  }

  /// The body at split indices `base` .. `base + lanes - 1` as vector ops,
  /// each output's lanes `accs[j]` one vector: the lanes folded.
  SmallVector<Value> vectorBody(OpBuilder &b, Value base,
                                ArrayRef<Value> accs) {
    auto vectorOf = [&](Type t) { return VectorType::get({lanes}, t); };
    IRMapping uniform; // values alike in every lane
    DenseMap<Value, Value> lanesOf;
    auto asVector = [&](Value v) -> Value {
      if (Value vec = lanesOf.lookup(v))
        return vec;
      Value s = uniform.lookupOrDefault(v);
      return vector::BroadcastOp::create(b, loc, vectorOf(s.getType()), s);
    };
    ivs[split] = base;
    for (OpOperand *in : op.getDpsInputOperands()) {
      BlockArgument arg = op.getMatchingBlockArgument(in);
      Value v = in->get();
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type) {
        uniform.map(arg, v);
        continue;
      }
      AffineMap map = op.getMatchingIndexingMap(in);
      if (!map.isFunctionOfDim(split)) {
        uniform.map(arg, memref::LoadOp::create(b, loc, v,
                                                indicesAt(b, loc, map, ivs)));
        continue;
      }
      // Consecutive in memory: one vector load; otherwise lane by lane.
      SmallVector<int64_t> strides;
      int64_t offset;
      unsigned last = map.getNumResults() - 1;
      if (map.getResult(last) == getAffineDimExpr(split, op.getContext()) &&
          !map.dropResult(last).isFunctionOfDim(split) &&
          succeeded(type.getStridesAndOffset(strides, offset)) &&
          strides.back() == 1) {
        lanesOf[arg] =
            vector::LoadOp::create(b, loc, vectorOf(type.getElementType()), v,
                                   indicesAt(b, loc, map, ivs));
        continue;
      }
      SmallVector<Value> elements;
      for (int64_t l = 0; l < lanes; ++l) {
        ivs[split] = arith::AddIOp::create(
            b, loc, base, arith::ConstantIndexOp::create(b, loc, l));
        elements.push_back(
            memref::LoadOp::create(b, loc, v, indicesAt(b, loc, map, ivs)));
      }
      ivs[split] = base;
      lanesOf[arg] = vector::FromElementsOp::create(
          b, loc, vectorOf(type.getElementType()), elements);
    }
    for (auto [c, acc] : llvm::zip(combiners, accs))
      lanesOf[c.acc] = acc;
    for (Operation &o : op.getBlock()->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(o)) {
        if (index.getDim() != split) {
          uniform.map(index.getResult(), ivs[index.getDim()]);
          continue;
        }
        SmallVector<Attribute> steps;
        for (int64_t l = 0; l < lanes; ++l)
          steps.push_back(b.getIndexAttr(l));
        Value step = arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(vectorOf(b.getIndexType()), steps));
        lanesOf[index.getResult()] =
            arith::AddIOp::create(b, loc, asVector(base), step);
        continue;
      }
      if (llvm::none_of(o.getOperands(),
                        [&](Value v) { return lanesOf.count(v); })) {
        b.clone(o, uniform);
        continue;
      }
      OperationState state(loc, o.getName());
      for (Value v : o.getOperands())
        state.addOperands(asVector(v));
      for (Type t : o.getResultTypes())
        state.addTypes(vectorOf(t));
      state.addAttributes(o.getAttrs());
      Operation *vec = b.create(state);
      for (auto [r, v] : llvm::zip(o.getResults(), vec->getResults()))
        lanesOf[r] = v;
    }
    SmallVector<Value> folded;
    for (Value v : op.getBlock()->getTerminator()->getOperands())
      folded.push_back(asVector(v));
    return folded;
  }

  /// Folds element `index` of the split loop into lane `lane` of every
  /// output: `state[j * lanes + lane]`, or lane `lane` of vector
  /// `state[j]`.
  void foldElement(OpBuilder &b, Value index, int64_t lane,
                   SmallVector<Value> &state) {
    ivs[split] = index;
    SmallVector<Value> accs;
    for (size_t j = 0; j < combiners.size(); ++j)
      accs.push_back(vec ? vector::ExtractOp::create(b, loc, state[j], lane)
                         : state[j * lanes + lane]);
    SmallVector<Value> folded = body(b, accs);
    for (size_t j = 0; j < combiners.size(); ++j) {
      if (vec)
        state[j] = vector::InsertOp::create(b, loc, folded[j], state[j], lane);
      else
        state[j * lanes + lane] = folded[j];
    }
  }

  /// The split loop: element i into lane i mod `lanes`, whole rounds of
  /// lanes in a loop, the rest after it.
  SmallVector<Value> splitLoop(OpBuilder &b, SmallVector<Value> state) {
    int64_t n = ranges[split], rounds = n / lanes;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(
        b, loc, zero, arith::ConstantIndexOp::create(b, loc, rounds), one,
        state, [&](OpBuilder &nb, Location, Value round, ValueRange args) {
          SmallVector<Value> inner(args);
          Value base = arith::MulIOp::create(
              nb, loc, round, arith::ConstantIndexOp::create(nb, loc, lanes));
          if (vec)
            inner = vectorBody(nb, base, inner);
          else
            for (int64_t l = 0; l < lanes; ++l)
              foldElement(nb,
                          arith::AddIOp::create(
                              nb, loc, base,
                              arith::ConstantIndexOp::create(nb, loc, l)),
                          l, inner);
          scf::YieldOp::create(nb, loc, inner);
        });
    state.assign(loop.getResults().begin(), loop.getResults().end());
    for (int64_t t = 0; rounds * lanes + t < n; ++t)
      foldElement(b, arith::ConstantIndexOp::create(b, loc, rounds * lanes + t),
                  t, state);
    return state;
  }

  /// The other reduced loops (in their order) around the split one.
  SmallVector<Value> reduceLoops(OpBuilder &b, ArrayRef<unsigned> loops,
                                 SmallVector<Value> state) {
    if (loops.empty())
      return splitLoop(b, std::move(state));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(
        b, loc, zero,
        arith::ConstantIndexOp::create(b, loc, ranges[loops.front()]), one,
        state, [&](OpBuilder &nb, Location, Value iv, ValueRange args) {
          ivs[loops.front()] = iv;
          scf::YieldOp::create(
              nb, loc,
              reduceLoops(nb, loops.drop_front(), SmallVector<Value>(args)));
        });
    return SmallVector<Value>(loop.getResults());
  }

  /// An output's lanes folded to one value: halves onto halves (lane i
  /// with lane i + half; with an odd count the last lane waits a level).
  Value tree(OpBuilder &b, const Combiner &c, ArrayRef<Value> state, size_t j) {
    SmallVector<Value> level;
    if (vec) {
      Value v = state[j];
      // Halving a vector is the same order as halving its lanes.
      for (int64_t width = lanes; width > 1 && width % 2 == 0; width /= 2) {
        auto slice = [&](int64_t offset) {
          auto mask = llvm::to_vector(llvm::seq(offset, offset + width / 2));
          return vector::ShuffleOp::create(b, loc, v, v, mask);
        };
        v = combine(b, c, slice(0), slice(width / 2));
      }
      int64_t width = cast<VectorType>(v.getType()).getNumElements();
      for (int64_t l = 0; l < width; ++l)
        level.push_back(vector::ExtractOp::create(b, loc, v, l));
    } else {
      level.assign(state.begin() + j * lanes, state.begin() + (j + 1) * lanes);
    }
    while (level.size() > 1) {
      size_t half = level.size() / 2;
      SmallVector<Value> next;
      for (size_t i = 0; i < half; ++i)
        next.push_back(combine(b, c, level[i], level[i + half]));
      if (level.size() % 2)
        next.push_back(level.back());
      level = std::move(next);
    }
    return level.front();
  }

  /// One output element: its lanes, their tree, the output's value last.
  void element(OpBuilder &b) {
    SmallVector<Value> state;
    for (const Combiner &c : combiners) {
      if (vec)
        state.push_back(arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(
                VectorType::get({lanes}, c.identity.getType()),
                Attribute(c.identity))));
      else
        for (int64_t l = 0; l < lanes; ++l)
          state.push_back(arith::ConstantOp::create(b, loc, c.identity));
    }
    SmallVector<unsigned> others;
    for (unsigned d = 0; d < ranges.size(); ++d)
      if (d != split && ranges[d] > 1 &&
          kinds[d] == utils::IteratorType::reduction)
        others.push_back(d);
    state = reduceLoops(b, others, std::move(state));
    for (auto [j, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      Value folded = tree(b, combiners[j], state, j);
      SmallVector<Value> at =
          indicesAt(b, loc, op.getMatchingIndexingMap(&init), ivs);
      Value old = memref::LoadOp::create(b, loc, init.get(), at);
      // The accumulator's operand position, as the body has it.
      bool accFirst = combiners[j].op->getOperand(0) == combiners[j].acc;
      Value result = accFirst ? combine(b, combiners[j], old, folded)
                              : combine(b, combiners[j], folded, old);
      memref::StoreOp::create(b, loc, result, init.get(), at);
    }
  }

  /// The output elements' loops, outermost, then each element.
  void build(OpBuilder &b, unsigned d = 0) {
    for (; d < ranges.size(); ++d)
      if (kinds[d] == utils::IteratorType::parallel && ranges[d] > 1)
        break;
    if (d == ranges.size())
      return element(b);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    scf::ForOp::create(
        b, loc, zero, arith::ConstantIndexOp::create(b, loc, ranges[d]), one,
        ValueRange{}, [&](OpBuilder &nb, Location, Value iv, ValueRange) {
          ivs[d] = iv;
          build(nb, d + 1);
          scf::YieldOp::create(nb, loc);
        });
  }
};

struct ZeroCPULaneReductionsPass
    : zero::cpu::impl::ZeroCPULaneReductionsBase<ZeroCPULaneReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (lanes < 1) {
      getOperation().emitError()
          << "lanes is " << static_cast<int64_t>(lanes)
          << "; give at least 1 accumulator per output (the default is 16)";
      return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0)
        continue;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::any_of(ranges, ShapedType::isDynamic))
        continue;
      // The innermost loop that is not a single iteration.
      SmallVector<utils::IteratorType> kinds = op.getIteratorTypesArray();
      int split = ranges.size() - 1;
      while (split >= 0 && ranges[split] == 1)
        --split;
      if (split < 0 || kinds[split] != utils::IteratorType::reduction ||
          ranges[split] < 2 * lanes)
        continue;
      // An output indexed by a reduced loop is not a reduction into it.
      if (llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
            AffineMap map = op.getMatchingIndexingMap(&init);
            for (unsigned d = 0; d < map.getNumDims(); ++d)
              if (kinds[d] == utils::IteratorType::reduction &&
                  map.isFunctionOfDim(d))
                return true;
            return false;
          }))
        continue;
      std::optional<SmallVector<Combiner>> combiners = matchCombiners(op);
      // An output read as an input too would be read before it is written.
      if (!combiners || llvm::any_of(op.getDpsInputs(), [&](Value in) {
            return llvm::is_contained(op.getDpsInits(), in);
          }))
        continue;
      OpBuilder b(op);
      Location loc = op.getLoc();
      LaneReduction r{
          op,
          std::move(*combiners),
          ranges,
          kinds,
          static_cast<unsigned>(split),
          lanes,
          /*vec=*/false,
          loc,
          SmallVector<Value>(ranges.size(),
                             arith::ConstantIndexOp::create(b, loc, 0))};
      r.vec = r.vectorizable();
      r.build(b);
      op->erase();
    }
  }
};
} // namespace
