//===- FuseElementwise.cpp - fusion that keeps GEMMs intact ----*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUFUSEELEMENTWISE
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

/// Contractions and convolutions stay named ops for the BLAS lowering.
static bool isGemmLike(Operation *op) {
  auto l = dyn_cast_if_present<linalg::LinalgOp>(op);
  return l && (linalg::isaContractionOpInterface(l) ||
               linalg::isaConvolutionOpInterface(l));
}

/// What the BLAS lowering takes: a GEMM (`zero::getGemmLoops`) or a
/// convolution. Other contractions, such as a row's dot product (the
/// softmax backward's sum of dP x P), run as loops.
static bool isBlasOp(Operation *op) {
  auto l = dyn_cast_if_present<linalg::LinalgOp>(op);
  return l && (linalg::isaConvolutionOpInterface(l) ||
               zero::getGemmLoops(l).has_value());
}

/// A reduction reads its input through an expand_shape that adds a unit
/// dimension (tosa.reduce_max's kept axis, folded into the reduction);
/// when the expand only adds unit dimensions, its single user, a generic,
/// reads the source instead, so that the source's producer is that
/// generic's own producer.
static void readThroughUnitExpands(linalg::GenericOp producer) {
  for (Operation *user : llvm::make_early_inc_range(producer->getUsers())) {
    auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
    if (!expand || !expand->hasOneUse())
      continue;
    OpOperand &operand = *expand->use_begin();
    auto consumer = dyn_cast<linalg::GenericOp>(operand.getOwner());
    if (!consumer || !consumer.isDpsInput(&operand))
      continue;
    std::optional<AffineMap> read = zero::readThroughUnitReshape(
        expand, consumer.getMatchingIndexingMap(&operand));
    if (!read)
      continue;
    SmallVector<AffineMap> maps = consumer.getIndexingMapsArray();
    maps[operand.getOperandNumber()] = *read;
    // Each loop must still take its size from some operand.
    if (!inversePermutation(concatAffineMaps(maps, read->getContext())))
      continue;
    consumer.setIndexingMapsAttr(
        Builder(consumer.getContext()).getAffineMapArrayAttr(maps));
    operand.set(expand.getSrc());
    expand->erase();
  }
}

/// The element width `producer` reads `in` at once 16-bit GEMMs write
/// their rounded sums (`zero-round-matmul-results`, later): a bf16 GEMM's
/// f32 product that every user, this one included, only rounds is read as
/// bf16 (an MLP's bias add before its GELU).
static unsigned readWidth(OpOperand *in) {
  Value v = in->get();
  unsigned width = getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth();
  while (isa_and_present<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  auto gemm = v.getDefiningOp<linalg::LinalgOp>();
  if (!gemm || !zero::getRoundedUses(gemm))
    return width;
  return getElementTypeOrSelf(gemm->getOperand(0).getType())
      .getIntOrFloatBitWidth();
}

/// A producer worth computing again in each of its users' loops: one
/// elementwise result with a short body, reading no
/// more bytes at full size than it writes, so that each user reads what it
/// read before (a softmax's masked scores and exponentials, a
/// normalization's centred input, a bias added to a GEMM's product) and
/// the result is never written.
static bool recomputable(linalg::GenericOp producer) {
  constexpr unsigned kMaxBody = 16;
  if (producer->getNumResults() != 1 || !producer.hasPureTensorSemantics() ||
      !llvm::all_of(producer.getIndexingMapsArray(),
                    [](AffineMap m) {
                      return m.isProjectedPermutation(
                          /*allowZeroInResults=*/true);
                    }) ||
      producer.getNumLoops() != producer.getNumParallelLoops() ||
      isGemmLike(producer) ||
      producer.getBody()->getOperations().size() > kMaxBody)
    return false;
  auto bits = [](Value v) -> std::optional<int64_t> {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || !t.hasStaticShape())
      return std::nullopt;
    return t.getNumElements() * int64_t(t.getElementTypeBitWidth());
  };
  // A 16-bit result too: the body's ops are 16-bit ops, each rounded in a
  // user's loop as it is where the result is stored.
  Value result = producer->getResult(0);
  std::optional<int64_t> written = bits(result);
  if (!written)
    return false;
  int64_t read = 0;
  for (OpOperand *in : producer.getDpsInputOperands()) {
    if (!producer.getMatchingIndexingMap(in).isPermutation())
      continue;
    auto t = dyn_cast<RankedTensorType>(in->get().getType());
    if (!t || !t.hasStaticShape())
      return false;
    read += t.getNumElements() * int64_t(readWidth(in));
  }
  return read <= *written;
}

/// Whether every user of `producer` (at most 4) is a generic other than a
/// GEMM that can take it into its loop.
static bool usersTakeIn(linalg::GenericOp producer) {
  constexpr unsigned kMaxUsers = 4;
  unsigned users = 0;
  for (OpOperand &use : producer->getResult(0).getUses()) {
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (++users > kMaxUsers || !consumer || isBlasOp(consumer) ||
        !linalg::areElementwiseOpsFusable(&use))
      return false;
  }
  return true;
}

/// Whether `operand` is a reduction's result that an expand by unit
/// dimensions alone reshapes (tosa's kept axis).
static bool addsUnitLoopToReduction(OpOperand *operand) {
  auto expand = dyn_cast<tensor::ExpandShapeOp>(operand->getOwner());
  auto reduction = operand->get().getDefiningOp<linalg::LinalgOp>();
  if (!expand || !reduction || reduction.getNumReductionLoops() == 0)
    return false;
  ArrayRef<int64_t> shape = expand.getResultType().getShape();
  for (const ReassociationIndices &group : expand.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) { return shape[d] != 1; }) > 1)
      return false;
  return true;
}

/// A recomputable op whose one result only a collapse_shape reads, the
/// collapse dropping unit dimensions alone and its result read by several
/// ops (a layer norm's backward writes [1, B, 1, T, D, 1] for its two
/// users' [B, T, D]), as the op over the loops it keeps, writing the
/// collapsed shape: its users then read it directly and can compute it
/// again each. The new op, or null.
static linalg::GenericOp dropCollapsedUnitLoops(linalg::GenericOp op) {
  if (!op->hasOneUse() || op->getNumResults() != 1 ||
      op.getNumDpsInits() != 1 || op.hasIndexSemantics() ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)) ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return {};
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(*op->user_begin());
  if (!collapse || collapse->hasOneUse() ||
      !collapse.getResultType().hasStaticShape())
    return {};
  ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
  // Each group keeps one loop: its only dimension longer than 1, or its
  // first when all are 1.
  SmallVector<bool> dropped(shape.size(), true);
  for (const ReassociationIndices &group : collapse.getReassociationIndices()) {
    auto longer = llvm::make_filter_range(
        group, [&](int64_t d) { return shape[d] != 1; });
    if (llvm::range_size(longer) > 1)
      return {};
    dropped[longer.empty() ? group.front() : *longer.begin()] = false;
  }
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> loops;
  unsigned kept = 0;
  for (bool drop : dropped)
    loops.push_back(drop ? getAffineConstantExpr(0, ctx)
                         : getAffineDimExpr(kept++, ctx));
  // Inputs widened by unit dimensions for the wide op are read whole.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    AffineMap map =
        op.getMatchingIndexingMap(in).replaceDimsAndSymbols(loops, {}, kept, 0);
    if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>())
      if (std::optional<AffineMap> read =
              zero::readThroughUnitReshape(expand, map)) {
        v = expand.getSrc();
        map = *read;
      }
    inputs.push_back(v);
    maps.push_back(map);
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(kept, ctx));
  IRRewriter rewriter(ctx);
  rewriter.setInsertionPoint(collapse);
  RankedTensorType type = collapse.getResultType();
  Value init = tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                       type.getElementType());
  auto narrow = linalg::GenericOp::create(
      rewriter, op.getLoc(), type, inputs, init, maps,
      SmallVector<utils::IteratorType>(kept, utils::IteratorType::parallel));
  rewriter.cloneRegionBefore(op.getRegion(), narrow.getRegion(),
                             narrow.getRegion().end());
  rewriter.replaceOp(collapse, narrow->getResults());
  rewriter.eraseOp(op);
  return narrow;
}

namespace {
/// A collapse then an expand of an elementwise op's result (tosa's
/// [1, B*T, N] -> [B*T, N] -> [B, T, N] after a batch-1 GEMM) as the op on
/// its operands reshaped the same way: with identity maps the op commutes
/// with any reshape, and the op that reads the result (a 16-bit GEMM's
/// rounding read by its bias add) can then take it in. Upstream's
/// expansion patterns fold neither reshape: the pair is no expand alone.
/// Only an op that reads no other elementwise op's result moves.
struct ReshapeElementwiseProducer : OpRewritePattern<tensor::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExpandShapeOp expand,
                                PatternRewriter &rewriter) const override {
    auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
    auto op = collapse ? collapse.getSrc().getDefiningOp<linalg::GenericOp>()
                       : linalg::GenericOp();
    // The moved op writes a new tensor: its body must not read the old.
    if (!op || !collapse->hasOneUse() || !op->hasOneUse() ||
        op.getNumDpsInits() != 1 || op.hasIndexSemantics() ||
        op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)) ||
        op.getNumReductionLoops() != 0 ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) ||
        !expand.getResultType().hasStaticShape())
      return failure();
    // Reshaped operands would keep it from fusing with its own producers.
    if (llvm::any_of(op.getDpsInputs(), [](Value in) {
          return isa_and_present<linalg::GenericOp>(in.getDefiningOp());
        }))
      return failure();
    Location loc = expand.getLoc();
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    auto reshape = [&](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      Value flat = tensor::CollapseShapeOp::create(
          rewriter, loc, v, collapse.getReassociationIndices());
      return tensor::ExpandShapeOp::create(rewriter, loc, t.clone(shape), flat,
                                           expand.getReassociationIndices())
          .getResult();
    };
    SmallVector<Value> inputs;
    for (Value in : op.getDpsInputs())
      inputs.push_back(reshape(in));
    Value init = tensor::EmptyOp::create(
        rewriter, loc, shape,
        getElementTypeOrSelf(op.getDpsInits()[0].getType()));
    unsigned rank = shape.size();
    SmallVector<AffineMap> maps(inputs.size() + 1,
                                rewriter.getMultiDimIdentityMap(rank));
    auto moved = linalg::GenericOp::create(
        rewriter, loc, init.getType(), inputs, init, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
    rewriter.cloneRegionBefore(op.getRegion(), moved.getRegion(),
                               moved.getRegion().end());
    rewriter.replaceOp(expand, moved->getResults());
    return success();
  }
};

struct ZeroCPUFuseElementwisePass
    : zero::cpu::impl::ZeroCPUFuseElementwiseBase<ZeroCPUFuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    bool recompute = recomputeShared;
    linalg::ControlFusionFn control = [recompute](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      // Where producers are computed again in their users (the GPU's
      // kernels), only what BLAS takes is kept whole; the CPU keeps every
      // contraction whole.
      Operation *consumer = operand->getOwner();
      if (!producer || !producer->hasOneUse() || isGemmLike(producer) ||
          (recompute ? isBlasOp(consumer) : isGemmLike(consumer)))
        return false;
      // A reduction that took its kept axis (an expand by unit dimensions)
      // would have a loop only its output indexes, and upstream fuses no
      // producer into such an op: the producers it would compute again
      // (the softmax backward's widened probabilities) stay written.
      return !(recompute && addsUnitLoopToReduction(operand));
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    patterns.add<ReshapeElementwiseProducer>(ctx);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Reductions as generics, so that producers fuse into them (upstream
    // fuses into generics only).
    if (recomputeShared) {
      SmallVector<linalg::ReduceOp> reduces;
      getOperation()->walk([&](linalg::ReduceOp r) { reduces.push_back(r); });
      IRRewriter rewriter(ctx);
      for (linalg::ReduceOp r : reduces) {
        rewriter.setInsertionPoint(r);
        (void)linalg::generalizeNamedOp(rewriter, r);
      }
    }
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    // The driver erases ops fusion leaves dead; its region simplification
    // (liveness over the whole step, every iteration) found nothing more
    // and took 60% of the pass, superlinearly in depth.
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    // Fusion makes new producers with several users (a fused select and
    // exponential feed both a sum and a product): a few rounds of
    // recomputing such producers in each user and fusing again.
    constexpr int kRounds = 4;
    RewritePatternSet gatherPatterns(ctx);
    zero::populateGatherOneHotReductionsPatterns(gatherPatterns);
    FrozenRewritePatternSet gathers(std::move(gatherPatterns));
    for (int round = 0;; ++round) {
      if (failed(applyPatternsGreedily(getOperation(), frozen, config)))
        return signalPassFailure();
      // One-hot sums as gathers once fused: the one-hot tensors they summed
      // are then left to fuse into their other users (the loss's gradient).
      bool gathered = false;
      if (round == 0) {
        if (failed(applyPatternsGreedily(getOperation(), gathers, config,
                                         &gathered)))
          return signalPassFailure();
        // A one-hot tensor the gradient reads with its unit dimensions.
        if (gathered && recompute) {
          SmallVector<linalg::GenericOp> single;
          getOperation()->walk([&](linalg::GenericOp op) {
            if (op->hasOneUse())
              single.push_back(op);
          });
          for (linalg::GenericOp op : single)
            readThroughUnitExpands(op);
        }
        if (gathered &&
            failed(applyPatternsGreedily(getOperation(), frozen, config)))
          return signalPassFailure();
      }
      if (!recomputeShared || round == kRounds)
        return;
      // Shared producers, and single-use ones a unit collapse may hide.
      SmallVector<linalg::GenericOp> shared, producers, single;
      getOperation()->walk([&](linalg::GenericOp op) {
        if (op->use_empty() || !recomputable(op))
          return;
        (op->hasOneUse() ? single : shared).push_back(op);
      });
      for (linalg::GenericOp op : single)
        if (linalg::GenericOp narrow = dropCollapsedUnitLoops(op))
          shared.push_back(narrow);
      for (linalg::GenericOp op : shared) {
        readThroughUnitExpands(op);
        if (usersTakeIn(op))
          producers.push_back(op);
      }
      if (producers.empty())
        return;
      for (linalg::GenericOp producer : producers) {
        SmallVector<OpOperand *> uses = llvm::map_to_vector(
            producer->getResult(0).getUses(), [](OpOperand &u) { return &u; });
        OpBuilder b(producer);
        b.setInsertionPointAfter(producer);
        for (OpOperand *use : llvm::drop_begin(uses))
          use->set(b.clone(*producer)->getResult(0));
      }
    }
  }
};
} // namespace
