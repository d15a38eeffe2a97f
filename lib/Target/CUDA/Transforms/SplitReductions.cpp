//===- SplitReductions.cpp - full reductions in two stages ------*- C++ -*-===//
//
// A reduction with no parallel dimension (a loss, a gradient's sum of
// squares for the global norm) would run in one GPU thread, and one with
// few rows (a cross-entropy over a large vocabulary, softmax and layer-norm
// statistics of a small batch) in one thread per row, each reading a whole
// row. Splitting a reduction loop (the one that allows the most partials,
// its reduction loops collapsed into one first where memory allows) gives
// one partial result per chunk (and row), computed in parallel, and a
// short second stage that combines the partials in order: deterministic,
// and the same on the CPU (--simulate-gpu) as on the GPU. Many long
// contiguous rows take a warp of partials each, so that a warp's loads are
// adjacent; columns (a bias gradient's sum over the tokens for each
// feature) take partials enough for the device, and a second split of
// their combine.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUSPLITREDUCTIONS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;
using namespace mlir::zero;

namespace {

/// How a reduction is split: loop `loop` (its outermost reduction loop)
/// has its first `partials * chunk` iterations in parallel chunks, the
/// `tail` left after them. Interleaved: partial p takes iterations p,
/// p + partials, ... (the loop walks the inputs' contiguous dimension, so
/// a warp's partials read adjacent elements); else iterations
/// [p * chunk, (p + 1) * chunk).
struct Split {
  unsigned loop;
  int64_t partials, chunk, tail;
  bool interleaved;
  /// A reduction over rows whose partials are not interleaved (a sum over
  /// a gradient's tokens, for each feature).
  bool columns;
  /// Per reduced output: its combining op and that op's neutral element.
  SmallVector<Operation *> combiners;
  SmallVector<TypedAttr> neutrals;
  /// Outputs after the reduced ones that each iteration writes an element
  /// of (a producer computed in the reduction, `fuseProducer`).
  unsigned written = 0;

  /// Whether `o` cuts the same iterations into the same partials.
  bool sameCut(const Split &o) const {
    return loop == o.loop && partials == o.partials && chunk == o.chunk &&
           tail == o.tail && interleaved == o.interleaved &&
           columns == o.columns;
  }

  /// Adds the partials' entry to a list of loops, dimensions or indices:
  /// last when interleaved (a last loop is x on a GPU), else first.
  template <typename T> void placePartials(SmallVectorImpl<T> &v, T x) const {
    v.insert(interleaved ? v.end() : v.begin(), x);
  }
};

/// Partials of one row a warp computes side by side.
constexpr int64_t kWarp = 32;

/// Iterations each partial reduces at least.
constexpr int64_t kMinChunk = 32;

/// How many of `g`'s last outputs are written, an element each iteration:
/// indexed by every loop in order, their old values unread.
unsigned writtenOutputs(linalg::GenericOp g) {
  unsigned written = 0;
  for (OpOperand &init : llvm::reverse(g.getDpsInitsMutable())) {
    if (!g.getMatchingIndexingMap(&init).isIdentity() ||
        !g.getMatchingBlockArgument(&init).use_empty())
      break;
    ++written;
  }
  return written;
}

/// Each reduced output's combining op (the first `reduced` outputs), when
/// each is a reduction of its own: one combining op with a neutral element
/// (a sum, a maximum, ...) whose other operand depends on no output's
/// accumulator.
std::optional<std::pair<SmallVector<Operation *>, SmallVector<TypedAttr>>>
combinersOf(linalg::GenericOp g, unsigned reduced) {
  SmallVector<Operation *> combiners;
  SmallVector<TypedAttr> neutrals;
  for (unsigned k = 0; k < reduced; ++k) {
    SmallVector<Operation *> found;
    if (!matchReduction(g.getRegionOutputArgs(), k, found) || found.size() != 1)
      return std::nullopt;
    std::optional<TypedAttr> neutral = arith::getNeutralElement(found[0]);
    if (!neutral)
      return std::nullopt;
    combiners.push_back(found[0]);
    neutrals.push_back(*neutral);
  }
  // What the accumulators reach in the body.
  DenseSet<Value> fromAccumulators(g.getRegionOutputArgs().begin(),
                                   g.getRegionOutputArgs().end());
  for (Operation &op : g.getBody()->without_terminator())
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return fromAccumulators.contains(v); }))
      fromAccumulators.insert(op.result_begin(), op.result_end());
  for (auto [k, c] : llvm::enumerate(combiners)) {
    Value acc = g.getRegionOutputArgs()[k];
    for (Value operand : c->getOperands())
      if (operand != acc && fromAccumulators.contains(operand))
        return std::nullopt;
  }
  return std::make_pair(combiners, neutrals);
}

/// The split of `g`, if it is a reduction worth splitting whose split
/// reduction loop each input indexes directly (or not at all), and whose
/// reduced outputs are indexed alike, by its parallel loops alone (written
/// outputs may follow them).
std::optional<Split> planSplit(linalg::GenericOp g, int64_t maxPartials,
                               int64_t minIterations, int64_t rowThreads,
                               int64_t columnThreads, int64_t minChunk) {
  if (g.getNumDpsInits() == 0 || g.getNumReductionLoops() == 0 ||
      !g.hasPureBufferSemantics())
    return std::nullopt;
  unsigned written = writtenOutputs(g);
  unsigned reducedOutputs = g.getNumDpsInits() - written;
  if (reducedOutputs == 0)
    return std::nullopt;
  AffineMap outMap = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
  if (!outMap.isProjectedPermutation() ||
      llvm::any_of(llvm::seq<unsigned>(0, reducedOutputs), [&](unsigned k) {
        return g.getMatchingIndexingMap(g.getDpsInitOperand(k)) != outMap;
      }))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = g.getIteratorTypesArray();
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  int64_t total = 1, rows = 1;
  for (auto [r, it] : llvm::zip(ranges, iterators)) {
    if (ShapedType::isDynamic(r))
      return std::nullopt;
    total *= r;
    if (it == utils::IteratorType::parallel)
      rows *= r;
  }
  int64_t reduced = total / rows;
  // The reduction loop that allows the most partials of `minChunk`
  // iterations or more (the outermost of those that allow as many): a
  // gradient's sum over [8, 1024] tokens whose loops do not collapse (an
  // input broadcast over the 8) splits its 1024, not its 8.
  auto capOf = [&](unsigned l) {
    return std::min<int64_t>(ranges[l], reduced / minChunk);
  };
  std::optional<unsigned> best;
  for (unsigned l = 0; l < iterators.size(); ++l)
    if (iterators[l] == utils::IteratorType::reduction && ranges[l] > 1 &&
        (!best || capOf(l) > capOf(*best)))
      best = l;
  if (!best)
    return std::nullopt;
  unsigned loop = *best;
  int64_t outer = ranges[loop];
  if (total < minIterations || outer < 2)
    return std::nullopt;
  // Interleaved when every input the loop indexes has it as its
  // innermost dimension, at unit stride.
  bool interleaved = true, indexed = false;
  for (OpOperand *in : g.getDpsInputOperands()) {
    AffineMap m = g.getMatchingIndexingMap(in);
    for (auto [pos, e] : llvm::enumerate(m.getResults())) {
      if (!e.isFunctionOfDim(loop))
        continue;
      if (!isa<AffineDimExpr>(e))
        return std::nullopt;
      indexed = true;
      interleaved &=
          pos + 1 == m.getNumResults() &&
          cast<MemRefType>(in->get().getType()).isLastDimUnitStride();
    }
  }
  interleaved &= indexed;
  // Written outputs take contiguous chunks alone.
  if (written && interleaved)
    return std::nullopt;
  // `rowThreads` rows or more fill the GPU a thread per row, but each
  // thread then reads its own row, a row apart from its warp's neighbours.
  // A long contiguous row still takes a warp of interleaved partials, so a
  // warp reads 32 adjacent elements.
  bool warpPerRow = rows > 1 && rows >= rowThreads;
  if (warpPerRow &&
      !(interleaved && outer / kMinChunk >= kWarp && maxPartials >= kWarp))
    return std::nullopt;
  // A body that reads its indices is split only where it would otherwise
  // run on one thread (the loss's sum over tokens gathers each token's
  // target logit); rows keep their threads and their loop order.
  if (rows > 1 && !g.getBody()->getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  auto combiners = combinersOf(g, reducedOutputs);
  if (!combiners)
    return std::nullopt;
  // Each partial reduces at least kMinChunk iterations: a full reduction
  // takes as many partials as that allows, rows enough to give the launch
  // `rowThreads` threads, columns (rows that are x already) enough for
  // `columnThreads`: their partials read adjacent columns, and their
  // combines are split again.
  bool columns = rows > 1 && !interleaved;
  int64_t cap = std::min(maxPartials, capOf(loop));
  int64_t want =
      warpPerRow ? kWarp
      : columns  ? std::min(cap, llvm::divideCeilSigned(columnThreads, rows))
      : rows > 1 ? std::min<int64_t>({maxPartials,
                                      llvm::divideCeilSigned(rowThreads, rows),
                                      outer / kMinChunk})
                 : std::min<int64_t>(maxPartials, total / kMinChunk);
  // Interleaved rows take whole warps of partials where the row has
  // kMinChunk iterations for each.
  if (interleaved && rows > 1 && outer / kMinChunk >= kWarp &&
      maxPartials >= kWarp)
    want = std::max(want, kWarp) / kWarp * kWarp;
  if (want < 2)
    return std::nullopt;
  int64_t chunk, partials;
  if (interleaved) {
    partials = std::min(want, outer);
    // A count that divides E leaves no tail (launches of its own): look
    // down to half the count, in whole warps where it is a row's warps.
    int64_t step = rows > 1 && partials % kWarp == 0 ? kWarp : 1;
    for (int64_t p = partials; p >= std::max<int64_t>(2, partials / 2);
         p -= step) {
      if (outer % p == 0) {
        partials = p;
        break;
      }
    }
    chunk = outer / partials;
  } else {
    chunk = llvm::divideCeilSigned(outer, want);
    partials = outer / chunk;
    // Columns: the fewest partials from `want` up to the cap that divide
    // E, so that no tail is left.
    for (int64_t p = want; columns && p <= cap; ++p) {
      if (outer % p == 0) {
        partials = p;
        chunk = outer / p;
        break;
      }
    }
  }
  if (partials < 2)
    return std::nullopt;
  return Split{loop,
               partials,
               chunk,
               outer - partials * chunk,
               interleaved,
               columns,
               std::move(combiners->first),
               std::move(combiners->second),
               written};
}

/// `g` with its reduction loops collapsed into one where they are
/// consecutive loops, in order in every operand that uses them, and
/// contiguous in memory (a full reduction over [1600, 6400] becomes one over
/// 10,240,000 iterations, so its partials interleave over all of it instead
/// of taking its 1600 rows); else `g`. The iterations keep their order.
linalg::GenericOp collapseReductions(linalg::GenericOp g,
                                     RewriterBase &rewriter) {
  SmallVector<utils::IteratorType> iterators = g.getIteratorTypesArray();
  ReassociationIndices loops;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::reduction)
      loops.push_back(i);
  if (loops.size() < 2 ||
      size_t(loops.back() - loops.front() + 1) != loops.size() ||
      !g.hasPureBufferSemantics() ||
      !g.getBody()->getOps<linalg::IndexOp>().empty())
    return g;
  // Every operand indexes all the loops, as consecutive dimensions in loop
  // order, or none of them (a broadcast dimension indexed by a constant
  // would be read as if it had the collapsed extent); and those dimensions
  // are one stride apart in memory.
  for (OpOperand &operand : g->getOpOperands()) {
    AffineMap m = g.getMatchingIndexingMap(&operand);
    if (!m.isProjectedPermutation())
      return g;
    SmallVector<ReassociationIndices> groups;
    for (unsigned r = 0; r < m.getNumResults(); ++r) {
      int64_t d = m.getDimPosition(r);
      if (d < loops.front() || d > loops.back()) {
        groups.push_back({int64_t(r)});
        continue;
      }
      if (d != loops.front() || r + loops.size() > m.getNumResults())
        return g;
      for (auto [k, loop] : llvm::enumerate(loops))
        if (m.getDimPosition(r + k) != unsigned(loop))
          return g;
      groups.push_back(
          llvm::to_vector(llvm::seq<int64_t>(r, r + loops.size())));
      r += loops.size() - 1;
    }
    if (groups.size() == m.getNumResults())
      continue;
    auto t = dyn_cast<MemRefType>(operand.get().getType());
    if (!t || !memref::CollapseShapeOp::isGuaranteedCollapsible(t, groups))
      return g;
  }
  rewriter.setInsertionPoint(g);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(g, {loops}, rewriter);
  if (failed(collapsed))
    return g;
  rewriter.eraseOp(g);
  return cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
}

/// Gives the `linalg.index` ops of `op`, a body cloned from the split
/// op, the split op's loop indices: loop k of it is `index(b, loc, k)`
/// (the loss's gather reads the row of its own iteration).
void remapIndices(linalg::GenericOp op,
                  function_ref<Value(OpBuilder &, Location, unsigned)> index) {
  SmallVector<linalg::IndexOp> old =
      llvm::to_vector(op.getBody()->getOps<linalg::IndexOp>());
  for (linalg::IndexOp i : old) {
    OpBuilder b(i);
    Value v = index(b, i.getLoc(), i.getDim());
    i.replaceAllUsesWith(v);
    i.erase();
  }
}

bool isLoop(AffineExpr e, unsigned loop) {
  auto d = dyn_cast<AffineDimExpr>(e);
  return d && d.getPosition() == loop;
}

/// `v` restricted along dimension `dim` to [offset, offset + size).
Value sliceOuter(OpBuilder &b, Location loc, Value v, unsigned dim,
                 int64_t offset, int64_t size) {
  auto t = cast<MemRefType>(v.getType());
  SmallVector<OpFoldResult> offsets(t.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(t.getRank(), b.getIndexAttr(1));
  for (int64_t d : t.getShape())
    sizes.push_back(b.getIndexAttr(d));
  offsets[dim] = b.getIndexAttr(offset);
  sizes[dim] = b.getIndexAttr(size);
  return memref::SubViewOp::create(b, loc, v, offsets, sizes, strides);
}

/// What a split leaves to split again: the ordered combine of the partials
/// and the original op on the iterations the chunks leave (or null).
struct Stages {
  /// One combine per output.
  SmallVector<linalg::GenericOp> combines;
  linalg::GenericOp tail;
};

/// Splits `g`.
Stages split(linalg::GenericOp g, const Split &s) {
  MLIRContext *ctx = g.getContext();
  unsigned reducedOutputs = g.getNumDpsInits() - s.written;
  SmallVector<Value> outs =
      llvm::to_vector(g.getDpsInits().take_front(reducedOutputs));
  // Each output's initializing fill, if any.
  SmallVector<Operation *> fills(outs.size());
  for (Operation *fill : zero::initializingFills(g))
    for (auto [k, out] : llvm::enumerate(outs))
      if (cast<linalg::FillOp>(fill).getDpsInitOperand(0)->get() == out)
        fills[k] = fill;
  OpBuilder b(g);
  Location loc = g.getLoc();
  unsigned n = g.getNumLoops();
  auto outTy = cast<MemRefType>(outs.front().getType());
  AffineMap outMap = g.getMatchingIndexingMap(g.getDpsInitOperand(0));

  // Stage 1: loops (p, i0, i1, ...), p parallel; loop `s.loop` of the
  // original op is p * chunk + i, so each input indexed by it is expanded
  // to [partials, chunk] along that dimension; each partial has a row of
  // the output's shape. Interleaved: loops (i0, i1, ..., p), the loop is
  // i * partials + p, the expansion [chunk, partials].
  unsigned pLoop = s.interleaved ? n : 0;
  auto loopExpr = [&](AffineExpr e) {
    // Loop k of the original op is loop k + 1 of the split one when p
    // comes first.
    return s.interleaved ? e : e.shiftDims(n, 1);
  };
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  // An input (or a written output) as stage 1 indexes it.
  auto expand = [&](OpOperand *in) -> std::pair<Value, AffineMap> {
    AffineMap m = g.getMatchingIndexingMap(in);
    SmallVector<AffineExpr> results;
    Value v = in->get();
    std::optional<unsigned> outerDim;
    for (auto [pos, e] : llvm::enumerate(m.getResults())) {
      if (isLoop(e, s.loop)) {
        outerDim = pos;
        SmallVector<AffineExpr> split = {loopExpr(e)};
        s.placePartials(split, getAffineDimExpr(pLoop, ctx));
        llvm::append_range(results, split);
      } else {
        results.push_back(loopExpr(e));
      }
    }
    if (outerDim) {
      auto t = cast<MemRefType>(v.getType());
      v = sliceOuter(b, loc, v, *outerDim, 0, s.partials * s.chunk);
      SmallVector<ReassociationIndices> groups;
      SmallVector<int64_t> shape;
      for (int64_t d = 0, r = 0; d < t.getRank(); ++d) {
        if ((unsigned)d == *outerDim) {
          groups.push_back({r, r + 1});
          SmallVector<int64_t> split = {s.chunk};
          s.placePartials<int64_t>(split, s.partials);
          llvm::append_range(shape, split);
          r += 2;
        } else {
          groups.push_back({r++});
          shape.push_back(t.getDimSize(d));
        }
      }
      v = memref::ExpandShapeOp::create(b, loc, shape, v, groups);
    }
    return {v, AffineMap::get(n + 1, 0, results, ctx)};
  };
  for (OpOperand *in : g.getDpsInputOperands()) {
    auto [v, m] = expand(in);
    inputs.push_back(v);
    maps.push_back(m);
  }
  SmallVector<AffineExpr> partialResults;
  for (AffineExpr e : outMap.getResults())
    partialResults.push_back(loopExpr(e));
  s.placePartials(partialResults, getAffineDimExpr(pLoop, ctx));
  // The partials' dimension: outermost, or innermost when interleaved
  // (then loop p is the last loop, which the CUDA mapping puts on x).
  SmallVector<int64_t> partialShape(outTy.getShape());
  s.placePartials<int64_t>(partialShape, s.partials);
  SmallVector<Value> partials;
  for (auto [k, out] : llvm::enumerate(outs)) {
    maps.push_back(AffineMap::get(n + 1, 0, partialResults, ctx));
    auto partialTy = MemRefType::get(
        partialShape, cast<MemRefType>(out.getType()).getElementType());
    partials.push_back(memref::AllocOp::create(b, loc, partialTy));
  }
  SmallVector<utils::IteratorType> iterators = g.getIteratorTypesArray();
  s.placePartials(iterators, utils::IteratorType::parallel);
  // The fills right before stage 1, which initializes them in its threads.
  for (auto [partial, neutral] : llvm::zip(partials, s.neutrals))
    linalg::FillOp::create(
        b, loc, arith::ConstantOp::create(b, loc, neutral).getResult(),
        partial);
  SmallVector<Value> stage1Outs = partials;
  for (unsigned k = reducedOutputs; k < g.getNumDpsInits(); ++k) {
    auto [v, m] = expand(g.getDpsInitOperand(k));
    stage1Outs.push_back(v);
    maps.push_back(m);
  }
  auto stage1 = linalg::GenericOp::create(b, loc, TypeRange{}, inputs,
                                          stage1Outs, maps, iterators);
  IRMapping first;
  g.getRegion().cloneInto(&stage1.getRegion(), first);
  // The split loop's index: i * partials + p interleaved, else
  // p * chunk + i.
  remapIndices(stage1, [&](OpBuilder &nb, Location l, unsigned k) -> Value {
    unsigned at = s.interleaved ? k : k + 1;
    Value i = linalg::IndexOp::create(nb, l, at);
    if (k != s.loop)
      return i;
    Value p = linalg::IndexOp::create(nb, l, pLoop);
    auto mul = [&](Value x, int64_t c) -> Value {
      return arith::MulIOp::create(nb, l, x,
                                   arith::ConstantIndexOp::create(nb, l, c));
    };
    return s.interleaved ? arith::AddIOp::create(nb, l, mul(i, s.partials), p)
                         : arith::AddIOp::create(nb, l, mul(p, s.chunk), i);
  });

  // Stage 2: the partials combined into the output in order: loops over
  // the output's dimensions (parallel), then over the partials.
  unsigned rank = outTy.getRank();
  SmallVector<AffineExpr> partialIndex, outIndex;
  for (unsigned d = 0; d < rank; ++d) {
    partialIndex.push_back(getAffineDimExpr(d, ctx));
    outIndex.push_back(getAffineDimExpr(d, ctx));
  }
  s.placePartials(partialIndex, getAffineDimExpr(rank, ctx));
  SmallVector<AffineMap> combineMaps = {
      AffineMap::get(rank + 1, 0, partialIndex, ctx),
      AffineMap::get(rank + 1, 0, outIndex, ctx)};
  SmallVector<utils::IteratorType> combineIterators(
      rank, utils::IteratorType::parallel);
  combineIterators.push_back(utils::IteratorType::reduction);
  Stages stages;
  for (unsigned k = 0; k < outs.size(); ++k) {
    Value out = outs[k];
    auto combine = linalg::GenericOp::create(
        b, loc, TypeRange{}, partials[k], out, combineMaps, combineIterators,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value acc = args[1], value = args[0];
          Operation *c = s.combiners[k];
          Value accIn = g.getRegionOutputArgs()[k];
          IRMapping map;
          for (Value operand : c->getOperands())
            map.map(operand, operand == accIn ? acc : value);
          Operation *combined = nb.clone(*c, map);
          linalg::YieldOp::create(nb, l, combined->getResult(0));
        });
    memref::DeallocOp::create(b, loc, partials[k]);
    // The output's initialization moves next to the combine, which reads it
    // first, so that the two form one kernel (one launch) when nothing the
    // partials read is the output.
    if (fills[k] && llvm::none_of(inputs, [&](Value in) {
          return isa<MemRefType>(in.getType()) && zero::mayOverlap(in, out);
        }))
      fills[k]->moveBefore(combine);
    stages.combines.push_back(combine);
  }

  // The tail the chunks leave: the original op on its last iterations.
  linalg::GenericOp tail;
  if (s.tail) {
    auto tailOf = [&](OpOperand *in) {
      AffineMap m = g.getMatchingIndexingMap(in);
      Value v = in->get();
      for (auto [pos, e] : llvm::enumerate(m.getResults()))
        if (isLoop(e, s.loop))
          v = sliceOuter(b, loc, v, pos, s.partials * s.chunk, s.tail);
      return v;
    };
    SmallVector<Value> tails, tailOuts = outs;
    for (OpOperand *in : g.getDpsInputOperands())
      tails.push_back(tailOf(in));
    for (unsigned k = reducedOutputs; k < g.getNumDpsInits(); ++k)
      tailOuts.push_back(tailOf(g.getDpsInitOperand(k)));
    tail = linalg::GenericOp::create(b, loc, TypeRange{}, tails, tailOuts,
                                     g.getIndexingMapsArray(),
                                     g.getIteratorTypesArray());
    IRMapping again;
    g.getRegion().cloneInto(&tail.getRegion(), again);
    // The tail starts past the partials' iterations.
    remapIndices(tail, [&](OpBuilder &nb, Location l, unsigned k) -> Value {
      Value i = linalg::IndexOp::create(nb, l, k);
      if (k != s.loop)
        return i;
      return arith::AddIOp::create(
          nb, l, i,
          arith::ConstantIndexOp::create(nb, l, s.partials * s.chunk));
    });
  }
  g.erase();
  stages.tail = tail;
  return stages;
}

/// Whether `a` and `b` are the same elements seen alike: one value, or views
/// of one type at one place in one buffer (collapsed reductions view their
/// inputs anew, through other views of the buffer).
bool sameView(Value a, Value b) {
  if (a == b)
    return true;
  auto t = dyn_cast<MemRefType>(a.getType());
  if (!t || a.getType() != b.getType() || !t.hasStaticShape())
    return false;
  zero::BufferSpan sa = zero::bufferSpan(a), sb = zero::bufferSpan(b);
  return sa.root == sb.root && sa.range && sa.range == sb.range;
}

/// What a reduction moved up may bring along from in between: address
/// arithmetic, constants and allocations, which touch no memory it reads.
bool isMovableDef(Operation *op) {
  return !op->getNumRegions() &&
         (isa<ViewLikeOpInterface, memref::AllocOp>(op) ||
          op->hasTrait<OpTrait::ConstantLike>());
}

/// Whether `op` may write what `reads` or `writes` hold, or read what
/// `writes` hold; true when it does not say.
bool mayConflict(Operation *op, ArrayRef<Value> reads, ArrayRef<Value> writes) {
  if (isPure(op) && !op->getNumRegions())
    return false;
  // A linalg op's effects cover its body; other regions may hide some.
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface || (op->getNumRegions() && !isa<linalg::LinalgOp>(op)))
    return true;
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  auto overlaps = [](Value v, ArrayRef<Value> buffers) {
    return llvm::any_of(buffers, [&](Value b) {
      return isa<MemRefType>(b.getType()) && zero::mayOverlap(v, b);
    });
  };
  for (MemoryEffects::EffectInstance &e : effects) {
    Value v = e.getValue();
    if (isa<MemoryEffects::Allocate>(e.getEffect()))
      continue;
    if (!v || !isa<MemRefType>(v.getType()))
      return true;
    if (overlaps(v, writes) ||
        (!isa<MemoryEffects::Read>(e.getEffect()) && overlaps(v, reads)))
      return true;
  }
  return false;
}

/// A split plan for a rewritten reduction, as the pass would make it.
using Replan = llvm::function_ref<std::optional<Split>(linalg::GenericOp)>;

/// Clones `g`'s body at `b`, its block arguments given `args`; the values
/// it yields.
SmallVector<Value> cloneBody(OpBuilder &b, linalg::GenericOp g,
                             ArrayRef<Value> args) {
  IRMapping map;
  map.map(g.getBody()->getArguments(), args);
  for (Operation &op : g.getBody()->without_terminator())
    b.clone(op, map);
  return llvm::map_to_vector(g.getBody()->getTerminator()->getOperands(),
                             [&](Value v) { return map.lookupOrDefault(v); });
}

/// `op`'s split when it cuts the iterations as `cut` does, with `written`
/// written outputs; otherwise `op` is erased.
std::optional<Split> cutAlike(linalg::GenericOp op, const Split &cut,
                              unsigned written, Replan replan,
                              RewriterBase &rewriter) {
  std::optional<Split> s = replan(op);
  if (s && s->sameCut(cut) && s->written == written)
    return s;
  rewriter.eraseOp(op);
  return std::nullopt;
}

/// The ops strictly between `first` and `second`, or nothing when
/// `second` does not follow `first` in its block (a walk over the few ops
/// between: `isBeforeInBlock` would number the step again after every
/// rewrite).
std::optional<SmallVector<Operation *>> opsBetween(Operation *first,
                                                   Operation *second) {
  SmallVector<Operation *> between;
  for (Operation *op = first->getNextNode(); op; op = op->getNextNode()) {
    if (op == second)
      return between;
    between.push_back(op);
  }
  return std::nullopt;
}

/// Two column reductions cut alike (`first` before `second` in one block)
/// that read a common buffer, as one op with both outputs that reads it
/// once: a layer norm's backward sums dy and dy * x-hat over the tokens for
/// each feature. `second` moves up to `first` with its fills (and what they
/// use from in between), when nothing in between orders them and neither
/// touches the other's outputs; each output keeps its own body, combiner
/// and order, so its values are unchanged. The merged op and its split, or
/// nothing (the IR as it was, but for what moved).
std::optional<std::pair<linalg::GenericOp, Split>>
mergeSiblings(linalg::GenericOp first, linalg::GenericOp second,
              const Split &cut, Replan replan, RewriterBase &rewriter) {
  if (writtenOutputs(first) || writtenOutputs(second) ||
      first.getStaticLoopRanges() != second.getStaticLoopRanges() ||
      first.getIteratorTypesArray() != second.getIteratorTypesArray() ||
      first.getIndexingMapsArray().back() !=
          second.getIndexingMapsArray().back())
    return std::nullopt;
  std::optional<SmallVector<Operation *>> between = opsBetween(first, second);
  if (!between)
    return std::nullopt;
  // A common input, read alike.
  SmallVector<std::optional<unsigned>> sharedWith;
  bool shares = false;
  for (OpOperand *in : second.getDpsInputOperands()) {
    std::optional<unsigned> match;
    for (OpOperand *other : first.getDpsInputOperands())
      if (sameView(in->get(), other->get()) &&
          second.getMatchingIndexingMap(in) ==
              first.getMatchingIndexingMap(other))
        match = other->getOperandNumber();
    shares |= match && isa<MemRefType>(in->get().getType());
    sharedWith.push_back(match);
  }
  if (!shares)
    return std::nullopt;
  SmallVector<Value> firstOperands(first->getOperands()),
      secondOperands(second->getOperands());
  SmallVector<Value> firstOuts(first.getDpsInits()),
      secondOuts(second.getDpsInits());
  auto touches = [](ArrayRef<Value> outs, ArrayRef<Value> operands) {
    return llvm::any_of(outs, [&](Value out) {
      return llvm::any_of(operands, [&](Value v) {
        return isa<MemRefType>(v.getType()) && zero::mayOverlap(out, v);
      });
    });
  };
  if (touches(firstOuts, secondOperands) || touches(secondOuts, firstOperands))
    return std::nullopt;

  // What moves: second's fills, and what they and it use from in between.
  DenseSet<Operation *> inBetween(between->begin(), between->end());
  SmallVector<Operation *, 2> fills = zero::initializingFills(second);
  DenseSet<Operation *> moved(fills.begin(), fills.end());
  SmallVector<Operation *> worklist(fills.begin(), fills.end());
  worklist.push_back(second);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    // Its operands and what its body uses from around it (constants).
    llvm::SetVector<Value> used(op->operand_begin(), op->operand_end());
    for (Region &r : op->getRegions())
      getUsedValuesDefinedAbove(r, used);
    for (Value v : used) {
      Operation *def = v.getDefiningOp();
      if (!def || !inBetween.contains(def) || moved.contains(def))
        continue;
      if (!isMovableDef(def) ||
          (isa<memref::AllocOp>(def) && def->getNumOperands()))
        return std::nullopt;
      moved.insert(def);
      worklist.push_back(def);
    }
  }
  if (llvm::any_of(*between, [&](Operation *op) {
        return !moved.contains(op) &&
               mayConflict(op, secondOperands, secondOuts);
      }))
    return std::nullopt;
  // Allocations go before first's fills, everything else (in order) right
  // before `first`, after what that uses: the merged op's fills stay
  // together before it, with views and constants alone in between.
  SmallVector<Operation *, 2> firstFills = zero::initializingFills(first);
  Operation *allocsAt = firstFills.empty() ? first : firstFills.back();
  for (Operation *op : *between)
    if (moved.contains(op))
      op->moveBefore(isa<memref::AllocOp>(op) ? allocsAt
                                              : first.getOperation());

  SmallVector<Value> inputs(first.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *in : first.getDpsInputOperands())
    maps.push_back(first.getMatchingIndexingMap(in));
  SmallVector<unsigned> secondInput; // second's input i: merged input
  for (auto [i, in] : llvm::enumerate(second.getDpsInputOperands())) {
    if (sharedWith[i]) {
      secondInput.push_back(*sharedWith[i]);
      continue;
    }
    secondInput.push_back(inputs.size());
    inputs.push_back(in->get());
    maps.push_back(second.getMatchingIndexingMap(in));
  }
  SmallVector<Value> outs = firstOuts;
  llvm::append_range(outs, secondOuts);
  maps.append(outs.size(), first.getIndexingMapsArray().back());
  rewriter.setInsertionPoint(first);
  auto merged = linalg::GenericOp::create(
      rewriter, first.getLoc(), TypeRange{}, inputs, outs, maps,
      first.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        ValueRange mergedOuts = args.drop_front(inputs.size());
        SmallVector<Value> firstArgs(args.take_front(first.getNumDpsInputs()));
        llvm::append_range(firstArgs, mergedOuts.take_front(firstOuts.size()));
        SmallVector<Value> secondArgs = llvm::map_to_vector(
            secondInput, [&](unsigned i) { return Value(args[i]); });
        llvm::append_range(secondArgs, mergedOuts.drop_front(firstOuts.size()));
        SmallVector<Value> yields = cloneBody(nb, first, firstArgs);
        llvm::append_range(yields, cloneBody(nb, second, secondArgs));
        linalg::YieldOp::create(nb, l, yields);
      });
  std::optional<Split> s = cutAlike(merged, cut, 0, replan, rewriter);
  if (!s)
    return std::nullopt;
  rewriter.eraseOp(first);
  rewriter.eraseOp(second);
  return std::make_pair(merged, *s);
}

/// How `g`'s loops index what `m` indexes, where loop k of `g` walks the
/// dimensions `groups[k]` of `m`'s domain: the reassociation that collapses
/// each group (its dimensions all in order) into one, and the collapsed
/// operand's map; nothing when a group is indexed otherwise or a loop in
/// `needed` not at all.
std::optional<std::pair<SmallVector<ReassociationIndices>, AffineMap>>
inLoops(AffineMap m, ArrayRef<ReassociationIndices> groups,
        const llvm::SmallBitVector &needed) {
  if (!m.isProjectedPermutation(/*allowZeroInResults=*/true))
    return std::nullopt;
  SmallVector<ReassociationIndices> collapse;
  SmallVector<AffineExpr> exprs;
  llvm::SmallBitVector indexed(groups.size());
  for (unsigned r = 0; r < m.getNumResults();) {
    auto d = dyn_cast<AffineDimExpr>(m.getResult(r));
    if (!d) {
      collapse.push_back({int64_t(r)});
      exprs.push_back(m.getResult(r));
      ++r;
      continue;
    }
    const auto *group =
        llvm::find_if(groups, [&](const ReassociationIndices &gr) {
          return gr.front() == int64_t(d.getPosition());
        });
    if (group == groups.end() || r + group->size() > m.getNumResults())
      return std::nullopt;
    for (auto [k, dim] : llvm::enumerate(*group))
      if (m.getDimPosition(r + k) != unsigned(dim))
        return std::nullopt;
    collapse.push_back(
        llvm::to_vector(llvm::seq<int64_t>(r, r + group->size())));
    unsigned loop = group - groups.begin();
    exprs.push_back(getAffineDimExpr(loop, m.getContext()));
    indexed.set(loop);
    r += group->size();
  }
  if ((needed & ~indexed).any())
    return std::nullopt;
  return std::make_pair(
      collapse, AffineMap::get(groups.size(), 0, exprs, m.getContext()));
}

/// A column reduction that reads the whole output of the elementwise op
/// before it (a GELU's backward, whose sum over the tokens is the MLP
/// bias's gradient) computes that op too: each iteration writes its
/// element of the producer's buffer and adds it up, so the buffer is
/// written once and not read back. The reduction reads the buffer itself,
/// or its collapse; each producer input indexes every dimension the
/// reduction keeps (a row's statistics, which a row group reads beside the
/// rows, do not), and the collapsed dimensions all in order or not at all
/// (a bias broadcast over the tokens). Nothing in between may touch the
/// buffer or write the producer's inputs; the deallocations in between
/// move after the reduction. The fused op and its split, or nothing.
std::optional<std::pair<linalg::GenericOp, Split>>
fuseProducer(linalg::GenericOp g, const Split &cut, Replan replan,
             RewriterBase &rewriter) {
  if (!cut.columns || cut.written)
    return std::nullopt;
  llvm::SmallBitVector keptLoops(g.getNumLoops());
  for (auto [loop, it] : llvm::enumerate(g.getIteratorTypesArray()))
    keptLoops[loop] = it == utils::IteratorType::parallel;
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (!g.getMatchingIndexingMap(in).isIdentity())
      continue;
    // The buffer, and which of its dimensions each loop of `g` walks.
    Value x = in->get(), root = x;
    SmallVector<ReassociationIndices> groups;
    if (auto c = x.getDefiningOp<memref::CollapseShapeOp>()) {
      root = c.getSrc();
      groups = c.getReassociationIndices();
    } else if (auto t = dyn_cast<MemRefType>(x.getType())) {
      for (int64_t d = 0; d < t.getRank(); ++d)
        groups.push_back({d});
    }
    auto alloc = root.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != g->getBlock())
      continue;
    // The producer: the last op before `g` that touches the buffer.
    linalg::GenericOp producer;
    SmallVector<Operation *> between, deallocs;
    for (Operation *op = g->getPrevNode(); op && op != alloc;
         op = op->getPrevNode()) {
      auto p = dyn_cast<linalg::GenericOp>(op);
      if (p && p.getNumDpsInits() == 1 && p.getDpsInits()[0] == root) {
        producer = p;
        break;
      }
      if (isa<memref::DeallocOp>(op))
        deallocs.push_back(op);
      else if (mayConflict(op, {}, {root}))
        break;
      else
        between.push_back(op);
    }
    if (!producer || !producer.hasPureBufferSemantics() ||
        producer.getNumReductionLoops() ||
        !producer.getBody()->getOps<linalg::IndexOp>().empty() ||
        !producer.getMatchingIndexingMap(producer.getDpsInitOperand(0))
             .isIdentity() ||
        !producer.getMatchingBlockArgument(producer.getDpsInitOperand(0))
             .use_empty())
      continue;
    // `g` reads the buffer through `in` alone and writes none of the
    // producer's inputs, which nothing in between writes.
    SmallVector<Value> producerInputs(producer.getDpsInputs());
    auto overlapsAny = [](Value v, ArrayRef<Value> buffers) {
      return isa<MemRefType>(v.getType()) &&
             llvm::any_of(buffers, [&](Value b) {
               return isa<MemRefType>(b.getType()) && zero::mayOverlap(v, b);
             });
    };
    if (llvm::any_of(g->getOpOperands(),
                     [&](OpOperand &o) {
                       return &o != in && overlapsAny(o.get(), {root});
                     }) ||
        llvm::any_of(
            g.getDpsInits(),
            [&](Value out) { return overlapsAny(out, producerInputs); }) ||
        llvm::any_of(between, [&](Operation *op) {
          return mayConflict(op, producerInputs, {});
        }))
      continue;
    // Each producer input in `g`'s loops.
    SmallVector<std::pair<SmallVector<ReassociationIndices>, AffineMap>> placed;
    for (OpOperand *pin : producer.getDpsInputOperands()) {
      auto t = dyn_cast<MemRefType>(pin->get().getType());
      auto p = inLoops(producer.getMatchingIndexingMap(pin), groups, keptLoops);
      if (!t || !p ||
          !memref::CollapseShapeOp::isGuaranteedCollapsible(t, p->first))
        break;
      placed.push_back(std::move(*p));
    }
    if (placed.size() != producer.getNumDpsInputs())
      continue;

    rewriter.setInsertionPoint(g);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *other : g.getDpsInputOperands())
      if (other != in) {
        inputs.push_back(other->get());
        maps.push_back(g.getMatchingIndexingMap(other));
      }
    unsigned producerAt = inputs.size();
    for (auto [pin, p] : llvm::zip(producer.getDpsInputs(), placed)) {
      Value v = pin;
      if (p.first.size() != size_t(cast<MemRefType>(v.getType()).getRank()))
        v = memref::CollapseShapeOp::create(rewriter, g.getLoc(), v, p.first);
      inputs.push_back(v);
      maps.push_back(p.second);
    }
    SmallVector<Value> outs(g.getDpsInits());
    for (OpOperand &init : g.getDpsInitsMutable())
      maps.push_back(g.getMatchingIndexingMap(&init));
    outs.push_back(x);
    maps.push_back(g.getMatchingIndexingMap(in));
    // Both ops' work: the nodes of both.
    Location loc = rewriter.getFusedLoc({producer.getLoc(), g.getLoc()});
    auto fused = linalg::GenericOp::create(
        rewriter, loc, TypeRange{}, inputs, outs, maps,
        g.getIteratorTypesArray(),
        [&](OpBuilder &nb, Location l, ValueRange args) {
          // The producer's output argument is the written output's.
          SmallVector<Value> producerArgs(
              args.slice(producerAt, producer.getNumDpsInputs()));
          producerArgs.push_back(args.back());
          Value v = cloneBody(nb, producer, producerArgs).front();
          SmallVector<Value> gArgs(args.take_front(producerAt));
          gArgs.insert(gArgs.begin() + in->getOperandNumber(), v);
          llvm::append_range(gArgs,
                             args.slice(inputs.size(), g.getNumDpsInits()));
          SmallVector<Value> yields = cloneBody(nb, g, gArgs);
          yields.push_back(v);
          linalg::YieldOp::create(nb, l, yields);
        });
    std::optional<Split> s = cutAlike(fused, cut, 1, replan, rewriter);
    if (!s)
      continue;
    for (Operation *d : deallocs)
      d->moveAfter(fused);
    rewriter.eraseOp(g);
    rewriter.eraseOp(producer);
    return std::make_pair(fused, *s);
  }
  return std::nullopt;
}

struct ZeroGPUSplitReductionsPass
    : zero::cuda::impl::ZeroGPUSplitReductionsBase<ZeroGPUSplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxPartials < 2) {
      getOperation().emitError()
          << "zero-gpu-split-reductions: max-partials "
          << maxPartials.getValue() << " must be at least 2";
      return signalPassFailure();
    }
    for (auto [name, value] : {std::pair{"row-threads", rowThreads.getValue()},
                               {"column-threads", columnThreads.getValue()}}) {
      if (value >= 1)
        continue;
      getOperation().emitError() << "zero-gpu-split-reductions: " << name << " "
                                 << value << " must be at least 1";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::GenericOp, Split>> work;
    IRRewriter rewriter(&getContext());
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn->hasAttr(kKernelAttr))
        continue;
      // linalg.reduce (bias gradients: sums over the batch's rows) is a
      // generic with reduction loops; zero-gpu-map-kernels generalizes it
      // anyway.
      SmallVector<linalg::ReduceOp> reduces;
      fn.walk([&](linalg::ReduceOp r) { reduces.push_back(r); });
      for (linalg::ReduceOp r : reduces) {
        if (!r.hasPureBufferSemantics() || r.getNumDpsInits() != 1)
          continue;
        rewriter.setInsertionPoint(r);
        (void)linalg::generalizeNamedOp(rewriter, r);
      }
      SmallVector<linalg::GenericOp> generics;
      fn.walk([&](linalg::GenericOp g) { generics.push_back(g); });
      size_t begin = work.size();
      for (linalg::GenericOp g : generics)
        if (auto s = plan(g, rewriter))
          work.push_back(*s);
      // Consecutive column reductions cut alike that read a common buffer
      // are split as one; column sums of an elementwise op's whole output
      // compute it.
      auto replan = [&](linalg::GenericOp op) {
        return planSplit(op, maxPartials, minIterations, rowThreads,
                         columnThreads, kMinChunk);
      };
      for (size_t i = begin; i + 1 < work.size();) {
        auto &[g1, s1] = work[i];
        auto &[g2, s2] = work[i + 1];
        if (s1.columns && s2.columns && s1.sameCut(s2))
          if (auto merged = mergeSiblings(g1, g2, s1, replan, rewriter)) {
            work[i] = *merged;
            work.erase(work.begin() + i + 1);
            continue;
          }
        ++i;
      }
      for (size_t i = begin; i < work.size(); ++i)
        if (auto fused =
                fuseProducer(work[i].first, work[i].second, replan, rewriter))
          work[i] = *fused;
    }
    // What a split leaves may be split again. A long combine
    // (min-iterations partials or more a row: a long full reduction's):
    // partials of partials, each level in order. A tail is shorter than the
    // partials, but a full reduction's may be up to 65535 iterations, which
    // would run on one thread.
    for (size_t i = 0; i < work.size(); ++i) {
      auto [g, s] = work[i];
      Stages stages = split(g, s);
      if (stages.tail)
        if (auto again = plan(stages.tail, rewriter))
          work.push_back(*again);
      // Columns' combines read their partials a column to a thread: at
      // 2 * kMinChunk partials or more, they are split again, into chunks
      // of about the square root of their count (256 partials: 16 of 16),
      // so that neither level is long on its one thread a column.
      bool columns = s.columns && s.partials >= 2 * kMinChunk;
      if (s.partials < minIterations && !columns)
        continue;
      int64_t chunk =
          columns ? int64_t(1) << (llvm::Log2_64(s.partials) / 2) : kMinChunk;
      for (linalg::GenericOp combine : stages.combines)
        if (auto again = plan(combine, rewriter, chunk))
          work.push_back(*again);
    }
  }

  /// The split of `g`, its reduction loops collapsed first where they can
  /// be, if it is worth splitting.
  std::optional<std::pair<linalg::GenericOp, Split>>
  plan(linalg::GenericOp g, RewriterBase &rewriter,
       int64_t minChunk = kMinChunk) {
    if (g.getNumReductionLoops() == 0 || !g.hasPureBufferSemantics())
      return std::nullopt;
    int64_t total = 1;
    for (int64_t r : g.getStaticLoopRanges())
      total = ShapedType::isDynamic(r) ? 0 : total * r;
    if (total < minIterations)
      return std::nullopt;
    g = collapseReductions(g, rewriter);
    if (auto s = planSplit(g, maxPartials, minIterations, rowThreads,
                           columnThreads, minChunk))
      return std::make_pair(g, *s);
    return std::nullopt;
  }
};

} // namespace
