//===- RuleBuilder.h - helpers for derivative rules -------------*- C++ -*-===//
#ifndef ZERO_OPT_LIB_DIALECT_ZERO_AUTODIFF_RULEBUILDER_H
#define ZERO_OPT_LIB_DIALECT_ZERO_AUTODIFF_RULEBUILDER_H

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::zero::autodiff {

/// What a rule sees: its op, result adjoints (zero where null), which
/// operand adjoints are wanted, and TOSA building helpers.
class RuleBuilder {
public:
  RuleBuilder(OpBuilder &b, Operation *op, ArrayRef<Value> resultAdj,
              ArrayRef<bool> needed, SmallVectorImpl<Value> &operandAdj)
      : b(b), loc(op->getLoc()), op(op), resultAdj(resultAdj), needed(needed),
        operandAdj(operandAdj) {
    operandAdj.assign(op->getNumOperands(), Value());
  }

  OpBuilder &b;
  Location loc;
  Operation *op;

  /// Adjoint of result i, materialized as zeros when absent.
  Value dy(unsigned i = 0);
  bool need(unsigned i) const { return needed[i]; }
  /// Sets operand i's adjoint, summing away broadcast dimensions.
  void set(unsigned i, Value g);

  static RankedTensorType typeOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  static ArrayRef<int64_t> shapeOf(Value v) { return typeOf(v).getShape(); }

  Value splat(RankedTensorType t, double v);
  /// All-ones-shaped scalar constant of v's element type and rank.
  Value scalarLike(Value v, double c);
  Value zerosLike(Value v) { return splat(typeOf(v), 0.0); }
  /// Elementwise ops with TOSA's size-1 broadcasting (equal ranks).
  Value add(Value a, Value c);
  Value sub(Value a, Value c);
  Value mul(Value a, Value c);
  Value neg(Value a);
  Value recip(Value a);
  Value select(Value cond, Value a, Value c);
  Value cmp(bool greaterEqual, Value a, Value c);
  Value logicalAnd(Value a, Value c);
  Value logicalNot(Value a);
  Value castTo(Value v, Type elt);
  Value reshape(Value v, ArrayRef<int64_t> shape);
  Value transpose(Value v, ArrayRef<int32_t> perm);
  Value reduceSum(Value v, ArrayRef<int64_t> axes);
  /// Sums `g` down to `shape` over the dimensions where shape has 1.
  Value unbroadcast(Value g, ArrayRef<int64_t> shape);
  Value constShape(ArrayRef<int64_t> shape);
  Value pad(Value v, ArrayRef<int64_t> before, ArrayRef<int64_t> after);
  Value slice(Value v, ArrayRef<int64_t> start, ArrayRef<int64_t> size);

private:
  ArrayRef<Value> resultAdj;
  ArrayRef<bool> needed;
  SmallVectorImpl<Value> &operandAdj;
  static SmallVector<int64_t> broadcast(ArrayRef<int64_t> a,
                                        ArrayRef<int64_t> c);
};

void registerTosaRules(DialectRegistry &registry);
void registerTensorLinalgRules(DialectRegistry &registry);

} // namespace mlir::zero::autodiff

#endif
