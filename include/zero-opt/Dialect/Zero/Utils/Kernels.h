//===- Kernels.h - what a kernel of a step can hold -------------*- C++ -*-===//
//
// zero-form-kernels outlines the step's compute into kernels around kernel
// roots; the CUDA target's passes and the timeline's launch model ask the
// same questions of the same IR, so the answers live here.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_KERNELS_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_KERNELS_H

#include "mlir/IR/Operation.h"

namespace mlir::zero {

/// Whether `op`, with everything nested in it, is pure compute on buffers
/// (no call, no zero dialect op) that a kernel can hold.
bool isComputeOnly(Operation *op);

/// The op a kernel is formed around: a linalg op or copy, or a loop or
/// conditional of pure compute that yields no buffer. What is not stays in
/// the step (allocation, views, scalar bookkeeping, calls, collectives).
bool isKernelRoot(Operation *op);

} // namespace mlir::zero

#endif
