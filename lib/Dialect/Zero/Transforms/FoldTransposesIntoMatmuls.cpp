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
    auto fill = op.getDpsInits()[0].template getDefiningOp<linalg::FillOp>();
    auto transposed = zero::getGemmTransposes(op);
    if (!fill || !transposed)
      return failure();
    Location loc = op.getLoc();
    auto cType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<int64_t> shape = swapInnermost(cType.getShape());
    Value empty = tensor::EmptyOp::create(rewriter, fill.getLoc(), shape,
                                          cType.getElementType());
    Value init = linalg::FillOp::create(rewriter, fill.getLoc(),
                                        fill.getInputs(), ValueRange{empty})
                     .getResult(0);
    // B^T is the new A, A^T the new B.
    SmallVector<AffineMap> maps = zero::getGemmMaps(
        op, zero::GemmTransposes{!transposed->b, !transposed->a});
    SmallVector<NamedAttribute> attrs(op->getDiscardableAttrs());
    if (Attribute cast = op->getAttr("cast"))
      attrs.push_back(rewriter.getNamedAttr("cast", cast));
    SmallVector<Value> inputs(op.getDpsInputs());
    auto product = MatmulOp::create(rewriter, loc, TypeRange{init.getType()},
                                    ValueRange{inputs[1], inputs[0]},
                                    ValueRange{init}, attrs);
    product.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    auto outType = cast<RankedTensorType>(transpose.getInit().getType());
    rewriter.replaceOp(transpose, reshapeTo(rewriter, loc,
                                            product->getResult(0),
                                            outType.getShape()));
    return success();
  }
};

struct ZeroFoldTransposesIntoMatmulsPass
    : zero::impl::ZeroFoldTransposesIntoMatmulsBase<
          ZeroFoldTransposesIntoMatmulsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldTransposedOperands<linalg::MatmulOp>,
                 FoldTransposedOperands<linalg::BatchMatmulOp>,
                 FoldTransposedResult<linalg::MatmulOp>,
                 FoldTransposedResult<linalg::BatchMatmulOp>>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
