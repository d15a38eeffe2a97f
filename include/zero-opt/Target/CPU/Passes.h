//===- Passes.h - CPU target passes ---------------------*- C++ -*-===//
#ifndef ZERO_OPT_TARGET_CPU_PASSES_H
#define ZERO_OPT_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DECL
#include "zero-opt/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

#endif
