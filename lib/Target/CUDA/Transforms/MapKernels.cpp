//===- MapKernels.cpp - kernels tiled to GPU blocks and threads -*- C++ -*-===//
//
// Only parallel dimensions are distributed: a thread computes whole output
// elements, reducing in the op's loop order, so the mapped kernel gives the
// same sums whether its foralls run on a GPU or one after another on the
// CPU, which is how its numerics are checked without one.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"
#include "zero-opt/Dialect/Zero/Utils/Masks.h"
#include "zero-opt/Target/CUDA/Mapping.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include <numeric>

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUMAPKERNELS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// A copy tiles only as linalg.copy.
struct CopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, ValueRange{op.getSource()},
                                                ValueRange{op.getTarget()});
    return success();
  }
};

/// `tiles` as the mapping attributes of the loops tiling creates (one per
/// non-zero tile, outermost first).
template <typename MappingAttr>
SmallVector<Attribute> mappingOf(MLIRContext *ctx, ArrayRef<int64_t> tiles) {
  unsigned mapped = llvm::count_if(tiles, [](int64_t t) { return t != 0; });
  SmallVector<Attribute> mapping;
  unsigned id = mapped;
  for (int64_t t : tiles)
    if (t != 0)
      mapping.push_back(MappingAttr::get(
          ctx, static_cast<gpu::MappingId>(
                   static_cast<uint64_t>(gpu::MappingId::DimX) + --id)));
  return mapping;
}

/// The kernel argument `v` is a view of; null when it is no argument's.
BlockArgument argumentOf(Value v) {
  return dyn_cast<BlockArgument>(zero::rootBuffer(v));
}

/// Whether no two elements of `type` share an address.
bool nonOverlapping(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!type.hasStaticShape() ||
      failed(type.getStridesAndOffset(strides, offset)) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return false;
  SmallVector<unsigned> dims = llvm::to_vector(
      llvm::seq<unsigned>(0, static_cast<unsigned>(strides.size())));
  llvm::sort(dims,
             [&](unsigned a, unsigned b) { return strides[a] > strides[b]; });
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (type.getDimSize(dims[i + 1]) > 1 &&
        strides[dims[i]] < strides[dims[i + 1]] * type.getDimSize(dims[i + 1]))
      return false;
  return dims.empty() || strides[dims.back()] >= 1 ||
         type.getDimSize(dims.back()) == 1;
}

/// For each distributed loop of `op` (`tiles` non-zero), the dimension of
/// `operand`'s root buffer it indexes and the constant offset it indexes it
/// at: each such loop must be one result of the operand's map alone, and
/// every view on the way to the root must be a subview that keeps that
/// dimension at unit stride and a constant offset. None when it is not so.
std::optional<SmallVector<std::pair<unsigned, int64_t>>>
rootCoordinates(linalg::LinalgOp op, OpOperand &operand,
                ArrayRef<int64_t> tiles) {
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<std::pair<unsigned, int64_t>> coords;
  for (auto [d, tile] : llvm::enumerate(tiles)) {
    if (tile == 0)
      continue;
    std::optional<unsigned> position;
    for (auto [e, expr] : llvm::enumerate(map.getResults())) {
      if (!expr.isFunctionOfDim(d))
        continue;
      if (position || expr != getAffineDimExpr(d, op->getContext()))
        return std::nullopt;
      position = e;
    }
    if (!position)
      return std::nullopt;
    unsigned dim = *position;
    int64_t offset = 0;
    Value v = operand.get();
    while (auto view = v.getDefiningOp<memref::SubViewOp>()) {
      llvm::SmallBitVector dropped = view.getDroppedDims();
      unsigned source = 0;
      for (unsigned kept = 0;; ++source)
        if (!dropped.test(source) && kept++ == dim)
          break;
      std::optional<int64_t> off =
          getConstantIntValue(view.getMixedOffsets()[source]);
      std::optional<int64_t> stride =
          getConstantIntValue(view.getMixedStrides()[source]);
      if (!off || stride != 1)
        return std::nullopt;
      offset += *off;
      dim = source;
      v = view.getSource();
    }
    if (!isa<BlockArgument>(v))
      return std::nullopt;
    coords.push_back({dim, offset});
  }
  return coords;
}

/// An op tiled to a grid: the block and thread foralls, and the op on one
/// thread's tile.
struct Grid {
  scf::ForallOp block, thread;
  Operation *tiled;
};

struct ZeroGPUMapKernelsPass
    : zero::cuda::impl::ZeroGPUMapKernelsBase<ZeroGPUMapKernelsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  LogicalResult prepare(func::FuncOp kernel, ArrayRef<bool> noAlias,
                        llvm::SmallPtrSetImpl<Operation *> &fusedFills);
  FailureOr<Grid> mapToGrid(RewriterBase &rewriter, linalg::LinalgOp op);
  linalg::LinalgOp distributable(scf::ForOp loop, ArrayRef<bool> noAlias);
  LogicalResult mapLoop(RewriterBase &rewriter, scf::ForOp loop,
                        linalg::LinalgOp op);
  void mapSerial(RewriterBase &rewriter, Operation *op);
  LogicalResult mapRowGroup(RewriterBase &rewriter, zero::RowGroupOp group);

  /// Ops whose threads take several outputs each.
  int64_t coarsened = 0;
  /// Row group members writing only the columns some use reads.
  int64_t partial = 0;
};

/// Whether buffers `a` and `b` of a kernel share no byte at any call.
bool disjoint(Value a, Value b, ArrayRef<bool> noAlias) {
  BlockArgument ra = argumentOf(a), rb = argumentOf(b);
  if (ra && rb && ra != rb &&
      (noAlias[ra.getArgNumber()] || noAlias[rb.getArgNumber()]))
    return true;
  return !zero::mayOverlap(a, b);
}

/// A result computed into a temporary and copied back over one of its
/// inputs (bufferization's form of `x += y` on a view) is computed in place:
/// the copy's target becomes the output and its input's block argument the
/// output's. Legal because that input is read at the element the same
/// iteration writes, and no other input overlaps the target.
void foldCopyBack(RewriterBase &rewriter, func::FuncOp kernel,
                  ArrayRef<bool> noAlias) {
  SmallVector<memref::CopyOp> copies;
  kernel.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    Value temp = copy.getSource(), target = copy.getTarget();
    auto alloc = temp.getDefiningOp<memref::AllocOp>();
    auto op = dyn_cast_or_null<linalg::GenericOp>(copy->getPrevNode());
    if (!alloc || !op || op.getNumDpsInits() != 1 ||
        op.getDpsInits()[0] != temp || op.getNumResults() != 0)
      continue;
    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap map = op.getMatchingIndexingMap(init);
    if (op.payloadUsesValueFromOperand(init) || !map.isPermutation() ||
        cast<MemRefType>(temp.getType()).getShape() !=
            cast<MemRefType>(target.getType()).getShape() ||
        llvm::any_of(temp.getUsers(), [&](Operation *user) {
          return user != op && user != copy && !isa<memref::DeallocOp>(user);
        }))
      continue;
    OpOperand *in = nullptr;
    bool others = true;
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (input->get() == target && !in &&
          op.getMatchingIndexingMap(input) == map)
        in = input;
      else if (!isa<MemRefType>(input->get().getType()) ||
               !disjoint(input->get(), target, noAlias))
        others = false;
    }
    if (!in || !others)
      continue;
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *input : op.getDpsInputOperands())
      if (input != in) {
        inputs.push_back(input->get());
        maps.push_back(op.getMatchingIndexingMap(input));
      }
    maps.push_back(map);
    rewriter.setInsertionPoint(op);
    auto inPlace = linalg::GenericOp::create(
        rewriter, op.getLoc(), TypeRange{}, inputs, ValueRange{target},
        rewriter.getAffineMapArrayAttr(maps), op.getIteratorTypes(),
        op.getDocAttr(), op.getLibraryCallAttr());
    rewriter.inlineRegionBefore(op.getRegion(), inPlace.getRegion(),
                                inPlace.getRegion().end());
    Block &body = inPlace.getRegion().front();
    unsigned index = in->getOperandNumber();
    body.getArgument(index).replaceAllUsesWith(body.getArguments().back());
    body.eraseArgument(index);
    rewriter.eraseOp(op);
    rewriter.eraseOp(copy);
    for (Operation *user : llvm::make_early_inc_range(temp.getUsers()))
      rewriter.eraseOp(user);
    rewriter.eraseOp(alloc);
  }
}

LogicalResult
ZeroGPUMapKernelsPass::prepare(func::FuncOp kernel, ArrayRef<bool> noAlias,
                               llvm::SmallPtrSetImpl<Operation *> &fusedFills) {
  MLIRContext *ctx = &getContext();
  IRRewriter rewriter(ctx);
  foldCopyBack(rewriter, kernel, noAlias);
  RewritePatternSet copies(ctx);
  copies.add<CopyToLinalg>(ctx);
  if (failed(applyPatternsGreedily(kernel, std::move(copies))))
    return kernel.emitError("copies did not converge");
  // A reduction's accumulator is initialized by the threads that compute
  // it: the fill stays a fill, placed on each thread's tile by runOnOperation.
  for (auto fill : kernel.getBody().getOps<linalg::FillOp>())
    if (zero::fusedInitializationRoot(
            fill, [&](Value a, Value b) { return !disjoint(a, b, noAlias); }))
      fusedFills.insert(fill);
  SmallVector<linalg::LinalgOp> named;
  kernel.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp>(op) && !fusedFills.contains(op))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::generalizeNamedOp(rewriter, op)))
      return op.emitError("cannot be written as a linalg.generic");
  }
  // Fewer dimensions leave fewer of them serial in a thread.
  RewritePatternSet unitDims(ctx);
  linalg::ControlDropUnitDims control;
  control.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  linalg::populateFoldUnitExtentDimsPatterns(unitDims, control);
  // As upstream's pass: what did not fold in the iteration limit is still
  // valid IR, only with more dimensions.
  (void)applyPatternsGreedily(kernel, std::move(unitDims));
  return success();
}

FailureOr<Grid> ZeroGPUMapKernelsPass::mapToGrid(RewriterBase &rewriter,
                                                 linalg::LinalgOp op) {
  MLIRContext *ctx = &getContext();
  SmallVector<int64_t> tiles = zero::cuda::gpuBlockTiles(op, threadsPerBlock);
  SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(ctx, tiles);
  SmallVector<int64_t> perBlock =
      zero::cuda::gpuBlockThreads(op, threadsPerBlock);
  SmallVector<OpFoldResult> counts = getAsIndexOpFoldResult(ctx, perBlock);
  if (perBlock != tiles)
    ++coarsened;

  scf::SCFTilingOptions blocks;
  blocks.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
      .setTileSizes(sizes)
      .setMapping(mappingOf<gpu::GPUBlockMappingAttr>(ctx, tiles));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> grid = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), blocks);
  if (failed(grid))
    return op.emitError("cannot be tiled to GPU blocks");
  auto block = cast<scf::ForallOp>(grid->loops.front().getOperation());
  rewriter.eraseOp(op);

  // The block's tile over its threads, so the thread forall is static even
  // where the tile is partial; a thread takes adjacent outputs along y.
  auto tiled = cast<TilingInterface>(grid->tiledOps.back());
  scf::SCFTilingOptions threads;
  threads.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
      .setNumThreads(counts)
      .setMapping(mappingOf<gpu::GPUThreadMappingAttr>(ctx, tiles));
  rewriter.setInsertionPoint(tiled);
  FailureOr<scf::SCFTilingResult> lanes =
      scf::tileUsingSCF(rewriter, tiled, threads);
  if (failed(lanes))
    return tiled->emitError("cannot be tiled to GPU threads");
  rewriter.eraseOp(tiled);
  return Grid{block, cast<scf::ForallOp>(lanes->loops.front().getOperation()),
              lanes->tiledOps.back()};
}

/// The op a loop kernel can run on a grid with, or null. Every thread runs
/// the whole loop for the elements of the op's distributed dimensions it
/// owns, so the loop must not let one thread see another's writes: its
/// body is index arithmetic, views and loads of buffers it does not write,
/// and one linalg op whose outputs are arguments no other argument
/// overlaps; every view of those arguments the op uses reaches each
/// distributed dimension at the same root dimension and constant offset, so
/// an element of them belongs to one thread in every iteration. The
/// embedding gradient's scatter is such a loop: a token's row added to the
/// table's row, each column owned by one thread.
linalg::LinalgOp ZeroGPUMapKernelsPass::distributable(scf::ForOp loop,
                                                      ArrayRef<bool> noAlias) {
  if (loop.getNumResults() != 0)
    return nullptr;
  linalg::LinalgOp op;
  SmallVector<memref::LoadOp> loads;
  for (Operation &inner : loop.getBody()->without_terminator()) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(inner)) {
      if (op)
        return nullptr;
      op = linalgOp;
    } else if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      loads.push_back(load);
    } else if (inner.getNumRegions() != 0 || !isPure(&inner)) {
      return nullptr;
    }
  }
  if (!op || !op.hasPureBufferSemantics() || op.hasDynamicShape())
    return nullptr;
  SmallVector<int64_t> tiles = zero::cuda::gpuBlockTiles(op, threadsPerBlock);
  if (llvm::all_of(tiles, [](int64_t t) { return t == 0; }))
    return nullptr;
  // The arguments written, and the element coordinates each thread owns.
  DenseMap<BlockArgument, SmallVector<std::pair<unsigned, int64_t>>> owned;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument root = argumentOf(init.get());
    if (!root || !noAlias[root.getArgNumber()] ||
        !nonOverlapping(cast<MemRefType>(root.getType())))
      return nullptr;
    owned[root];
  }
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    BlockArgument root = argumentOf(operand.get());
    if (!root)
      return nullptr;
    if (!owned.count(root))
      continue;
    auto coords = rootCoordinates(op, operand, tiles);
    if (!coords)
      return nullptr;
    SmallVector<std::pair<unsigned, int64_t>> &first = owned[root];
    if (!first.empty()) {
      if (first != *coords)
        return nullptr;
      continue;
    }
    // Distinct loops must own distinct dimensions of the buffer.
    llvm::SmallDenseSet<unsigned> dims;
    for (auto [dim, offset] : *coords)
      if (!dims.insert(dim).second)
        return nullptr;
    first = *coords;
  }
  for (memref::LoadOp load : loads) {
    BlockArgument root = argumentOf(load.getMemRef());
    if (!root || owned.count(root))
      return nullptr;
  }
  return op;
}

/// The row a distributable loop's op writes each iteration, when it
/// writes one output and every operand viewing that output's buffer views
/// the same scattered row: threads may then split the rows among them.
std::optional<zero::cuda::ScatteredRow> scatterOf(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Value init = op.getDpsInits()[0];
  std::optional<zero::cuda::ScatteredRow> row = zero::cuda::scatteredRow(init);
  if (!row)
    return std::nullopt;
  BlockArgument root = argumentOf(init);
  for (Value v : op->getOperands())
    if (isa<MemRefType>(v.getType()) && argumentOf(v) == root &&
        zero::cuda::scatteredRow(v) != row)
      return std::nullopt;
  return row;
}

/// The loop runs inside the grid of its op: the op's block and thread
/// foralls move outside the loop, which every thread then runs in order.
/// A loop writing one scattered row per iteration (the embedding
/// gradient's table row at each token's id) gets one more block dimension
/// that splits the rows into parts: every thread runs every iteration and
/// updates the row only when it lies in its part. Each element is still
/// updated by one thread, in iteration order; the grid holds the parts
/// times as many threads, each doing the row's work for 1/parts of the
/// iterations (a single part's threads ran them all, 1600 threads for
/// GPT-2 XL's 8192 tokens).
LogicalResult ZeroGPUMapKernelsPass::mapLoop(RewriterBase &rewriter,
                                             scf::ForOp loop,
                                             linalg::LinalgOp op) {
  std::optional<zero::cuda::ScatteredRow> scatter = scatterOf(op);
  int64_t parts =
      scatter ? zero::cuda::gpuScatterParts(
                    scatter->rows, zero::cuda::gpuThreads(op, threadsPerBlock))
              : 1;
  FailureOr<Grid> grid = mapToGrid(rewriter, op);
  if (failed(grid))
    return failure();
  scf::ForallOp block = grid->block, thread = grid->thread;
  // A block dimension is left for the parts.
  if (block.getMapping()->size() == 3)
    parts = 1;
  // Static bounds (the op's shape is): the foralls can move out of it.
  auto isStatic = [](ArrayRef<OpFoldResult> bounds) {
    return llvm::all_of(bounds, llvm::IsaPred<Attribute>);
  };
  for (scf::ForallOp forall : {block, thread})
    if (!isStatic(forall.getMixedLowerBound()) ||
        !isStatic(forall.getMixedUpperBound()) ||
        !isStatic(forall.getMixedStep()))
      return forall.emitError("a distributed loop's grid is not static");
  rewriter.setInsertionPoint(loop);
  SmallVector<scf::ForallOp> outer;
  for (scf::ForallOp forall : {block, thread}) {
    SmallVector<OpFoldResult> lbs = forall.getMixedLowerBound(),
                              ubs = forall.getMixedUpperBound(),
                              steps = forall.getMixedStep();
    SmallVector<Attribute> mapping(forall.getMapping()->getValue());
    // The parts: the outermost block dimension, the next free id.
    if (forall == block && parts > 1) {
      lbs.insert(lbs.begin(), rewriter.getIndexAttr(0));
      ubs.insert(ubs.begin(), rewriter.getIndexAttr(parts));
      steps.insert(steps.begin(), rewriter.getIndexAttr(1));
      mapping.insert(mapping.begin(),
                     gpu::GPUBlockMappingAttr::get(
                         rewriter.getContext(),
                         static_cast<gpu::MappingId>(
                             static_cast<uint64_t>(gpu::MappingId::DimX) +
                             mapping.size())));
    }
    auto hoisted =
        scf::ForallOp::create(rewriter, forall.getLoc(), lbs, ubs, steps,
                              ValueRange{}, rewriter.getArrayAttr(mapping));
    outer.push_back(hoisted);
    rewriter.setInsertionPoint(hoisted.getBody()->getTerminator());
  }
  rewriter.moveOpBefore(loop, outer.back().getBody()->getTerminator());
  scf::ForallOp inner[] = {block, thread};
  for (auto [forall, hoisted] : llvm::zip(inner, outer)) {
    SmallVector<Value> ivs = hoisted.getInductionVars();
    if (forall == block && parts > 1)
      ivs.erase(ivs.begin());
    rewriter.eraseOp(forall.getBody()->getTerminator());
    rewriter.inlineBlockBefore(forall.getBody(), forall, ivs);
    rewriter.eraseOp(forall);
  }
  if (parts > 1) {
    // The op runs where its row, less the part's first, is below a part:
    // one unsigned comparison for both ends.
    Location loc = grid->tiled->getLoc();
    int64_t chunk = llvm::divideCeil(scatter->rows, parts);
    rewriter.setInsertionPoint(grid->tiled);
    Value part = outer.front().getInductionVars().front();
    Value first = arith::MulIOp::create(
        rewriter, loc, part,
        arith::ConstantIndexOp::create(rewriter, loc, chunk));
    Value row = scatter->row;
    if (scatter->offset)
      row = arith::AddIOp::create(
          rewriter, loc, row,
          arith::ConstantIndexOp::create(rewriter, loc, scatter->offset));
    Value inPart = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult,
        arith::SubIOp::create(rewriter, loc, row, first),
        arith::ConstantIndexOp::create(rewriter, loc, chunk));
    auto guard = scf::IfOp::create(rewriter, loc, inPart);
    rewriter.moveOpBefore(grid->tiled, guard.thenBlock()->getTerminator());
  }
  // The thread's tile does not change with the iteration.
  moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
  return success();
}

void ZeroGPUMapKernelsPass::mapSerial(RewriterBase &rewriter, Operation *op) {
  MLIRContext *ctx = &getContext();
  Location loc = op->getLoc();
  SmallVector<OpFoldResult> one = {rewriter.getIndexAttr(1)};
  rewriter.setInsertionPoint(op);
  auto block = scf::ForallOp::create(
      rewriter, loc, one, ValueRange{},
      rewriter.getArrayAttr(
          {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
  rewriter.setInsertionPointToStart(block.getBody());
  auto thread = scf::ForallOp::create(
      rewriter, loc, one, ValueRange{},
      rewriter.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
  op->moveBefore(thread.getBody()->getTerminator());
  // A device has no allocator worth calling per element: fixed-size
  // buffers become the thread's stack, allocated once.
  SmallVector<memref::AllocOp> allocs;
  op->walk([&](memref::AllocOp alloc) {
    if (alloc.getType().hasStaticShape() && alloc.getDynamicSizes().empty())
      allocs.push_back(alloc);
  });
  for (memref::AllocOp alloc : allocs) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.setInsertionPointToStart(thread.getBody());
    rewriter.replaceOpWithNewOp<memref::AllocaOp>(alloc, alloc.getType(),
                                                  alloc.getAlignmentAttr());
  }
}

/// Each fill of `fills` becomes a fill of the one output of `tiled` (an
/// op on one thread's tile) that views the same buffer: the thread
/// initializes the elements it then computes.
LogicalResult initializeInThreads(RewriterBase &rewriter,
                                  ArrayRef<linalg::FillOp> fills,
                                  Operation *tiled) {
  auto op = cast<linalg::LinalgOp>(tiled);
  for (linalg::FillOp fill : fills) {
    Value root = zero::rootBuffer(fill.getDpsInitOperand(0)->get());
    auto inits =
        llvm::make_filter_range(op.getDpsInitsMutable(), [&](OpOperand &init) {
          return zero::rootBuffer(init.get()) == root;
        });
    if (std::distance(inits.begin(), inits.end()) != 1)
      return fill.emitError("cannot find the output it initializes in ")
             << op->getName();
    rewriter.setInsertionPoint(op);
    linalg::FillOp::create(rewriter, fill.getLoc(), fill.getInputs(),
                           ValueRange{inits.begin()->get()});
    rewriter.eraseOp(fill);
  }
  return success();
}

/// `op`'s operand `v` on one thread of a row group: row `coords` of the
/// row loops, and lane `lane`'s iterations of loop `laneLoop` (every
/// kRowLanes-th from `lane`, from iteration `lo`, `count` of them; all of
/// them when `count` is negative); other dimensions whole.
Value rowSlice(RewriterBase &rewriter, Location loc, linalg::LinalgOp op,
               OpOperand &operand, ArrayRef<Value> coords,
               std::optional<unsigned> laneLoop, Value lane, int64_t lo = 0,
               int64_t count = -1) {
  auto type = cast<MemRefType>(operand.get().getType());
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (auto [k, e] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    unsigned d = dim ? dim.getPosition() : ~0u;
    if (dim && d < coords.size()) {
      offsets.push_back(coords[d]);
      sizes.push_back(rewriter.getIndexAttr(1));
      strides.push_back(rewriter.getIndexAttr(1));
    } else if (dim && laneLoop && d == *laneLoop) {
      offsets.push_back(
          lo == 0 ? lane
                  : arith::AddIOp::create(
                        rewriter, loc, lane,
                        arith::ConstantIndexOp::create(rewriter, loc, lo))
                        .getResult());
      sizes.push_back(rewriter.getIndexAttr(
          count >= 0 ? count : type.getDimSize(k) / zero::cuda::kRowLanes));
      strides.push_back(rewriter.getIndexAttr(zero::cuda::kRowLanes));
    } else {
      offsets.push_back(rewriter.getIndexAttr(0));
      sizes.push_back(rewriter.getIndexAttr(type.getDimSize(k)));
      strides.push_back(rewriter.getIndexAttr(1));
    }
  }
  return memref::SubViewOp::create(rewriter, loc, operand.get(), offsets, sizes,
                                   strides);
}

/// A row group as one block forall over its rows, `rowsPerBlock` at a
/// time, holding a thread forall per op (with its fill) in order: y a row
/// of the block, x the row's lanes (`rowLane`; one where the op has no
/// lane loop). A thread computes the op on its row and its lane's
/// iterations of the lane loop, in the op's loop order; a block's rows
/// depend on no other block's (the group's verifier and
/// zero-gpu-row-groups), and the thread foralls run one after another,
/// a barrier between each two on a GPU, in order on a CPU.
LogicalResult ZeroGPUMapKernelsPass::mapRowGroup(RewriterBase &rewriter,
                                                 zero::RowGroupOp group) {
  MLIRContext *ctx = &getContext();
  Location loc = group.getLoc();
  int64_t rowDims = group.getRowDims();
  Block &body = group.getBody().front();
  if (body.empty()) {
    rewriter.eraseOp(group);
    return success();
  }
  SmallVector<int64_t> extents = group.getRowExtents();
  int64_t rows = group.getNumRows();
  int64_t perBlock = zero::cuda::rowsPerBlock(extents.back(), threadsPerBlock);
  // Ops with the fill that initializes each.
  SmallVector<std::pair<linalg::FillOp, linalg::LinalgOp>> units;
  for (Operation &op : body) {
    auto fill = dyn_cast<linalg::FillOp>(op);
    auto pending = units.empty() ? linalg::FillOp() : units.back().first;
    if (!fill && pending && !units.back().second &&
        zero::initializingFill(&op) == pending.getOperation()) {
      units.back().second = cast<linalg::LinalgOp>(op);
      continue;
    }
    if (fill)
      units.push_back({fill, nullptr});
    else
      units.push_back({nullptr, cast<linalg::LinalgOp>(op)});
  }

  rewriter.setInsertionPoint(group);
  auto blocks = scf::ForallOp::create(
      rewriter, loc, {rewriter.getIndexAttr(rows / perBlock)}, ValueRange{},
      rewriter.getArrayAttr(
          {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX)}));
  for (auto [fill, op] : units) {
    // A fill alone is an op of its own.
    linalg::LinalgOp computed = op ? op : cast<linalg::LinalgOp>(*fill);
    std::optional<unsigned> laneLoop = zero::cuda::rowLane(computed, rowDims);
    int64_t lanes = laneLoop ? zero::cuda::kRowLanes : 1;
    rewriter.setInsertionPoint(blocks.getBody()->getTerminator());
    auto threads = scf::ForallOp::create(
        rewriter, loc,
        {rewriter.getIndexAttr(perBlock), rewriter.getIndexAttr(lanes)},
        ValueRange{},
        rewriter.getArrayAttr(
            {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimY),
             gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
    rewriter.setInsertionPoint(threads.getBody()->getTerminator());
    Value row = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(
            rewriter, loc, blocks.getInductionVar(0),
            arith::ConstantIndexOp::create(rewriter, loc, perBlock)),
        threads.getInductionVar(0));
    // Row-major: the innermost row loop fastest.
    SmallVector<Value> coords(rowDims);
    for (int64_t d = rowDims - 1; d >= 0; --d) {
      Value extent = arith::ConstantIndexOp::create(rewriter, loc, extents[d]);
      coords[d] =
          d == 0
              ? row
              : arith::RemUIOp::create(rewriter, loc, row, extent).getResult();
      if (d != 0)
        row = arith::DivUIOp::create(rewriter, loc, row, extent);
    }
    Value lane = threads.getInductionVar(1);
    // The op on the thread's row and lane, over `count` of the lane's
    // iterations from column `lo` (all: count < 0).
    auto tile = [&](int64_t lo, int64_t count) {
      SmallVector<Value> operands;
      for (OpOperand &operand : computed->getOpOperands())
        operands.push_back(isa<MemRefType>(operand.get().getType())
                               ? rowSlice(rewriter, loc, computed, operand,
                                          coords, laneLoop, lane, lo, count)
                               : operand.get());
      Operation *tiled = rewriter.clone(*computed);
      tiled->setOperands(operands);
      tiled->removeAttr(zero::kWrittenRegionAttr);
      return tiled;
    };
    std::optional<zero::WrittenRegion> region =
        fill ? std::nullopt : zero::cuda::rowGroupRegion(computed, rowDims);
    if (!region) {
      Operation *tiled = tile(0, -1);
      rewriter.eraseOp(computed);
      if (op && fill && failed(initializeInThreads(rewriter, {fill}, tiled)))
        return failure();
      continue;
    }
    // Only the columns some use reads, by the run the row lies in: a chain
    // of conditions on the row, each run's lane slice static. A row's lanes
    // are one warp: it takes one branch.
    ++partial;
    Value r = coords[computed.getNumLoops() - 2];
    for (auto [k, run] : llvm::enumerate(region->runs)) {
      scf::IfOp branch;
      if (k + 1 < region->runs.size()) {
        Value inRun = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::ult, r,
            arith::ConstantIndexOp::create(rewriter, loc, run.end));
        branch = scf::IfOp::create(rewriter, loc, inRun,
                                   /*withElseRegion=*/true);
        rewriter.setInsertionPoint(branch.thenBlock()->getTerminator());
      }
      if (run.hi > run.lo)
        tile(run.lo, (run.hi - run.lo) / zero::cuda::kRowLanes);
      // The later runs in the other branch.
      if (branch)
        rewriter.setInsertionPoint(branch.elseBlock()->getTerminator());
    }
    rewriter.eraseOp(computed);
  }
  rewriter.eraseOp(group);
  return success();
}

/// `linear` as indices into `counts`, the loop mapped to x fastest, then y,
/// then z (so a warp's threads keep the lanes they had).
SmallVector<Value> delinearize(RewriterBase &rewriter, Location loc,
                               Value linear, ArrayRef<int64_t> counts,
                               ArrayRef<unsigned> ids) {
  SmallVector<unsigned> order(counts.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order,
                    [&](unsigned a, unsigned b) { return ids[a] < ids[b]; });
  SmallVector<Value> out(counts.size());
  for (auto [i, d] : llvm::enumerate(order)) {
    Value count = arith::ConstantIndexOp::create(rewriter, loc, counts[d]);
    bool last = i + 1 == order.size();
    out[d] =
        last ? linear
             : arith::RemUIOp::create(rewriter, loc, linear, count).getResult();
    if (!last)
      linear = arith::DivUIOp::create(rewriter, loc, linear, count);
  }
  return out;
}

/// The block foralls of a launch group's kernel as one launch: a 1-d grid
/// of all their blocks end to end, blocks of the most threads any has. A
/// balanced tree of comparisons on the block id picks the op; its block
/// and thread indices are the linear ids delinearized (x fastest), threads
/// past the op's count idle. Each op keeps its blocks, threads and order of
/// work. False when a grid is not static (the launches stay apart).
bool mergeGrids(RewriterBase &rewriter, func::FuncOp kernel) {
  struct Part {
    scf::ForallOp blocks, threads;
    SmallVector<int64_t> blockCounts, threadCounts;
    SmallVector<unsigned> blockIds, threadIds;
    int64_t numBlocks = 1, numThreads = 1;
  };
  SmallVector<Part, 4> parts;
  for (auto blocks : kernel.getBody().getOps<scf::ForallOp>()) {
    Part p;
    p.blocks = blocks;
    p.threads = zero::cuda::threadForall(blocks);
    if (!p.threads || !p.threads.isNormalized())
      return false;
    FailureOr<SmallVector<unsigned>> blockIds =
        zero::cuda::mappedIds(blocks, /*threads=*/false);
    FailureOr<SmallVector<unsigned>> threadIds =
        zero::cuda::mappedIds(p.threads, /*threads=*/true);
    if (failed(blockIds) || failed(threadIds))
      return false;
    p.blockIds = *blockIds;
    p.threadIds = *threadIds;
    for (auto [l, u, s] :
         llvm::zip(blocks.getMixedLowerBound(), blocks.getMixedUpperBound(),
                   blocks.getMixedStep())) {
      std::optional<int64_t> lc = getConstantIntValue(l),
                             uc = getConstantIntValue(u),
                             sc = getConstantIntValue(s);
      if (!lc || !uc || !sc)
        return false;
      p.blockCounts.push_back(llvm::divideCeil(*uc - *lc, *sc));
      p.numBlocks *= p.blockCounts.back();
    }
    for (OpFoldResult u : p.threads.getMixedUpperBound()) {
      std::optional<int64_t> uc = getConstantIntValue(u);
      if (!uc)
        return false;
      p.threadCounts.push_back(*uc);
      p.numThreads *= *uc;
    }
    parts.push_back(std::move(p));
  }
  if (parts.size() < 2)
    return false;
  MLIRContext *ctx = rewriter.getContext();
  Location loc = parts.front().blocks.getLoc();
  SmallVector<int64_t> offsets = {0};
  int64_t maxThreads = 0;
  for (const Part &p : parts) {
    offsets.push_back(offsets.back() + p.numBlocks);
    maxThreads = std::max(maxThreads, p.numThreads);
  }
  rewriter.setInsertionPointAfter(parts.back().blocks);
  auto grid = scf::ForallOp::create(
      rewriter, loc, {rewriter.getIndexAttr(offsets.back())}, ValueRange{},
      rewriter.getArrayAttr(
          {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX)}));
  rewriter.setInsertionPointToStart(grid.getBody());
  auto lanes = scf::ForallOp::create(
      rewriter, loc, {rewriter.getIndexAttr(maxThreads)}, ValueRange{},
      rewriter.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
  Value bid = grid.getInductionVar(0), tid = lanes.getInductionVar(0);

  auto emitPart = [&](Part &p, int64_t offset, Operation *before) {
    rewriter.setInsertionPoint(before);
    Value local = arith::SubIOp::create(
        rewriter, loc, bid,
        arith::ConstantIndexOp::create(rewriter, loc, offset));
    SmallVector<Value> idx =
        delinearize(rewriter, loc, local, p.blockCounts, p.blockIds);
    SmallVector<Value> ivs;
    SmallVector<OpFoldResult> lbs = p.blocks.getMixedLowerBound(),
                              steps = p.blocks.getMixedStep();
    for (auto [i, l, s] : llvm::enumerate(lbs, steps)) {
      Value scaled = arith::MulIOp::create(
          rewriter, loc, idx[i],
          getValueOrCreateConstantIndexOp(rewriter, loc, s));
      ivs.push_back(arith::AddIOp::create(
          rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, l),
          scaled));
    }
    rewriter.eraseOp(p.blocks.getBody()->getTerminator());
    rewriter.inlineBlockBefore(p.blocks.getBody(), before, ivs);
    rewriter.eraseOp(p.blocks);
    Operation *at = p.threads;
    rewriter.setInsertionPoint(at);
    if (p.numThreads < maxThreads) {
      Value active = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::ult, tid,
          arith::ConstantIndexOp::create(rewriter, loc, p.numThreads));
      auto guard = scf::IfOp::create(rewriter, loc, active);
      rewriter.moveOpBefore(p.threads, guard.thenBlock()->getTerminator());
      rewriter.setInsertionPoint(p.threads);
    }
    SmallVector<Value> tids =
        delinearize(rewriter, loc, tid, p.threadCounts, p.threadIds);
    rewriter.eraseOp(p.threads.getBody()->getTerminator());
    rewriter.inlineBlockBefore(p.threads.getBody(), p.threads, tids);
    rewriter.eraseOp(p.threads);
  };
  std::function<void(unsigned, unsigned, Operation *)> tree =
      [&](unsigned lo, unsigned hi, Operation *before) {
        if (hi - lo == 1)
          return emitPart(parts[lo], offsets[lo], before);
        unsigned mid = (lo + hi) / 2;
        rewriter.setInsertionPoint(before);
        Value low = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::ult, bid,
            arith::ConstantIndexOp::create(rewriter, loc, offsets[mid]));
        auto branch = scf::IfOp::create(rewriter, loc, low, /*withElse=*/true);
        tree(lo, mid, branch.thenBlock()->getTerminator());
        tree(mid, hi, branch.elseBlock()->getTerminator());
      };
  tree(0, parts.size(), lanes.getBody()->getTerminator());
  return true;
}

void ZeroGPUMapKernelsPass::runOnOperation() {
  if (threadsPerBlock < 32 || threadsPerBlock > 1024 ||
      !llvm::isPowerOf2_64(threadsPerBlock)) {
    getOperation().emitError()
        << "threads-per-block is " << static_cast<int64_t>(threadsPerBlock)
        << "; give a power of two from 32 to 1024";
    return signalPassFailure();
  }
  IRRewriter rewriter(&getContext());
  SymbolTableCollection symbols;
  SymbolUserMap users(symbols, getOperation());
  int64_t launches = 0, rowGroups = 0;
  for (auto kernel : getOperation().getOps<func::FuncOp>()) {
    if (kernel.isExternal() || !kernel->hasAttr(zero::kKernelAttr))
      continue;
    // A launch group's ops are mapped as the kernel's own, then merged.
    bool group = false;
    for (auto g : llvm::make_early_inc_range(
             kernel.getBody().getOps<zero::LaunchGroupOp>())) {
      Block &body = g.getBody().front();
      rewriter.inlineBlockBefore(&body, g);
      rewriter.eraseOp(g);
      group = true;
    }
    int64_t before = launches;
    // Row groups first: unit dimensions dropped would renumber their rows.
    for (auto g : llvm::make_early_inc_range(
             kernel.getBody().getOps<zero::RowGroupOp>())) {
      if (failed(mapRowGroup(rewriter, g)))
        return signalPassFailure();
      ++launches;
      ++rowGroups;
    }
    SmallVector<bool> noAlias = zero::noAliasArguments(kernel, users);
    llvm::SmallPtrSet<Operation *, 4> fusedFills;
    if (failed(prepare(kernel, noAlias, fusedFills)))
      return signalPassFailure();
    // Fills that the next op's threads run (prepare's fusedFills).
    SmallVector<linalg::FillOp> pending;
    for (Operation &op :
         llvm::make_early_inc_range(kernel.getBody().getOps())) {
      if (fusedFills.contains(&op)) {
        pending.push_back(cast<linalg::FillOp>(op));
        continue;
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && linalgOp.getNumParallelLoops() > 0) {
        FailureOr<Grid> grid = mapToGrid(rewriter, linalgOp);
        if (failed(grid) ||
            failed(initializeInThreads(rewriter, pending, grid->tiled)))
          return signalPassFailure();
        pending.clear();
        ++launches;
        continue;
      }
      if (linalgOp) {
        mapSerial(rewriter, &op);
        for (linalg::FillOp fill : pending)
          rewriter.moveOpBefore(fill, &op);
        pending.clear();
        ++launches;
        continue;
      }
      if (!pending.empty() && op.getNumRegions() > 0) {
        pending.front().emitError("a fused fill is not followed by its op");
        return signalPassFailure();
      }
      auto loop = dyn_cast<scf::ForOp>(op);
      if (linalg::LinalgOp inner =
              loop ? distributable(loop, noAlias) : nullptr) {
        if (failed(mapLoop(rewriter, loop, inner)))
          return signalPassFailure();
        ++launches;
        continue;
      }
      if (op.getNumRegions() > 0 && !isa<scf::ForallOp>(op)) {
        mapSerial(rewriter, &op);
        ++launches;
      }
    }
    if (!pending.empty()) {
      pending.front().emitError("a fused fill is not followed by its op");
      return signalPassFailure();
    }
    if (group && mergeGrids(rewriter, kernel))
      launches = before + 1;
  }
  // Next to zero-form-kernels' counts, for --time-report.
  zero::setKernelCounts(getOperation(), {{"gpu_launches", launches},
                                         {"gpu_row_groups", rowGroups},
                                         {"gpu_coarsened", coarsened},
                                         {"gpu_partial_writes", partial}});
}

} // namespace
