//===- RuleBuilder.cpp - helpers for derivative rules ----------*- C++ -*-===//
#include "RuleBuilder.h"

using namespace mlir;
using namespace mlir::zero::autodiff;

Value RuleBuilder::dy(unsigned i) {
  if (resultAdj[i])
    return resultAdj[i];
  return zerosLike(op->getResult(i));
}

void RuleBuilder::set(unsigned i, Value g) {
  if (!g || !needed[i])
    return;
  Value target = op->getOperand(i);
  if (shapeOf(g) != shapeOf(target))
    g = unbroadcast(g, shapeOf(target));
  if (typeOf(g).getElementType() != typeOf(target).getElementType())
    g = castTo(g, typeOf(target).getElementType());
  operandAdj[i] = g;
}

Value RuleBuilder::splat(RankedTensorType t, double v) {
  Type elt = t.getElementType();
  Attribute a = isa<FloatType>(elt) ? Attribute(b.getFloatAttr(elt, v))
                : elt.isInteger(1)  ? Attribute(b.getBoolAttr(v != 0))
                                    : Attribute(b.getIntegerAttr(elt, (int64_t)v));
  return tosa::ConstOp::create(b, loc, t, DenseElementsAttr::get(t, a));
}

Value RuleBuilder::scalarLike(Value v, double c) {
  return splat(RankedTensorType::get(
                   SmallVector<int64_t>(shapeOf(v).size(), 1),
                   typeOf(v).getElementType()),
               c);
}

SmallVector<int64_t> RuleBuilder::broadcast(ArrayRef<int64_t> a,
                                            ArrayRef<int64_t> c) {
  SmallVector<int64_t> out;
  for (auto [x, y] : llvm::zip(a, c))
    out.push_back(x == 1 ? y : x);
  return out;
}

Value RuleBuilder::add(Value a, Value c) {
  return tosa::AddOp::create(
      b, loc, typeOf(a).clone(broadcast(shapeOf(a), shapeOf(c))), a, c);
}

Value RuleBuilder::sub(Value a, Value c) {
  return tosa::SubOp::create(
      b, loc, typeOf(a).clone(broadcast(shapeOf(a), shapeOf(c))), a, c);
}

Value RuleBuilder::mul(Value a, Value c) {
  auto shiftTy = RankedTensorType::get({1}, b.getI8Type());
  Value shift = tosa::ConstOp::create(
      b, loc, shiftTy, DenseElementsAttr::get(shiftTy, b.getI8IntegerAttr(0)));
  return tosa::MulOp::create(
      b, loc, typeOf(a).clone(broadcast(shapeOf(a), shapeOf(c))), a, c, shift);
}

Value RuleBuilder::neg(Value a) {
  return tosa::NegateOp::create(b, loc, a.getType(), a);
}

Value RuleBuilder::recip(Value a) {
  return tosa::ReciprocalOp::create(b, loc, a.getType(), a);
}

Value RuleBuilder::select(Value cond, Value a, Value c) {
  SmallVector<int64_t> s = broadcast(broadcast(shapeOf(cond), shapeOf(a)),
                                     shapeOf(c));
  return tosa::SelectOp::create(b, loc, typeOf(a).clone(s), cond, a, c);
}

Value RuleBuilder::cmp(bool greaterEqual, Value a, Value c) {
  auto t = RankedTensorType::get(broadcast(shapeOf(a), shapeOf(c)),
                                 b.getI1Type());
  if (greaterEqual)
    return tosa::GreaterEqualOp::create(b, loc, t, a, c);
  return tosa::GreaterOp::create(b, loc, t, a, c);
}

Value RuleBuilder::logicalAnd(Value a, Value c) {
  return tosa::LogicalAndOp::create(
      b, loc, typeOf(a).clone(broadcast(shapeOf(a), shapeOf(c))), a, c);
}

Value RuleBuilder::logicalNot(Value a) {
  return tosa::LogicalNotOp::create(b, loc, a.getType(), a);
}

Value RuleBuilder::castTo(Value v, Type elt) {
  if (typeOf(v).getElementType() == elt)
    return v;
  return tosa::CastOp::create(b, loc, typeOf(v).clone(elt), v);
}

Value RuleBuilder::constShape(ArrayRef<int64_t> shape) {
  auto attr = DenseIntElementsAttr::get(
      RankedTensorType::get({(int64_t)shape.size()}, b.getIndexType()), shape);
  return tosa::ConstShapeOp::create(
      b, loc, tosa::shapeType::get(b.getContext(), shape.size()), attr);
}

Value RuleBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  return tosa::ReshapeOp::create(b, loc, typeOf(v).clone(shape), v,
                                 constShape(shape));
}

Value RuleBuilder::transpose(Value v, ArrayRef<int32_t> perm) {
  SmallVector<int64_t> shape;
  for (int32_t p : perm)
    shape.push_back(shapeOf(v)[p]);
  return tosa::TransposeOp::create(b, loc, typeOf(v).clone(shape), v,
                                   b.getDenseI32ArrayAttr(perm));
}

Value RuleBuilder::reduceSum(Value v, ArrayRef<int64_t> axes) {
  for (int64_t a : axes) {
    SmallVector<int64_t> s(shapeOf(v));
    if (s[a] == 1)
      continue;
    s[a] = 1;
    v = tosa::ReduceSumOp::create(b, loc, typeOf(v).clone(s), v,
                                  b.getI32IntegerAttr(a));
  }
  return v;
}

Value RuleBuilder::unbroadcast(Value g, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> axes;
  ArrayRef<int64_t> gs = shapeOf(g);
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && gs[i] != 1)
      axes.push_back(i);
  return reshape(reduceSum(g, axes), shape);
}

Value RuleBuilder::pad(Value v, ArrayRef<int64_t> before,
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

Value RuleBuilder::slice(Value v, ArrayRef<int64_t> start,
                         ArrayRef<int64_t> size) {
  if (size == shapeOf(v))
    return v;
  return tosa::SliceOp::create(b, loc, typeOf(v).clone(size), v,
                               constShape(start), constShape(size));
}
