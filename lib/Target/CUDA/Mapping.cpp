//===- Mapping.cpp - how the CUDA target spreads an op over a GPU ---------===//
#include "zero-opt/Target/CUDA/Mapping.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <numeric>

using namespace mlir;

// CUDA's limits on a grid's y and z and on a block's z.
static constexpr int64_t kMaxGridYZ = 65535;
static constexpr int64_t kMaxBlockZ = 64;

/// The threads of a block along each loop of `op` (0: the loop stays in a
/// thread).
static SmallVector<int64_t> threadTiles(linalg::LinalgOp op,
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

/// The y loop of `op` under `threads` and the outputs a thread computes
/// along it (1: none). A thread holds one load per operand in flight until
/// its value is used; a GPU's memory keeps about 16 bytes a thread in
/// flight at full bandwidth, so each thread of an op without reductions
/// takes that many bytes of its narrowest operand along y, with warps still
/// reading adjacent x, as long as the grid keeps kMinCoarsenedThreads.
static std::pair<unsigned, int64_t> coarsening(linalg::LinalgOp op,
                                               ArrayRef<int64_t> threads) {
  if (op.getNumReductionLoops() != 0)
    return {0, 1};
  SmallVector<unsigned> distributed;
  for (unsigned d = threads.size(); d-- > 0;)
    if (threads[d])
      distributed.push_back(d);
  if (distributed.size() < 2)
    return {0, 1};
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  double total = 1;
  for (unsigned d : distributed) {
    if (ShapedType::isDynamic(extents[d]))
      return {0, 1};
    total *= double(extents[d]);
  }
  int64_t width = zero::cuda::kCoarsenedBytes;
  for (Value v : op->getOperands())
    if (auto shaped = dyn_cast<ShapedType>(v.getType()))
      if (shaped.getElementType().isIntOrFloat())
        width = std::min<int64_t>(
            width, std::max<int64_t>(1, shaped.getElementTypeBitWidth() / 8));
  unsigned y = distributed[1];
  int64_t outputs = zero::cuda::kCoarsenedBytes / width;
  while (outputs > 1 &&
         (threads[y] * outputs > extents[y] ||
          total / double(outputs) < zero::cuda::kMinCoarsenedThreads))
    outputs /= 2;
  return {y, outputs};
}

SmallVector<int64_t>
mlir::zero::cuda::gpuBlockThreads(linalg::LinalgOp op,
                                  int64_t threadsPerBlock) {
  return threadTiles(op, threadsPerBlock);
}

SmallVector<int64_t> mlir::zero::cuda::gpuBlockTiles(linalg::LinalgOp op,
                                                     int64_t threadsPerBlock) {
  SmallVector<int64_t> tiles = threadTiles(op, threadsPerBlock);
  auto [y, outputs] = coarsening(op, tiles);
  if (outputs > 1)
    tiles[y] *= outputs;
  return tiles;
}

double mlir::zero::cuda::gpuThreads(linalg::LinalgOp op,
                                    int64_t threadsPerBlock) {
  SmallVector<int64_t> threads = threadTiles(op, threadsPerBlock);
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  double count = 1;
  for (auto [perBlock, extent] : llvm::zip(threads, extents)) {
    if (perBlock == 0)
      continue;
    if (ShapedType::isDynamic(extent))
      return 0;
    count *= double(extent);
  }
  // Each thread computes `outputs` elements.
  return count / double(coarsening(op, threads).second);
}

std::optional<zero::cuda::ScatteredRow>
mlir::zero::cuda::scatteredRow(Value view) {
  // Candidates: (dimension of the current view, row, constant offset).
  struct Candidate {
    unsigned dim;
    Value row;
    int64_t offset;
  };
  SmallVector<Candidate> found;
  Value v = view;
  while (auto sub = v.getDefiningOp<memref::SubViewOp>()) {
    llvm::SmallBitVector dropped = sub.getDroppedDims();
    SmallVector<unsigned> sourceOf;
    for (unsigned s = 0; s < dropped.size(); ++s)
      if (!dropped.test(s))
        sourceOf.push_back(s);
    SmallVector<OpFoldResult> offsets = sub.getMixedOffsets(),
                              sizes = sub.getMixedSizes(),
                              strides = sub.getMixedStrides();
    // Rows found closer to the op: the same row of the source.
    for (Candidate &c : found) {
      c.dim = sourceOf[c.dim];
      std::optional<int64_t> off = getConstantIntValue(offsets[c.dim]);
      if (!off || getConstantIntValue(strides[c.dim]) != 1)
        return std::nullopt;
      c.offset += *off;
    }
    for (unsigned s = 0; s < offsets.size(); ++s) {
      auto row = dyn_cast<Value>(offsets[s]);
      if (!row)
        continue;
      if (getConstantIntValue(sizes[s]) != 1 ||
          getConstantIntValue(strides[s]) != 1)
        return std::nullopt;
      found.push_back({s, row, 0});
    }
    v = sub.getSource();
  }
  auto root = dyn_cast<MemRefType>(v.getType());
  if (!root || !root.hasStaticShape())
    return std::nullopt;
  // A dimension of one row has one place (the batch index of [1, T] ids).
  std::optional<ScatteredRow> result;
  for (const Candidate &c : found) {
    int64_t rows = root.getDimSize(c.dim);
    if (rows == 1)
      continue;
    if (result)
      return std::nullopt;
    result = ScatteredRow{c.dim, c.row, c.offset, rows};
  }
  return result;
}

int64_t mlir::zero::cuda::gpuScatterParts(int64_t rows, double threads) {
  if (rows <= 1 || threads <= 0)
    return 1;
  int64_t want = std::max<int64_t>(1, int64_t(kScatterThreads / threads));
  int64_t parts = std::min({rows, want, kMaxGridYZ});
  // As many parts as whole chunks need: none empty.
  int64_t chunk = llvm::divideCeil(rows, parts);
  return llvm::divideCeil(rows, chunk);
}

double mlir::zero::cuda::gpuLoopThreads(scf::ForOp loop,
                                        int64_t threadsPerBlock) {
  linalg::LinalgOp op;
  SmallVector<Value> written;
  for (Operation &inner : loop.getBody()->without_terminator()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(inner);
    if (linalgOp ? bool(op) : inner.getNumRegions() != 0)
      return 1;
    if (linalgOp)
      op = linalgOp;
    // Before kernels are mapped, the row is written by a copy of the op's
    // result.
    if (auto copy = dyn_cast<memref::CopyOp>(inner))
      written.push_back(copy.getTarget());
  }
  if (!op || op.getNumParallelLoops() == 0)
    return 1;
  double threads = gpuThreads(op, threadsPerBlock);
  written.append(op.getDpsInits().begin(), op.getDpsInits().end());
  for (Value v : written)
    if (std::optional<ScatteredRow> row = scatteredRow(v))
      return threads * double(gpuScatterParts(row->rows, threads));
  return threads;
}

std::optional<unsigned> zero::cuda::rowLane(linalg::LinalgOp op,
                                            int64_t rowDims) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  for (int64_t d = static_cast<int64_t>(iterators.size()) - 1; d >= rowDims;
       --d) {
    if (iterators[d] != utils::IteratorType::parallel)
      continue;
    if (ShapedType::isDynamic(extents[d]) || extents[d] % kRowLanes != 0 ||
        !zero::indexesLoopWhole(op, d))
      return std::nullopt;
    return static_cast<unsigned>(d);
  }
  return std::nullopt;
}

std::optional<zero::WrittenRegion>
zero::cuda::rowGroupRegion(linalg::LinalgOp op, int64_t rowDims) {
  std::optional<zero::WrittenRegion> region = zero::writtenRegionOf(op);
  int64_t n = op.getNumLoops();
  if (!region || n - 2 >= rowDims || rowLane(op, rowDims) != unsigned(n - 1))
    return std::nullopt;
  return region->rounded(kRowLanes);
}

double zero::cuda::rowGroupThreads(zero::RowGroupOp group) {
  return double(group.getNumRows()) * double(kRowLanes);
}

int64_t zero::cuda::rowsPerBlock(int64_t innermostRows,
                                 int64_t threadsPerBlock) {
  return std::gcd(innermostRows,
                  std::max<int64_t>(1, threadsPerBlock / kRowLanes));
}

FailureOr<SmallVector<scf::ForallOp>>
zero::cuda::threadForalls(scf::ForallOp blocks) {
  SmallVector<scf::ForallOp> found;
  for (Operation &op : blocks.getBody()->without_terminator()) {
    if (op.getNumRegions() == 0)
      continue;
    auto forall = dyn_cast<scf::ForallOp>(op);
    if (!forall)
      return failure();
    found.push_back(forall);
  }
  if (found.empty())
    return failure();
  return found;
}

scf::ForallOp zero::cuda::threadForall(scf::ForallOp blocks) {
  scf::ForallOp found;
  for (Operation &op : blocks.getBody()->without_terminator()) {
    if (op.getNumRegions() == 0)
      continue;
    auto forall = dyn_cast<scf::ForallOp>(op);
    if (!forall || found)
      return nullptr;
    found = forall;
  }
  return found;
}

FailureOr<SmallVector<unsigned>> zero::cuda::mappedIds(scf::ForallOp forall,
                                                       bool threads) {
  std::optional<ArrayAttr> mapping = forall.getMapping();
  if (!mapping || static_cast<int64_t>(mapping->size()) != forall.getRank())
    return failure();
  SmallVector<unsigned> ids;
  for (Attribute a : *mapping) {
    auto m = dyn_cast<DeviceMappingAttrInterface>(a);
    bool right = threads ? isa<gpu::GPUThreadMappingAttr>(a)
                         : isa<gpu::GPUBlockMappingAttr>(a);
    if (!m || !right || m.getMappingId() > 2)
      return failure();
    ids.push_back(m.getMappingId());
  }
  return ids;
}
