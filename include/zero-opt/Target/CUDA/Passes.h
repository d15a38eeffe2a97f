//===- Passes.h - CUDA target passes --------------------*- C++ -*-===//
#ifndef ZERO_OPT_TARGET_CUDA_PASSES_H
#define ZERO_OPT_TARGET_CUDA_PASSES_H

#include "zero-opt/Target/CUDA/Mapping.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DECL
#include "zero-opt/Target/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

#endif
