//===- RuleBuilder.h - helpers for derivative rules -------------*- C++ -*-===//
#ifndef ZERO_OPT_LIB_DIALECT_ZERO_AUTODIFF_RULEBUILDER_H
#define ZERO_OPT_LIB_DIALECT_ZERO_AUTODIFF_RULEBUILDER_H

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/TosaBuilder.h"

namespace mlir::zero::autodiff {

/// What a rule sees: its op, result adjoints (zero where null), which
/// operand adjoints are wanted, and the shared TOSA builders.
class RuleBuilder : public TosaBuilder {
public:
  RuleBuilder(OpBuilder &b, Operation *op, ArrayRef<Value> resultAdj,
              ArrayRef<bool> needed, SmallVectorImpl<Value> &operandAdj)
      : TosaBuilder(b, op->getLoc()), op(op), resultAdj(resultAdj),
        needed(needed), operandAdj(operandAdj) {
    operandAdj.assign(op->getNumOperands(), Value());
  }

  Operation *op;

  /// Adjoint of result i, materialized as zeros when absent.
  Value dy(unsigned i = 0);
  bool need(unsigned i) const { return needed[i]; }
  /// Sets operand i's adjoint, summing away broadcast dimensions.
  void set(unsigned i, Value g);

private:
  ArrayRef<Value> resultAdj;
  ArrayRef<bool> needed;
  SmallVectorImpl<Value> &operandAdj;
};

void registerTosaRules(DialectRegistry &registry);
void registerTensorLinalgRules(DialectRegistry &registry);

} // namespace mlir::zero::autodiff

#endif
