//===- Mapping.h - how the CUDA target spreads an op over a GPU -*- C++ -*-===//
//
// zero-gpu-map-kernels tiles each kernel op to blocks and threads by these
// rules; the timeline predicts the CUDA target's launches by the same ones.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_TARGET_CUDA_MAPPING_H
#define ZERO_OPT_TARGET_CUDA_MAPPING_H

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/Masks.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::zero::cuda {

/// zero-gpu-map-kernels' default threads per block.
constexpr int64_t kDefaultThreadsPerBlock = 256;

/// Bytes of its narrowest operand a thread of an op without reductions
/// loads along y before it uses them (several outputs a thread).
constexpr int64_t kCoarsenedBytes = 16;

/// Threads a launch keeps when its threads take several outputs each:
/// about four waves of an H100's resident threads.
constexpr double kMinCoarsenedThreads = 1 << 20;

/// Iterations of a thread's serial loop whose loads zero-gpu-batch-loads
/// issues together: loads in flight per thread.
constexpr int64_t kLoadBatch = 8;

/// How the CUDA target spreads `op` over a GPU: the block tile of each of
/// its loops (0: the loop stays inside a thread). Only parallel loops are
/// distributed, the innermost (x, coalesced) first, at most three, within
/// CUDA's limits on grids and blocks, at most `threadsPerBlock` threads per
/// block. No tile at all: the op runs on one thread. An op without
/// reductions has several outputs a thread along y (the second loop
/// distributed): kCoarsenedBytes of its narrowest operand, while the grid
/// keeps kMinCoarsenedThreads threads and the tile fits the loop.
SmallVector<int64_t> gpuBlockTiles(linalg::LinalgOp op,
                                   int64_t threadsPerBlock);

/// The threads of a block along each loop of `op` (the block tile less the
/// outputs each thread takes along y; 0 where gpuBlockTiles has 0).
SmallVector<int64_t> gpuBlockThreads(linalg::LinalgOp op,
                                     int64_t threadsPerBlock);

/// The threads a launch of `op` runs on as gpuBlockTiles spreads it (0
/// when an extent is dynamic: as many as its size at run time).
double gpuThreads(linalg::LinalgOp op, int64_t threadsPerBlock);

/// A view of one row of its root buffer, at a row known only at run time:
/// root dimension `dim` is reached at `row` + `offset` with extent 1
/// through subviews (the embedding gradient's table row at a token's id).
/// `rows` is the root's extent along `dim`.
struct ScatteredRow {
  unsigned dim;
  Value row;
  int64_t offset;
  int64_t rows;
  bool operator==(const ScatteredRow &o) const {
    return dim == o.dim && row == o.row && offset == o.offset && rows == o.rows;
  }
  bool operator!=(const ScatteredRow &o) const { return !(*this == o); }
};

/// The scattered row `view` is, or none: exactly one root dimension of more
/// than one row is reached at a non-constant offset, with extent 1, and
/// every view on the way is a subview at unit stride along it.
std::optional<ScatteredRow> scatteredRow(Value view);

/// Threads a scatter loop aims for: its grid, times the parts its rows
/// are split into.
constexpr double kScatterThreads = 131072;

/// The parts zero-gpu-map-kernels splits a scatter loop's `rows` into, a
/// block row of the grid each, for a grid of `threads`: each part's threads
/// run every iteration and write the rows of their part, so the grid grows
/// by the parts (up to kScatterThreads, one row each at most, CUDA's 65535
/// blocks along the dimension). 1: no split.
int64_t gpuScatterParts(int64_t rows, double threads);

/// The threads a loop kernel runs on: zero-gpu-map-kernels runs a loop
/// whose body is one linalg op on that op's grid when every thread owns
/// what it writes (the embedding gradient's scatter), split into parts by
/// the scattered row it writes, on one thread otherwise. This predicts it
/// from the loop's form alone (the ownership test needs the kernel's
/// buffers): the grid of its one linalg op times the parts of the row it
/// or a copy after it writes, or 1.
double gpuLoopThreads(scf::ForOp loop, int64_t threadsPerBlock);

/// Lanes a row group gives each row: a warp.
constexpr int64_t kRowLanes = 32;

/// The loop of `op`, past its first `rowDims` (a row group's rows), that a
/// row's kRowLanes lanes split cyclically (lane l takes iterations l,
/// l + 32, ...: a warp reads adjacent elements): its last parallel loop,
/// when its extent is a multiple of kRowLanes and every operand indexes it
/// as a whole result of its own or not at all. None: one thread a row.
std::optional<unsigned> rowLane(linalg::LinalgOp op, int64_t rowDims);

/// The columns a row group's member `op` writes in each run of its rows:
/// its zero::kWrittenRegionAttr widened to whole lanes' iterations, when
/// the region's rows are row loops (of the first `rowDims`) and its
/// columns the lane loop (rowLane). None: it writes every column.
std::optional<zero::WrittenRegion> rowGroupRegion(linalg::LinalgOp op,
                                                  int64_t rowDims);

/// The threads a row group's launch runs on: kRowLanes a row.
double rowGroupThreads(zero::RowGroupOp group);

/// Rows a block of a row group takes: kRowLanes threads each, at most
/// `threadsPerBlock` threads, a divisor of the innermost row extent.
int64_t rowsPerBlock(int64_t innermostRows, int64_t threadsPerBlock);

/// The thread forall of a block forall: the one op of its body that
/// carries regions; null when there is none or another.
scf::ForallOp threadForall(scf::ForallOp blocks);

/// The thread foralls of a block forall, in order (a row group's ops, with
/// a barrier between each two); failure when an op of its body with
/// regions is no thread forall, or there is none.
FailureOr<SmallVector<scf::ForallOp>> threadForalls(scf::ForallOp blocks);

/// The mapping id (0 x, 1 y, 2 z) of each loop of `forall`, or failure
/// when its loops are not all mapped to block ids (`threads` false) or
/// thread ids (`threads` true) of x, y or z.
FailureOr<SmallVector<unsigned>> mappedIds(scf::ForallOp forall, bool threads);

} // namespace mlir::zero::cuda

#endif
