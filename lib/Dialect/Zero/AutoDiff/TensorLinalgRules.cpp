//===- TensorLinalgRules.cpp - tensor, linalg and zero rules -*- C++ -*-===//
#include "RuleBuilder.h"

#include "zero-opt/Dialect/Zero/AutoDiff/AutoDiff.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::zero;
using namespace mlir::zero::autodiff;

namespace {
/// The gradient of a static slice is the slice inserted into zeros.
struct ExtractSliceModel
    : public AutoDiffOpInterface::ExternalModel<ExtractSliceModel,
                                                tensor::ExtractSliceOp> {
  LogicalResult buildAdjoints(Operation *op, OpBuilder &b,
                              ArrayRef<Value> resultAdj, ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &operandAdj) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    RuleBuilder r(b, op, resultAdj, needed, operandAdj);
    if (!slice.getOffsets().empty() || !slice.getSizes().empty() ||
        !slice.getStrides().empty())
      return op->emitError("no derivative rule for a dynamic slice");
    if (slice.getSourceType().getRank() != slice.getResultType().getRank())
      return op->emitError("no derivative rule for a rank-reducing slice");
    Value zeros = r.zerosLike(slice.getSource());
    Value g = tensor::InsertSliceOp::create(
        b, r.loc, r.dy(), zeros, ValueRange{}, ValueRange{}, ValueRange{},
        slice.getStaticOffsetsAttr(), slice.getStaticSizesAttr(),
        slice.getStaticStridesAttr());
    r.set(0, g);
    return success();
  }
};

/// d sqrt(x) = 1 / (2 sqrt(x)).
struct SqrtModel
    : public AutoDiffOpInterface::ExternalModel<SqrtModel, linalg::SqrtOp> {
  LogicalResult buildAdjoints(Operation *op, OpBuilder &b,
                              ArrayRef<Value> resultAdj, ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &operandAdj) const {
    RuleBuilder r(b, op, resultAdj, needed, operandAdj);
    Value y = op->getResult(0);
    r.set(0, r.mul(r.mul(r.dy(), r.recip(y)), r.scalarLike(y, 0.5)));
    return success();
  }
};

/// The softmax's own derivative along its dimension,
/// dx = y * (dy - sum(dy * y)): it reads the output alone, which the GEMM
/// after it keeps anyway. 16-bit values compute in fp32.
struct SoftmaxModel
    : public AutoDiffOpInterface::ExternalModel<SoftmaxModel,
                                                linalg::SoftmaxOp> {
  LogicalResult buildAdjoints(Operation *op, OpBuilder &b,
                              ArrayRef<Value> resultAdj, ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &operandAdj) const {
    auto softmax = cast<linalg::SoftmaxOp>(op);
    if (!softmax.hasPureTensorSemantics())
      return op->emitError("no derivative rule for a softmax on buffers");
    RuleBuilder r(b, op, resultAdj, needed, operandAdj);
    if (!r.need(0))
      return success();
    Value y = op->getResult(0), dy = r.dy();
    Type elt = r.typeOf(y).getElementType();
    bool narrow = cast<FloatType>(elt).getWidth() < 32;
    if (narrow) {
      y = r.castTo(y, b.getF32Type());
      dy = r.castTo(dy, b.getF32Type());
    }
    int64_t dim = softmax.getDimension();
    Value dx = r.mul(y, r.sub(dy, r.reduceSum(r.mul(dy, y), {dim})));
    r.set(0, narrow ? r.castTo(dx, elt) : dx);
    return success();
  }
};

/// A sum over the replicas is its own adjoint (see the op's description).
struct ReplicaSumModel
    : public AutoDiffOpInterface::ExternalModel<ReplicaSumModel, ReplicaSumOp> {
  LogicalResult buildAdjoints(Operation *op, OpBuilder &b,
                              ArrayRef<Value> resultAdj, ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &operandAdj) const {
    RuleBuilder r(b, op, resultAdj, needed, operandAdj);
    r.set(0, ReplicaSumOp::create(b, r.loc, r.dy().getType(), r.dy()));
    return success();
  }
};
/// Attention's gradients come from zero.attention_grad, which computes the
/// probabilities again from the queries, keys and log-sum-exp; it takes
/// each query row's `dout . out` (in f32) from here, and the forward's
/// dropout, whose mask it draws again. The log-sum-exp is the forward's
/// own: nothing else may read it.
struct AttentionModel
    : public AutoDiffOpInterface::ExternalModel<AttentionModel, AttentionOp> {
  LogicalResult buildAdjoints(Operation *op, OpBuilder &b,
                              ArrayRef<Value> resultAdj, ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &operandAdj) const {
    auto a = cast<AttentionOp>(op);
    if (!a.hasPureTensorSemantics())
      return op->emitError("no derivative rule for attention on buffers");
    if (resultAdj[1])
      return op->emitError("no derivative rule for a zero.attention whose "
                           "log-sum-exp is used");
    RuleBuilder r(b, op, resultAdj, needed, operandAdj);
    Value out = a.getResult(0), dout = r.dy(0), lse = a.getResult(1);
    Type f32 = b.getF32Type();
    ArrayRef<int64_t> rows = r.shapeOf(lse);
    Value delta =
        r.reshape(r.reduceSum(r.mul(r.castTo(dout, f32), r.castTo(out, f32)),
                              {int64_t(rows.size())}),
                  rows);
    SmallVector<Value> inits;
    for (Value x : {a.getQuery(), a.getKey(), a.getValue()}) {
      auto t = cast<RankedTensorType>(x.getType());
      inits.push_back(
          tensor::EmptyOp::create(b, r.loc, t.getShape(), t.getElementType()));
    }
    auto grad = AttentionGradOp::create(
        b, r.loc, ValueRange(inits).getTypes(), a.getQuery(), a.getKey(),
        a.getValue(), dout, lse, delta, inits[0], inits[1], inits[2],
        a.getScaleAttr(), a.getCausalAttr(), a.getSeqDimAttr(),
        a.getDropoutAttr(), a.getDropoutScaleAttr(), a.getRng());
    for (unsigned i = 0; i < 3; ++i)
      if (r.need(i))
        r.set(i, grad.getResult(i));
    return success();
  }
};
} // namespace

void mlir::zero::autodiff::registerTensorLinalgRules(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExtractSliceOp::attachInterface<ExtractSliceModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    linalg::SqrtOp::attachInterface<SqrtModel>(*ctx);
    linalg::SoftmaxOp::attachInterface<SoftmaxModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, ZeroDialect *) {
    ReplicaSumOp::attachInterface<ReplicaSumModel>(*ctx);
    AttentionOp::attachInterface<AttentionModel>(*ctx);
  });
}

void mlir::zero::registerAutoDiffModels(DialectRegistry &registry) {
  registerTosaRules(registry);
  registerTensorLinalgRules(registry);
}
