//===- MapKernels.cpp - kernels tiled to GPU blocks and threads -*- C++ -*-===//
//
// Only parallel dimensions are distributed: a thread computes whole output
// elements, reducing in the op's loop order, so the mapped kernel gives the
// same sums whether its foralls run on a GPU or one after another on the
// CPU, which is how its numerics are checked without one.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Target/CUDA/Mapping.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUMAPKERNELS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// A copy tiles only as linalg.copy.
struct CopyToLinalg : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, ValueRange{op.getSource()},
                                                ValueRange{op.getTarget()});
    return success();
  }
};

/// `tiles` as the mapping attributes of the loops tiling creates (one per
/// non-zero tile, outermost first).
template <typename MappingAttr>
SmallVector<Attribute> mappingOf(MLIRContext *ctx, ArrayRef<int64_t> tiles) {
  unsigned mapped = llvm::count_if(tiles, [](int64_t t) { return t != 0; });
  SmallVector<Attribute> mapping;
  unsigned id = mapped;
  for (int64_t t : tiles)
    if (t != 0)
      mapping.push_back(MappingAttr::get(
          ctx, static_cast<gpu::MappingId>(
                   static_cast<uint64_t>(gpu::MappingId::DimX) + --id)));
  return mapping;
}

struct ZeroGPUMapKernelsPass
    : zero::cuda::impl::ZeroGPUMapKernelsBase<ZeroGPUMapKernelsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  LogicalResult prepare(func::FuncOp kernel);
  LogicalResult mapToGrid(RewriterBase &rewriter, linalg::LinalgOp op);
  void mapSerial(RewriterBase &rewriter, Operation *op);
};

LogicalResult ZeroGPUMapKernelsPass::prepare(func::FuncOp kernel) {
  MLIRContext *ctx = &getContext();
  RewritePatternSet copies(ctx);
  copies.add<CopyToLinalg>(ctx);
  if (failed(applyPatternsGreedily(kernel, std::move(copies))))
    return kernel.emitError("copies did not converge");
  IRRewriter rewriter(ctx);
  SmallVector<linalg::LinalgOp> named;
  kernel.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp>(op))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::generalizeNamedOp(rewriter, op)))
      return op.emitError("cannot be written as a linalg.generic");
  }
  // Fewer dimensions leave fewer of them serial in a thread.
  RewritePatternSet unitDims(ctx);
  linalg::ControlDropUnitDims control;
  control.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  linalg::populateFoldUnitExtentDimsPatterns(unitDims, control);
  // As upstream's pass: what did not fold in the iteration limit is still
  // valid IR, only with more dimensions.
  (void)applyPatternsGreedily(kernel, std::move(unitDims));
  return success();
}

LogicalResult ZeroGPUMapKernelsPass::mapToGrid(RewriterBase &rewriter,
                                               linalg::LinalgOp op) {
  MLIRContext *ctx = &getContext();
  SmallVector<int64_t> tiles = zero::cuda::gpuBlockTiles(op, threadsPerBlock);
  SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(ctx, tiles);

  scf::SCFTilingOptions blocks;
  blocks.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
      .setTileSizes(sizes)
      .setMapping(mappingOf<gpu::GPUBlockMappingAttr>(ctx, tiles));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> grid = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), blocks);
  if (failed(grid))
    return op.emitError("cannot be tiled to GPU blocks");
  rewriter.eraseOp(op);

  // The block's tile over as many threads, so the thread forall is static
  // even where the tile is partial.
  auto tiled = cast<TilingInterface>(grid->tiledOps.back());
  scf::SCFTilingOptions threads;
  threads.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp)
      .setNumThreads(sizes)
      .setMapping(mappingOf<gpu::GPUThreadMappingAttr>(ctx, tiles));
  rewriter.setInsertionPoint(tiled);
  if (failed(scf::tileUsingSCF(rewriter, tiled, threads)))
    return tiled->emitError("cannot be tiled to GPU threads");
  rewriter.eraseOp(tiled);
  return success();
}

void ZeroGPUMapKernelsPass::mapSerial(RewriterBase &rewriter, Operation *op) {
  MLIRContext *ctx = &getContext();
  Location loc = op->getLoc();
  SmallVector<OpFoldResult> one = {rewriter.getIndexAttr(1)};
  rewriter.setInsertionPoint(op);
  auto block = scf::ForallOp::create(
      rewriter, loc, one, ValueRange{},
      rewriter.getArrayAttr(
          {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
  rewriter.setInsertionPointToStart(block.getBody());
  auto thread = scf::ForallOp::create(
      rewriter, loc, one, ValueRange{},
      rewriter.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimZ)}));
  op->moveBefore(thread.getBody()->getTerminator());
  // A device has no allocator worth calling per element: fixed-size
  // buffers become the thread's stack, allocated once.
  SmallVector<memref::AllocOp> allocs;
  op->walk([&](memref::AllocOp alloc) {
    if (alloc.getType().hasStaticShape() && alloc.getDynamicSizes().empty())
      allocs.push_back(alloc);
  });
  for (memref::AllocOp alloc : allocs) {
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        rewriter.eraseOp(user);
    rewriter.setInsertionPointToStart(thread.getBody());
    rewriter.replaceOpWithNewOp<memref::AllocaOp>(alloc, alloc.getType(),
                                                  alloc.getAlignmentAttr());
  }
}

void ZeroGPUMapKernelsPass::runOnOperation() {
  if (threadsPerBlock < 32 || threadsPerBlock > 1024 ||
      !llvm::isPowerOf2_64(threadsPerBlock)) {
    getOperation().emitError()
        << "threads-per-block is " << static_cast<int64_t>(threadsPerBlock)
        << "; give a power of two from 32 to 1024";
    return signalPassFailure();
  }
  IRRewriter rewriter(&getContext());
  int64_t launches = 0;
  for (auto kernel : getOperation().getOps<func::FuncOp>()) {
    if (kernel.isExternal() || !kernel->hasAttr(zero::kKernelAttr))
      continue;
    if (failed(prepare(kernel)))
      return signalPassFailure();
    for (Operation &op :
         llvm::make_early_inc_range(kernel.getBody().getOps())) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && linalgOp.getNumParallelLoops() > 0) {
        if (failed(mapToGrid(rewriter, linalgOp)))
          return signalPassFailure();
        ++launches;
        continue;
      }
      if (linalgOp || (op.getNumRegions() > 0 && !isa<scf::ForallOp>(op))) {
        mapSerial(rewriter, &op);
        ++launches;
      }
    }
  }
  // Next to zero-form-kernels' counts, for --time-report.
  ModuleOp module = getOperation();
  NamedAttrList counts;
  if (auto kernels = module->getAttrOfType<DictionaryAttr>("zero.kernels"))
    counts.append(kernels.getValue());
  counts.set("gpu_launches", rewriter.getI64IntegerAttr(launches));
  module->setAttr("zero.kernels", counts.getDictionary(&getContext()));
}

} // namespace
