//===- Mapping.cpp - how the CUDA target spreads an op over a GPU ---------===//
#include "zero-opt/Target/CUDA/Mapping.h"

using namespace mlir;

// CUDA's limits on a grid's y and z and on a block's z.
static constexpr int64_t kMaxGridYZ = 65535;
static constexpr int64_t kMaxBlockZ = 64;

SmallVector<int64_t> mlir::zero::cuda::gpuBlockTiles(linalg::LinalgOp op,
                                                     int64_t threadsPerBlock) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  // Unit dimensions left (upstream folds none on dynamic-offset views)
  // are one-trip loops, not worth a thread dimension.
  SmallVector<unsigned> parallel;
  for (auto [d, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::parallel && extents[d] != 1)
      parallel.push_back(d);
  SmallVector<int64_t> tiles(iterators.size(), 0);
  int64_t budget = threadsPerBlock;
  unsigned id = 0;
  for (unsigned d : llvm::reverse(parallel)) {
    int64_t extent = extents[d];
    bool dynamic = ShapedType::isDynamic(extent);
    int64_t tile;
    if (id == 0) {
      // x is coalesced; with other dimensions to map it keeps a warp's width.
      int64_t want =
          parallel.size() == 1 ? budget : std::min<int64_t>(32, budget);
      tile = dynamic ? want : std::min(extent, want);
    } else {
      if (dynamic)
        break;
      tile = std::max<int64_t>(1, std::min(extent, budget));
      if (id == 2)
        tile = std::min(tile, kMaxBlockZ);
      if (llvm::divideCeil(extent, tile) > kMaxGridYZ)
        break;
    }
    tiles[d] = tile;
    budget = std::max<int64_t>(1, budget / tile);
    if (++id == 3)
      break;
  }
  return tiles;
}

double mlir::zero::cuda::gpuThreads(linalg::LinalgOp op,
                                    int64_t threadsPerBlock) {
  SmallVector<int64_t> tiles = gpuBlockTiles(op, threadsPerBlock);
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  double threads = 1;
  for (auto [tile, extent] : llvm::zip(tiles, extents)) {
    if (tile == 0)
      continue;
    if (ShapedType::isDynamic(extent))
      return 0;
    threads *= double(extent);
  }
  return threads;
}

double mlir::zero::cuda::gpuLoopThreads(scf::ForOp loop,
                                        int64_t threadsPerBlock) {
  linalg::LinalgOp op;
  for (Operation &inner : loop.getBody()->without_terminator()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(inner);
    if (linalgOp ? bool(op) : inner.getNumRegions() != 0)
      return 1;
    if (linalgOp)
      op = linalgOp;
  }
  if (!op || op.getNumParallelLoops() == 0)
    return 1;
  return gpuThreads(op, threadsPerBlock);
}
