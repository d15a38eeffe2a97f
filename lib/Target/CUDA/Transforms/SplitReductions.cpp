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
  Operation *combiner;
  TypedAttr neutral;

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

/// The split of `g`, if it is a reduction worth splitting whose split
/// reduction loop each input indexes directly (or not at all), and whose
/// output is indexed by its parallel loops alone.
std::optional<Split> planSplit(linalg::GenericOp g, int64_t maxPartials,
                               int64_t minIterations, int64_t rowThreads,
                               int64_t columnThreads, int64_t minChunk) {
  if (g.getNumDpsInits() != 1 || g.getNumReductionLoops() == 0 ||
      !g.hasPureBufferSemantics())
    return std::nullopt;
  AffineMap outMap = g.getMatchingIndexingMap(g.getDpsInitOperand(0));
  if (!outMap.isProjectedPermutation())
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
  // One combining op with a neutral element (a sum, a maximum, ...).
  SmallVector<Operation *> combiners;
  if (!matchReduction(g.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return std::nullopt;
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiners[0]);
  if (!neutral)
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
  return Split{loop,        partials, chunk,        outer - partials * chunk,
               interleaved, columns,  combiners[0], *neutral};
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
  linalg::GenericOp combine, tail;
};

/// Splits `g`.
Stages split(linalg::GenericOp g, const Split &s) {
  MLIRContext *ctx = g.getContext();
  Operation *fill = zero::initializingFill(g);
  OpBuilder b(g);
  Location loc = g.getLoc();
  unsigned n = g.getNumLoops();
  Value out = g.getDpsInitOperand(0)->get();
  auto outTy = cast<MemRefType>(out.getType());
  Type elem = outTy.getElementType();
  // The partials' dimension: outermost, or innermost when interleaved
  // (then loop p is the last loop, which the CUDA mapping puts on x).
  SmallVector<int64_t> partialShape(outTy.getShape());
  s.placePartials<int64_t>(partialShape, s.partials);
  auto partialTy = MemRefType::get(partialShape, elem);
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
  for (OpOperand *in : g.getDpsInputOperands()) {
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
    inputs.push_back(v);
    maps.push_back(AffineMap::get(n + 1, 0, results, ctx));
  }
  SmallVector<AffineExpr> partialResults;
  for (AffineExpr e : outMap.getResults())
    partialResults.push_back(loopExpr(e));
  s.placePartials(partialResults, getAffineDimExpr(pLoop, ctx));
  maps.push_back(AffineMap::get(n + 1, 0, partialResults, ctx));
  SmallVector<utils::IteratorType> iterators = g.getIteratorTypesArray();
  s.placePartials(iterators, utils::IteratorType::parallel);
  Value partial = memref::AllocOp::create(b, loc, partialTy);
  Value neutral = arith::ConstantOp::create(b, loc, s.neutral);
  linalg::FillOp::create(b, loc, neutral, partial);
  auto stage1 = linalg::GenericOp::create(b, loc, TypeRange{}, inputs, partial,
                                          maps, iterators);
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
  auto combine = linalg::GenericOp::create(
      b, loc, TypeRange{}, partial, out, combineMaps, combineIterators,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value acc = args[1], value = args[0];
        Operation *c = s.combiner;
        Value accIn = g.getRegionOutputArgs()[0];
        IRMapping map;
        for (Value operand : c->getOperands())
          map.map(operand, operand == accIn ? acc : value);
        Operation *combined = nb.clone(*c, map);
        linalg::YieldOp::create(nb, l, combined->getResult(0));
      });
  memref::DeallocOp::create(b, loc, partial);
  // The output's initialization moves next to the combine, which reads it
  // first, so that the two form one kernel (one launch) when nothing the
  // partials read is the output.
  if (fill && llvm::none_of(inputs, [&](Value in) {
        return isa<MemRefType>(in.getType()) && zero::mayOverlap(in, out);
      }))
    fill->moveBefore(combine);

  // The tail the chunks leave: the original op on its last iterations.
  linalg::GenericOp tail;
  if (s.tail) {
    SmallVector<Value> tails;
    for (OpOperand *in : g.getDpsInputOperands()) {
      AffineMap m = g.getMatchingIndexingMap(in);
      Value v = in->get();
      for (auto [pos, e] : llvm::enumerate(m.getResults()))
        if (isLoop(e, s.loop))
          v = sliceOuter(b, loc, v, pos, s.partials * s.chunk, s.tail);
      tails.push_back(v);
    }
    tail = linalg::GenericOp::create(b, loc, TypeRange{}, tails, out,
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
  return {combine, tail};
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
      for (linalg::GenericOp g : generics)
        if (auto s = plan(g, rewriter))
          work.push_back(*s);
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
      if (auto again = plan(stages.combine, rewriter, chunk))
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
