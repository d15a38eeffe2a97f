//===- FoldTransposesIntoMatmuls.cpp - transposed GEMM operands -*- C++ -*-===//
//
// A materialized transpose costs a strided pass over its operand and a
// buffer, where a GEMM can read the operand as stored. Here the transpose
// moves into the matmul's indexing map; the BLAS call then gets the
// transposed view.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROFOLDTRANSPOSESINTOMATMULS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// Whether visiting dimensions in `order` reads those of `sizes` larger
/// than 1 in storage order: a permutation that is only a reshape.
bool isReshape(ArrayRef<int64_t> order, ArrayRef<int64_t> sizes) {
  int64_t last = -1;
  for (int64_t d : order) {
    if (sizes[d] == 1)
      continue;
    if (d < last)
      return false;
    last = d;
  }
  return true;
}

/// The index of dimension `d` of a rank-`rank` shape once its innermost
/// pair is swapped.
int64_t swapInnermostIndex(int64_t d, int64_t rank) {
  return d == rank - 1 ? rank - 2 : d == rank - 2 ? rank - 1 : d;
}

/// Whether the transpose by `perm` of a tensor of shape `inShape` is a
/// reshape once the innermost pair is swapped: of the result when
/// `swapResult` (the operand case: the result, swapped, is the input
/// reshaped; `[1024, 1, 256] -> [1, 256, 1024]` as imported graphs write
/// it), else of the input (the result case: the result is the swapped
/// input reshaped, `[1, 4, 6] -> [6, 1, 4]`).
bool swapsInnermostPair(linalg::TransposeOp transpose, bool swapResult) {
  ArrayRef<int64_t> perm = transpose.getPermutation();
  int64_t rank = perm.size();
  auto inType = dyn_cast<RankedTensorType>(transpose.getInput().getType());
  if (rank < 2 || !inType || !inType.hasStaticShape())
    return false;
  SmallVector<int64_t> order, sizes(inType.getShape());
  for (int64_t d = 0; d < rank; ++d)
    order.push_back(swapResult ? perm[swapInnermostIndex(d, rank)]
                               : swapInnermostIndex(perm[d], rank));
  if (!swapResult)
    std::swap(sizes[rank - 2], sizes[rank - 1]);
  return isReshape(order, sizes);
}

/// `value` (static shape) as a tensor of `shape` with the same elements in
/// the same order: itself, or a collapse to 1-D and an expand (views once
/// bufferized).
Value reshapeTo(PatternRewriter &rewriter, Location loc, Value value,
                ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getShape() == shape)
    return value;
  SmallVector<ReassociationIndices> toFlat(1), fromFlat(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    toFlat[0].push_back(d);
  for (int64_t d = 0, e = shape.size(); d < e; ++d)
    fromFlat[0].push_back(d);
  Value flat = tensor::CollapseShapeOp::create(rewriter, loc, value, toFlat);
  return tensor::ExpandShapeOp::create(
             rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
             flat, fromFlat)
      .getResult();
}

/// `shape` with its innermost pair swapped.
SmallVector<int64_t> swapInnermost(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> swapped(shape);
  std::swap(swapped[swapped.size() - 2], swapped.back());
  return swapped;
}

/// The operand a matmul can read through a transposed map instead of the
/// result of `transpose`: its input, reshaped to the result's shape with
/// the innermost pair swapped.
FailureOr<Value> untransposed(PatternRewriter &rewriter,
                              linalg::TransposeOp transpose) {
  if (!swapsInnermostPair(transpose, /*swapResult=*/true))
    return failure();
  auto outType = cast<RankedTensorType>(transpose.getInit().getType());
  return reshapeTo(rewriter, transpose.getLoc(), transpose.getInput(),
                   swapInnermost(outType.getShape()));
}

template <typename MatmulOp>
struct FoldTransposedOperands : OpRewritePattern<MatmulOp> {
  using OpRewritePattern<MatmulOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs(op.getDpsInputs());
    bool folded = false;
    for (unsigned i = 0; i < 2; ++i) {
      auto transpose = inputs[i].template getDefiningOp<linalg::TransposeOp>();
      if (!transpose)
        continue;
      FailureOr<Value> operand = untransposed(rewriter, transpose);
      if (failed(operand))
        continue;
      maps[i] = zero::swapInnermostResults(maps[i]);
      inputs[i] = *operand;
      folded = true;
    }
    if (!folded)
      return failure();
    SmallVector<NamedAttribute> attrs(op->getDiscardableAttrs());
    if (Attribute cast = op->getAttr("cast"))
      attrs.push_back(rewriter.getNamedAttr("cast", cast));
    auto replacement = MatmulOp::create(rewriter, op.getLoc(),
                                        op->getResultTypes(), inputs,
                                        op.getDpsInits(), attrs);
    replacement.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    rewriter.replaceOp(op, replacement->getResults());
    return success();
  }
};

/// A fill of a fresh tensor of `shape` with the value that `init` is
/// filled with, or nothing when `init` is not a fill: a GEMM's zero start,
/// for a product computed in another layout.
FailureOr<Value> refill(PatternRewriter &rewriter, Value init,
                        ArrayRef<int64_t> shape) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return failure();
  Value empty = tensor::EmptyOp::create(rewriter, fill.getLoc(), shape,
                                        getElementTypeOrSelf(init.getType()));
  return linalg::FillOp::create(rewriter, fill.getLoc(), fill.getInputs(),
                                ValueRange{empty})
      .getResult(0);
}

/// transpose(A B) = B^T A^T: a matmul whose only use is such a transpose
/// computes the transposed product directly, into a fresh fill of the
/// transposed shape (the weight gradient, computed as dY^T X and stored
/// as the weight is).
template <typename MatmulOp>
struct FoldTransposedResult : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto op = transpose.getInput().getDefiningOp<MatmulOp>();
    if (!op || !op.hasPureTensorSemantics() || !op->hasOneUse() ||
        !swapsInnermostPair(transpose, /*swapResult=*/false))
      return failure();
    auto transposed = zero::getGemmTransposes(op);
    if (!transposed)
      return failure();
    auto cType = cast<RankedTensorType>(op->getResult(0).getType());
    FailureOr<Value> init =
        refill(rewriter, op.getDpsInits()[0], swapInnermost(cType.getShape()));
    if (failed(init))
      return failure();
    Location loc = op.getLoc();
    // B^T is the new A, A^T the new B.
    SmallVector<AffineMap> maps = zero::getGemmMaps(
        op, zero::GemmTransposes{!transposed->b, !transposed->a});
    SmallVector<NamedAttribute> attrs(op->getDiscardableAttrs());
    if (Attribute cast = op->getAttr("cast"))
      attrs.push_back(rewriter.getNamedAttr("cast", cast));
    SmallVector<Value> inputs(op.getDpsInputs());
    auto product = MatmulOp::create(rewriter, loc, TypeRange{init->getType()},
                                    ValueRange{inputs[1], inputs[0]},
                                    ValueRange{*init}, attrs);
    product.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    auto outType = cast<RankedTensorType>(transpose.getInit().getType());
    rewriter.replaceOp(transpose, reshapeTo(rewriter, loc,
                                            product->getResult(0),
                                            outType.getShape()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Permutations that touch batch dimensions: the GEMM becomes a
// `linalg.generic` multiply-add whose maps read the permuted operand or
// write the permuted result as stored (attention's head split and merge,
// `[B, T, H, d] <-> [B, H, T, d]`). Each operand's strides along the loops
// are what `zero-linalg-to-blas` passes; BLAS needs one of the two inner
// strides of each operand to be 1, so a permutation that would make a
// batch dimension innermost stays materialized.
//===----------------------------------------------------------------------===//

/// Whether `op` is a GEMM on float tensors, A and B of one type and C of
/// that type or a wider one (a 16-bit GEMM accumulating in f32), with no
/// other conversion in its body: what a multiply-add generic can replace.
std::optional<zero::GemmLoops> floatTensorGemm(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op->getAttr("cast") ||
      op.getNumDpsInputs() != 2)
    return std::nullopt;
  auto c = dyn_cast<FloatType>(getElementTypeOrSelf(op->getResult(0)));
  auto a = dyn_cast<FloatType>(getElementTypeOrSelf(op.getDpsInputs()[0]));
  if (!a || !c || getElementTypeOrSelf(op.getDpsInputs()[1]) != a ||
      getElementTypeOrSelf(op.getDpsInits()[0]) != c ||
      (a != c && !(a.getWidth() == 16 && c.isF32())))
    return std::nullopt;
  return zero::getGemmLoops(op);
}

/// `C += A * B` over `maps` and `iterators`, as a `linalg.generic`; 16-bit
/// A and B are widened to C's type exactly, as the named op does.
linalg::GenericOp buildGemm(PatternRewriter &rewriter, linalg::LinalgOp op,
                            Value a, Value b, Value init,
                            ArrayRef<AffineMap> maps,
                            ArrayRef<utils::IteratorType> iterators) {
  Type cType = getElementTypeOrSelf(init);
  auto generic = linalg::GenericOp::create(
      rewriter, op.getLoc(), TypeRange{init.getType()}, ValueRange{a, b},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        auto widen = [&](Value v) -> Value {
          return v.getType() == cType
                     ? v
                     : arith::ExtFOp::create(nb, loc, cType, v).getResult();
        };
        Value product =
            arith::MulFOp::create(nb, loc, widen(args[0]), widen(args[1]));
        Value sum = arith::AddFOp::create(nb, loc, args[2], product);
        linalg::YieldOp::create(nb, loc, sum);
      });
  for (NamedAttribute attr : op->getDiscardableAttrs())
    generic->setAttr(attr.getName(), attr.getValue());
  return generic;
}

/// The dimension position that the innermost result of `map` reads.
unsigned innermostDim(AffineMap map) {
  return cast<AffineDimExpr>(map.getResults().back()).getPosition();
}

/// A GEMM input produced by a transpose (of any permutation) reads the
/// transpose's input through the permuted map.
struct FoldPermutedOperand : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<zero::GemmLoops> loops = floatTensorGemm(op);
    if (!loops)
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs(op.getDpsInputs());
    bool folded = false;
    for (unsigned i = 0; i < 2; ++i) {
      auto transpose = inputs[i].getDefiningOp<linalg::TransposeOp>();
      if (!transpose)
        continue;
      // Result i of the transpose is dimension perm[i] of its input.
      ArrayRef<int64_t> perm = transpose.getPermutation();
      SmallVector<AffineExpr> results(perm.size());
      for (auto [i2, p] : llvm::enumerate(perm))
        results[p] = maps[i].getResult(i2);
      AffineMap map =
          AffineMap::get(maps[i].getNumDims(), 0, results, op->getContext());
      if (llvm::is_contained(loops->batch, innermostDim(map)))
        continue;
      maps[i] = map;
      inputs[i] = transpose.getInput();
      folded = true;
    }
    if (!folded)
      return failure();
    rewriter.replaceOp(op, buildGemm(rewriter, op, inputs[0], inputs[1],
                                     op.getDpsInits()[0], maps,
                                     op.getIteratorTypesArray()));
    return success();
  }
};

/// The map by which GEMM `op` writes its product permuted by `perm`, when
/// it can: a float GEMM whose product starts from a fill and whose new
/// innermost dimension is not a batch loop.
std::optional<AffineMap> permutedResultMap(linalg::LinalgOp op,
                                           ArrayRef<int64_t> perm) {
  std::optional<zero::GemmLoops> loops = floatTensorGemm(op);
  if (!loops || !op.getDpsInits()[0].getDefiningOp<linalg::FillOp>())
    return std::nullopt;
  // Result i of the transpose is result perm[i] of the product.
  AffineMap product = op.getIndexingMapsArray()[2];
  SmallVector<AffineExpr> results;
  for (int64_t p : perm)
    results.push_back(product.getResult(p));
  AffineMap map =
      AffineMap::get(product.getNumDims(), 0, results, op->getContext());
  if (llvm::is_contained(loops->batch, innermostDim(map)))
    return std::nullopt;
  return map;
}

/// The only use of a GEMM's product is a transpose, and the product starts
/// from a fill: the GEMM writes the transposed product in place, into a
/// fresh fill of the transposed shape.
struct FoldPermutedResult : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto op = transpose.getInput().getDefiningOp<linalg::LinalgOp>();
    if (!op || !op->hasOneUse())
      return failure();
    std::optional<AffineMap> map =
        permutedResultMap(op, transpose.getPermutation());
    if (!map)
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    auto outType = cast<RankedTensorType>(transpose.getInit().getType());
    FailureOr<Value> init =
        refill(rewriter, op.getDpsInits()[0], outType.getShape());
    if (failed(init))
      return failure();
    maps[2] = *map;
    SmallVector<Value> inputs(op.getDpsInputs());
    rewriter.replaceOp(transpose,
                       buildGemm(rewriter, op, inputs[0], inputs[1], *init,
                                 maps, op.getIteratorTypesArray()));
    return success();
  }
};

/// A transpose of a GEMM's product through one elementwise op (the
/// rounding of a 16-bit GEMM's f32 sums): the op runs on the transposed
/// product instead, so that `FoldPermutedResult` writes it transposed
/// (attention's heads merged back into the sequence, in bf16).
struct TransposeBeforeRounding : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto ew = transpose.getInput().getDefiningOp<linalg::GenericOp>();
    if (!ew || !ew->hasOneUse() || ew.getNumDpsInputs() != 1 ||
        ew.getNumDpsInits() != 1 || !ew.hasPureTensorSemantics() ||
        ew.hasIndexSemantics() ||
        ew.getNumLoops() != ew.getNumParallelLoops() ||
        !llvm::all_of(ew.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) ||
        ew.payloadUsesValueFromOperand(ew.getDpsInitOperand(0)))
      return failure();
    // Only where the GEMM then writes the product transposed: a transpose
    // moved onto the f32 product and left there would move twice the bytes.
    Value product = ew.getDpsInputs()[0];
    auto gemm = product.getDefiningOp<linalg::LinalgOp>();
    ArrayRef<int64_t> perm = transpose.getPermutation();
    if (!gemm || !product.hasOneUse() || !permutedResultMap(gemm, perm))
      return failure();
    Location loc = transpose.getLoc();
    auto productType = cast<RankedTensorType>(product.getType());
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(productType.getDimSize(p));
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape,
                                          productType.getElementType());
    Value moved =
        linalg::TransposeOp::create(rewriter, loc, product, empty, perm)
            ->getResult(0);
    unsigned rank = shape.size();
    SmallVector<AffineMap> maps(2, rewriter.getMultiDimIdentityMap(rank));
    auto rounded = linalg::GenericOp::create(
        rewriter, loc, TypeRange{transpose.getInit().getType()},
        ValueRange{moved}, ValueRange{transpose.getInit()}, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
    rewriter.cloneRegionBefore(ew.getRegion(), rounded.getRegion(),
                               rounded.getRegion().end());
    rewriter.replaceOp(transpose, rounded->getResults());
    rewriter.eraseOp(ew);
    return success();
  }
};

/// The reassociation `[[0, 1], [2], ..., [rank]]` of a rank-`rank + 1`
/// shape collapsed to rank `rank`.
bool isLeadingPairCollapse(ArrayRef<ReassociationIndices> groups) {
  if (groups.empty() || groups[0].size() != 2)
    return false;
  for (unsigned i = 1; i < groups.size(); ++i)
    if (groups[i].size() != 1)
      return false;
  return true;
}

/// A GEMM with one batch loop, leading in every operand, whose batch is a
/// pair of dimensions collapsed from a transposed operand, or expanded
/// again for a transpose of the product (heads split from and merged into
/// the sequence): the GEMM gets both batch loops, so that those transposes
/// fold into its maps.
struct SplitCollapsedBatch : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  /// The two sizes of the batch, when `op` is worth splitting.
  static std::optional<std::pair<int64_t, int64_t>>
  batchSplit(linalg::LinalgOp op) {
    for (Value input : op.getDpsInputs()) {
      auto collapse = input.getDefiningOp<tensor::CollapseShapeOp>();
      if (collapse &&
          isLeadingPairCollapse(collapse.getReassociationIndices()) &&
          collapse.getSrc().getDefiningOp<linalg::TransposeOp>()) {
        ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
        return std::make_pair(shape[0], shape[1]);
      }
    }
    for (Operation *user : op->getResult(0).getUsers()) {
      auto expand = dyn_cast<tensor::ExpandShapeOp>(user);
      if (expand && isLeadingPairCollapse(expand.getReassociationIndices()) &&
          llvm::any_of(expand->getUsers(),
                       llvm::IsaPred<linalg::TransposeOp>)) {
        ArrayRef<int64_t> shape = expand.getResultType().getShape();
        return std::make_pair(shape[0], shape[1]);
      }
    }
    return std::nullopt;
  }

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<zero::GemmLoops> loops = floatTensorGemm(op);
    if (!loops || loops->batch.size() != 1)
      return failure();
    unsigned batch = loops->batch.front();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    if (llvm::any_of(maps, [&](AffineMap map) {
          return map.getResult(0) != rewriter.getAffineDimExpr(batch);
        }))
      return failure();
    std::optional<std::pair<int64_t, int64_t>> split = batchSplit(op);
    if (!split)
      return failure();

    // Loop `batch` becomes loops `batch` and `batch + 1`; later loops move
    // up by one.
    unsigned numLoops = op.getNumLoops() + 1;
    auto shifted = [&](AffineExpr e) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      return rewriter.getAffineDimExpr(d > batch ? d + 1 : d);
    };
    SmallVector<AffineMap> newMaps;
    for (AffineMap map : maps) {
      SmallVector<AffineExpr> results{rewriter.getAffineDimExpr(batch),
                                      rewriter.getAffineDimExpr(batch + 1)};
      for (AffineExpr e : map.getResults().drop_front())
        results.push_back(shifted(e));
      newMaps.push_back(AffineMap::get(numLoops, 0, results, op->getContext()));
    }
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    iterators.insert(iterators.begin() + batch, utils::IteratorType::parallel);

    auto splitShape = [&](Value v) {
      ArrayRef<int64_t> shape = cast<RankedTensorType>(v.getType()).getShape();
      SmallVector<int64_t> out{split->first, split->second};
      out.append(shape.begin() + 1, shape.end());
      return out;
    };
    auto reassociation = [&](int64_t rank) {
      SmallVector<ReassociationIndices> groups{{0, 1}};
      for (int64_t d = 2; d <= rank; ++d)
        groups.push_back({d});
      return groups;
    };
    auto splitValue = [&](Value v) -> Value {
      auto type = cast<RankedTensorType>(v.getType());
      if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>())
        if (isLeadingPairCollapse(collapse.getReassociationIndices()) &&
            collapse.getSrcType().getDimSize(0) == split->first)
          return collapse.getSrc();
      return tensor::ExpandShapeOp::create(
          rewriter, op.getLoc(),
          RankedTensorType::get(splitShape(v), type.getElementType()), v,
          reassociation(type.getRank()));
    };
    Value init = op.getDpsInits()[0];
    FailureOr<Value> newInit = refill(rewriter, init, splitShape(init));
    Value a = splitValue(op.getDpsInputs()[0]);
    Value b = splitValue(op.getDpsInputs()[1]);
    Value c = succeeded(newInit) ? *newInit : splitValue(init);
    linalg::GenericOp generic =
        buildGemm(rewriter, op, a, b, c, newMaps, iterators);
    auto type = cast<RankedTensorType>(init.getType());
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, type, generic.getResult(0), reassociation(type.getRank()));
    return success();
  }
};

struct ZeroFoldTransposesIntoMatmulsPass
    : zero::impl::ZeroFoldTransposesIntoMatmulsBase<
          ZeroFoldTransposesIntoMatmulsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    // Named matmuls with swapped inner pairs first: they stay named.
    patterns.add<FoldTransposedOperands<linalg::MatmulOp>,
                 FoldTransposedOperands<linalg::BatchMatmulOp>,
                 FoldTransposedResult<linalg::MatmulOp>,
                 FoldTransposedResult<linalg::BatchMatmulOp>>(context,
                                                              /*benefit=*/2);
    patterns.add<SplitCollapsedBatch, FoldPermutedOperand, FoldPermutedResult,
                 TransposeBeforeRounding>(context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
