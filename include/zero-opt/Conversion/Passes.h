//===- Passes.h - zero-opt conversion passes ---------------------*- C++
//-*-===//
#ifndef ZERO_OPT_CONVERSION_PASSES_H
#define ZERO_OPT_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace mlir::zero {
#define GEN_PASS_DECL
#include "zero-opt/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero-opt/Conversion/Passes.h.inc"
} // namespace mlir::zero

#endif
