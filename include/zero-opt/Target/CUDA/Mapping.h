//===- Mapping.h - how the CUDA target spreads an op over a GPU -*- C++ -*-===//
//
// zero-gpu-map-kernels tiles each kernel op to blocks and threads by these
// rules; the timeline predicts the CUDA target's launches by the same ones.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_TARGET_CUDA_MAPPING_H
#define ZERO_OPT_TARGET_CUDA_MAPPING_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::zero::cuda {

/// zero-gpu-map-kernels' default threads per block.
constexpr int64_t kDefaultThreadsPerBlock = 256;

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

/// The threads a loop kernel runs on: zero-gpu-map-kernels runs a loop
/// whose body is one linalg op on that op's grid when every thread owns
/// what it writes (the embedding gradient's scatter), on one thread
/// otherwise. This predicts it from the loop's form alone (the ownership
/// test needs the kernel's buffers): the grid of its one linalg op, or 1.
double gpuLoopThreads(scf::ForOp loop, int64_t threadsPerBlock);

} // namespace mlir::zero::cuda

#endif
