//===- Passes.h - zero dialect transforms ------------------------*- C++ -*-===//
#ifndef ZERO_OPT_DIALECT_ZERO_TRANSFORMS_PASSES_H
#define ZERO_OPT_DIALECT_ZERO_TRANSFORMS_PASSES_H

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::zero {
/// On a kernel function: the LLVM parameters (after memref descriptors
/// expand) found never to alias another argument; zero-apply-noalias marks
/// them once the function is LLVM.
constexpr llvm::StringLiteral kNoAliasParamsAttr = "zero.noalias_params";

/// The LLVM parameters a function argument of `type` becomes: a ranked
/// memref its descriptor's allocated and aligned pointers, offset, sizes
/// and strides (the aligned pointer is the second), a scalar one; none
/// for other types.
inline std::optional<int64_t> llvmParameterCount(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return 3 + 2 * memref.getRank();
  if (isa<IndexType, IntegerType, FloatType>(type))
    return 1;
  return std::nullopt;
}

#define GEN_PASS_DECL
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"

/// The rewrite of `zero-gather-one-hot-reductions`, for passes that apply it
/// among their own patterns.
void populateGatherOneHotReductionsPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

#endif
