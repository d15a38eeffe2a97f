//===- TosaBuilder.cpp - shape-exact TOSA building helpers -----*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Utils/TosaBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::zero;

SmallVector<int64_t> TosaBuilder::broadcast(ArrayRef<int64_t> x,
                                            ArrayRef<int64_t> y) {
  SmallVector<int64_t> out;
  for (auto [p, q] : llvm::zip_equal(x, y))
    out.push_back(p == 1 ? q : p);
  return out;
}

Value TosaBuilder::splat(RankedTensorType t, double v) {
  Type elt = t.getElementType();
  Attribute a;
  if (isa<FloatType>(elt))
    a = b.getFloatAttr(elt, v);
  else if (elt.isInteger(1))
    a = b.getBoolAttr(v != 0);
  else
    a = b.getIntegerAttr(elt, (int64_t)v);
  return tosa::ConstOp::create(b, loc, t, DenseElementsAttr::get(t, a));
}

Value TosaBuilder::scalar(Type elt, double v, int64_t rank) {
  return splat(RankedTensorType::get(SmallVector<int64_t>(rank, 1), elt), v);
}

Value TosaBuilder::scalarLike(Value v, double c) {
  return scalar(typeOf(v).getElementType(), c, typeOf(v).getRank());
}

Value TosaBuilder::constant(DenseElementsAttr attr) {
  return tosa::ConstOp::create(b, loc, attr.getType(), attr);
}

Value TosaBuilder::constShape(ArrayRef<int64_t> shape) {
  auto attr = DenseIntElementsAttr::get(
      RankedTensorType::get({(int64_t)shape.size()}, b.getIndexType()), shape);
  return tosa::ConstShapeOp::create(
      b, loc, tosa::shapeType::get(b.getContext(), shape.size()), attr);
}

Value TosaBuilder::add(Value x, Value y) {
  return tosa::AddOp::create(
      b, loc, typeOf(x).clone(broadcast(shapeOf(x), shapeOf(y))), x, y);
}

Value TosaBuilder::sub(Value x, Value y) {
  return tosa::SubOp::create(
      b, loc, typeOf(x).clone(broadcast(shapeOf(x), shapeOf(y))), x, y);
}

Value TosaBuilder::mul(Value x, Value y) {
  auto shiftTy = RankedTensorType::get({1}, b.getI8Type());
  Value shift = tosa::ConstOp::create(
      b, loc, shiftTy, DenseElementsAttr::get(shiftTy, b.getI8IntegerAttr(0)));
  return tosa::MulOp::create(
      b, loc, typeOf(x).clone(broadcast(shapeOf(x), shapeOf(y))), x, y, shift);
}

Value TosaBuilder::neg(Value x) {
  return tosa::NegateOp::create(b, loc, x.getType(), x);
}

Value TosaBuilder::recip(Value x) {
  return tosa::ReciprocalOp::create(b, loc, x.getType(), x);
}

Value TosaBuilder::minimum(Value x, Value y) {
  auto t = typeOf(x).clone(broadcast(shapeOf(x), shapeOf(y)));
  return tosa::MinimumOp::create(b, loc, t, x, y);
}

Value TosaBuilder::clipCoefficient(Value norm, double maxNorm) {
  Type elt = typeOf(norm).getElementType();
  Value denom = add(norm, scalar(elt, 1e-6));
  return minimum(mul(scalar(elt, maxNorm), recip(denom)), scalar(elt, 1.0));
}

Value TosaBuilder::select(Value cond, Value x, Value y) {
  SmallVector<int64_t> s =
      broadcast(broadcast(shapeOf(cond), shapeOf(x)), shapeOf(y));
  return tosa::SelectOp::create(b, loc, typeOf(x).clone(s), cond, x, y);
}

Value TosaBuilder::greater(Value x, Value y) {
  auto t =
      RankedTensorType::get(broadcast(shapeOf(x), shapeOf(y)), b.getI1Type());
  return tosa::GreaterOp::create(b, loc, t, x, y);
}

Value TosaBuilder::greaterEqual(Value x, Value y) {
  auto t =
      RankedTensorType::get(broadcast(shapeOf(x), shapeOf(y)), b.getI1Type());
  return tosa::GreaterEqualOp::create(b, loc, t, x, y);
}

Value TosaBuilder::logicalAnd(Value x, Value y) {
  return tosa::LogicalAndOp::create(
      b, loc, typeOf(x).clone(broadcast(shapeOf(x), shapeOf(y))), x, y);
}

Value TosaBuilder::logicalNot(Value x) {
  return tosa::LogicalNotOp::create(b, loc, x.getType(), x);
}

Value TosaBuilder::castTo(Value v, Type elt) {
  if (typeOf(v).getElementType() == elt)
    return v;
  // A float widened and narrowed back is itself: the round trip is exact.
  if (auto c = v.getDefiningOp<tosa::CastOp>()) {
    Value x = c.getInput();
    Type mid = typeOf(v).getElementType();
    if (typeOf(x).getElementType() == elt && isa<FloatType>(elt) &&
        isa<FloatType>(mid) &&
        cast<FloatType>(mid).getFPMantissaWidth() >=
            cast<FloatType>(elt).getFPMantissaWidth() &&
        mid.getIntOrFloatBitWidth() > elt.getIntOrFloatBitWidth())
      return x;
  }
  return tosa::CastOp::create(b, loc, typeOf(v).clone(elt), v);
}

Value TosaBuilder::sqrt(Value v) {
  Value init =
      tensor::EmptyOp::create(b, loc, shapeOf(v), typeOf(v).getElementType());
  return linalg::SqrtOp::create(b, loc, ValueRange{v}, ValueRange{init})
      .getResult(0);
}

Value TosaBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  return tosa::ReshapeOp::create(b, loc, typeOf(v).clone(shape), v,
                                 constShape(shape));
}

Value TosaBuilder::transpose(Value v, ArrayRef<int32_t> perm) {
  SmallVector<int64_t> shape;
  for (int32_t p : perm)
    shape.push_back(shapeOf(v)[p]);
  return tosa::TransposeOp::create(b, loc, typeOf(v).clone(shape), v,
                                   b.getDenseI32ArrayAttr(perm));
}

template <typename OpTy>
Value TosaBuilder::reduce(Value v, ArrayRef<int64_t> axes) {
  // Adjacent reduced axes (with unit ones between them) are one dimension of
  // a reshape and one reduction: a bias gradient over [B, T, E] is one sum
  // over B * T rows, read once and rounded once, not a sum over B then T.
  SmallVector<int64_t> shape(shapeOf(v));
  SmallVector<bool> reduced(shape.size(), false);
  for (int64_t a : axes)
    reduced[a] = shape[a] != 1;
  SmallVector<int64_t> collapsed, reduceAt, kept(shape);
  for (size_t i = 0; i < shape.size();) {
    if (!reduced[i]) {
      collapsed.push_back(shape[i++]);
      continue;
    }
    int64_t extent = 1;
    size_t end = i;
    for (size_t j = i; j < shape.size() && (reduced[j] || shape[j] == 1); ++j)
      if (reduced[j])
        end = j + 1;
    for (; i < end; ++i) {
      extent *= shape[i];
      kept[i] = 1;
    }
    reduceAt.push_back(collapsed.size());
    collapsed.push_back(extent);
  }
  if (reduceAt.empty())
    return v;
  v = reshape(v, collapsed);
  for (int64_t a : reduceAt) {
    SmallVector<int64_t> s(shapeOf(v));
    s[a] = 1;
    v = OpTy::create(b, loc, typeOf(v).clone(s), v, b.getI32IntegerAttr(a));
  }
  return reshape(v, kept);
}

template Value TosaBuilder::reduce<tosa::ReduceSumOp>(Value, ArrayRef<int64_t>);
template Value TosaBuilder::reduce<tosa::ReduceMaxOp>(Value, ArrayRef<int64_t>);
template Value TosaBuilder::reduce<tosa::ReduceMinOp>(Value, ArrayRef<int64_t>);
template Value TosaBuilder::reduce<tosa::ReduceProductOp>(Value,
                                                          ArrayRef<int64_t>);

Value TosaBuilder::unbroadcast(Value g, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> axes;
  ArrayRef<int64_t> gs = shapeOf(g);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && gs[i] != 1)
      axes.push_back(i);
  return reshape(reduceSum(g, axes), shape);
}

Value TosaBuilder::pad(Value v, ArrayRef<int64_t> before,
                       ArrayRef<int64_t> after) {
  SmallVector<int64_t> pads, shape;
  bool any = false;
  for (size_t i = 0; i < before.size(); ++i) {
    pads.push_back(before[i]);
    pads.push_back(after[i]);
    shape.push_back(shapeOf(v)[i] + before[i] + after[i]);
    any |= before[i] || after[i];
  }
  if (!any)
    return v;
  return tosa::PadOp::create(b, loc, typeOf(v).clone(shape), v,
                             constShape(pads));
}

Value TosaBuilder::slice(Value v, ArrayRef<int64_t> start,
                         ArrayRef<int64_t> size) {
  if (size == shapeOf(v) && llvm::all_of(start, [](int64_t s) { return !s; }))
    return v;
  // Named so that the start operand is built first whatever the compiler's
  // argument order.
  Value startShape = constShape(start);
  Value sizeShape = constShape(size);
  return tosa::SliceOp::create(b, loc, typeOf(v).clone(size), v, startShape,
                               sizeShape);
}
