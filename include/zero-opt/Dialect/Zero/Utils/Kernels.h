//===- Kernels.h - what a kernel of a step can hold -------------*- C++ -*-===//
//
// zero-form-kernels outlines the step's compute into kernels around kernel
// roots; the CUDA target's passes and the timeline's GPU model ask the same
// questions of the same IR, so the answers live here.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_KERNELS_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_KERNELS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::zero {

/// Whether `op`, with everything nested in it, is pure compute on buffers
/// (no call, no zero dialect op) that a kernel can hold.
bool isComputeOnly(Operation *op);

/// The op a kernel is formed around: a linalg op or copy, or a loop or
/// conditional of pure compute that yields no buffer. What is not stays in
/// the step (allocation, views, scalar bookkeeping, calls, collectives).
bool isKernelRoot(Operation *op);

/// How the CUDA target spreads `op` over a GPU: the block tile of each of
/// its loops (0: the loop stays inside a thread). Only parallel loops are
/// distributed, the innermost (x, coalesced) first, at most three, within
/// CUDA's limits on grids and blocks, at most `threadsPerBlock` threads per
/// block. No tile at all: the op runs on one thread.
SmallVector<int64_t> gpuBlockTiles(linalg::LinalgOp op,
                                   int64_t threadsPerBlock);

/// The threads a launch of `op` runs on as gpuBlockTiles spreads it (0
/// when an extent is dynamic: as many as its size at run time).
double gpuThreads(linalg::LinalgOp op, int64_t threadsPerBlock);

} // namespace mlir::zero

#endif
