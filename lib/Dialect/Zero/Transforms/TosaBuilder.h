//===- TosaBuilder.h - small TOSA builders shared by the passes -*- C++ -*-===//
#ifndef ZERO_OPT_LIB_DIALECT_ZERO_TRANSFORMS_TOSABUILDER_H
#define ZERO_OPT_LIB_DIALECT_ZERO_TRANSFORMS_TOSABUILDER_H

#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

namespace mlir::zero {

/// Elementwise TOSA helpers at one location, for passes that build the
/// training step's arithmetic (scaling, norms, flattening).
struct TosaBuilder {
  OpBuilder &b;
  Location loc;

  TosaBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  static RankedTensorType ty(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  Value splat(RankedTensorType t, double v) {
    return tosa::ConstOp::create(
        b, loc, t,
        DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), v)));
  }
  /// `v` as a tensor of `rank` size-1 dimensions.
  Value scalar(Type elt, double v, unsigned rank = 0) {
    return splat(RankedTensorType::get(SmallVector<int64_t>(rank, 1), elt), v);
  }
  Value add(Value x, Value y) {
    return tosa::AddOp::create(b, loc, x.getType(), x, y);
  }
  /// x * y with TOSA's size-1 broadcasting (equal ranks).
  Value mul(Value x, Value y) {
    auto st = RankedTensorType::get({1}, b.getI8Type());
    Value shift = tosa::ConstOp::create(
        b, loc, st, DenseElementsAttr::get(st, b.getI8IntegerAttr(0)));
    SmallVector<int64_t> shape;
    for (auto [a, c] : llvm::zip_equal(ty(x).getShape(), ty(y).getShape()))
      shape.push_back(a == 1 ? c : a);
    return tosa::MulOp::create(b, loc, ty(x).clone(shape), x, y, shift);
  }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    if (ty(v).getShape() == shape)
      return v;
    auto attr = DenseIntElementsAttr::get(
        RankedTensorType::get({(int64_t)shape.size()}, b.getIndexType()),
        shape);
    Value s = tosa::ConstShapeOp::create(
        b, loc, tosa::shapeType::get(b.getContext(), shape.size()), attr);
    return tosa::ReshapeOp::create(b, loc, ty(v).clone(shape), v, s);
  }
  /// TOSA has no square root.
  Value sqrt(Value v) {
    Value init = tensor::EmptyOp::create(b, loc, ty(v).getShape(),
                                         ty(v).getElementType());
    return linalg::SqrtOp::create(b, loc, ValueRange{v}, ValueRange{init})
        .getResult(0);
  }
  Value castTo(Value v, Type elt) {
    if (ty(v).getElementType() == elt)
      return v;
    return tosa::CastOp::create(b, loc, ty(v).clone(elt), v);
  }
};

} // namespace mlir::zero

#endif
