//===- ZeroDialect.h - zero dialect ------------------------------*- C++
//-*-===//
#ifndef ZERO_OPT_DIALECT_ZERO_IR_ZERODIALECT_H
#define ZERO_OPT_DIALECT_ZERO_IR_ZERODIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"

#include "zero-opt/Dialect/Zero/IR/ZeroEnums.h.inc"
#include "zero-opt/Dialect/Zero/IR/ZeroOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroAttrs.h.inc"

#define GET_OP_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroOps.h.inc"

namespace mlir::zero {
/// Argument and result attribute names used on the step function.
constexpr llvm::StringLiteral kNameAttr = "zero.name";
constexpr llvm::StringLiteral kRoleAttr = "zero.role";
} // namespace mlir::zero

#endif
