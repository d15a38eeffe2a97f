//===- AutoDiff.h - reverse-mode differentiation ----------------*- C++ -*-===//
#ifndef ZERO_OPT_DIALECT_ZERO_AUTODIFF_AUTODIFF_H
#define ZERO_OPT_DIALECT_ZERO_AUTODIFF_AUTODIFF_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::zero {

/// Builds d y / d xs for a scalar `y` and values `xs` of y's block,
/// inserting the backward ops at `b`'s insertion point (which must follow
/// y's definition in the same block). Adjoints of a value used several
/// times are summed; broadcasting is undone by each rule. Values that do
/// not influence y get zero gradients. Every created op carries
/// `zero.backward`. Fails with an error on an op without a rule.
FailureOr<SmallVector<Value>> buildGradients(OpBuilder &b, Location loc,
                                             Value y, ValueRange xs);

/// Attaches the derivative rules to the TOSA, tensor and linalg ops.
void registerAutoDiffModels(DialectRegistry &registry);

} // namespace mlir::zero

#endif
