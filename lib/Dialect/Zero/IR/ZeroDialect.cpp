//===- ZeroDialect.cpp - zero dialect ---------------------------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zero;

#include "zero-opt/Dialect/Zero/IR/ZeroEnums.cpp.inc"
#include "zero-opt/Dialect/Zero/IR/ZeroOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroOps.cpp.inc"

void ZeroDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "zero-opt/Dialect/Zero/IR/ZeroAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "zero-opt/Dialect/Zero/IR/ZeroOps.cpp.inc"
      >();
}
