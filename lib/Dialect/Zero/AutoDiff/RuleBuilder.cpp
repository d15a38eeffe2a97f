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
