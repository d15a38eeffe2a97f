//===- OutlineKernels.cpp - mapped kernels as GPU launches -----*- C++ -*-===//
//
// The launches are formed here rather than by upstream's forall-to-block
// mapping: the block forall's iteration count is the grid and the thread
// forall's the block, exactly, so no thread needs a guard, and a grid
// never silently drops dimensions. All device functions go into one
// gpu.module, which becomes one cubin: one ptxas run and one module load
// per step instead of one per launch.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Target/CUDA/Mapping.h"

#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUOUTLINEKERNELS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

struct ZeroGPUOutlineKernelsPass
    : zero::cuda::impl::ZeroGPUOutlineKernelsBase<ZeroGPUOutlineKernelsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  FailureOr<gpu::LaunchOp> formLaunch(RewriterBase &rewriter,
                                      scf::ForallOp blocks);
};

FailureOr<gpu::LaunchOp>
ZeroGPUOutlineKernelsPass::formLaunch(RewriterBase &rewriter,
                                      scf::ForallOp blocks) {
  FailureOr<SmallVector<scf::ForallOp>> phases =
      zero::cuda::threadForalls(blocks);
  auto blockIds = zero::cuda::mappedIds(blocks, /*threads=*/false);
  if (failed(blockIds) || failed(phases))
    return blocks.emitError("is not a block forall holding normalized "
                            "thread foralls (run zero-gpu-map-kernels)");
  // The block: each thread id as far as the phase that goes furthest.
  SmallVector<SmallVector<unsigned>> threadIds;
  SmallVector<int64_t> blockSize(3, 1);
  for (scf::ForallOp threads : *phases) {
    FailureOr<SmallVector<unsigned>> ids =
        zero::cuda::mappedIds(threads, /*threads=*/true);
    if (failed(ids) || !threads.isNormalized())
      return threads.emitError("is not a normalized forall over thread ids "
                               "(run zero-gpu-map-kernels)");
    ArrayRef<int64_t> counts = threads.getStaticUpperBound();
    if (llvm::any_of(counts, ShapedType::isDynamic))
      return threads.emitError("has a dynamic number of threads");
    for (auto [d, id] : llvm::enumerate(*ids))
      blockSize[id] = std::max(blockSize[id], counts[d]);
    threadIds.push_back(std::move(*ids));
  }

  Location loc = blocks.getLoc();
  rewriter.setInsertionPoint(blocks);
  DenseMap<int64_t, Value> constants;
  auto index = [&](int64_t v) {
    Value &c = constants[v];
    if (!c)
      c = arith::ConstantIndexOp::create(rewriter, loc, v);
    return c;
  };
  Value one = index(1);
  SmallVector<Value> grid(3, one), block;
  SmallVector<Value> lbs = getValueOrCreateConstantIndexOp(
      rewriter, loc, blocks.getMixedLowerBound());
  SmallVector<Value> ubs = getValueOrCreateConstantIndexOp(
      rewriter, loc, blocks.getMixedUpperBound());
  SmallVector<Value> steps =
      getValueOrCreateConstantIndexOp(rewriter, loc, blocks.getMixedStep());
  for (auto [d, id] : llvm::enumerate(*blockIds)) {
    std::optional<int64_t> l = getConstantIntValue(
                               blocks.getMixedLowerBound()[d]),
                           u = getConstantIntValue(
                               blocks.getMixedUpperBound()[d]),
                           s = getConstantIntValue(blocks.getMixedStep()[d]);
    if (l && u && s) {
      grid[id] = index(llvm::divideCeil(*u - *l, *s));
      continue;
    }
    Value extent = arith::SubIOp::create(rewriter, loc, ubs[d], lbs[d]);
    grid[id] = arith::CeilDivSIOp::create(rewriter, loc, extent, steps[d]);
  }
  for (int64_t size : blockSize)
    block.push_back(index(size));
  auto launch = gpu::LaunchOp::create(rewriter, loc, grid[0], grid[1], grid[2],
                                      block[0], block[1], block[2]);
  Block &body = launch.getBody().front();
  rewriter.setInsertionPointToEnd(&body);
  auto terminator = gpu::TerminatorOp::create(rewriter, loc);

  // Block forall ivs from the block ids, thread forall ivs are the ids.
  rewriter.setInsertionPoint(terminator);
  gpu::KernelDim3 bid = launch.getBlockIds(), tid = launch.getThreadIds();
  Value bids[] = {bid.x, bid.y, bid.z}, tids[] = {tid.x, tid.y, tid.z};
  SmallVector<Value> blockIvs;
  for (auto [d, id] : llvm::enumerate(*blockIds)) {
    Value scaled = arith::MulIOp::create(rewriter, loc, bids[id], steps[d]);
    blockIvs.push_back(arith::AddIOp::create(rewriter, loc, lbs[d], scaled));
  }
  rewriter.eraseOp(blocks.getBody()->getTerminator());
  rewriter.inlineBlockBefore(blocks.getBody(), terminator, blockIvs);
  // Each phase on the threads it has (the others pass), every thread at
  // the barrier after it before the next phase starts.
  for (auto [i, threads] : llvm::enumerate(*phases)) {
    rewriter.setInsertionPoint(threads);
    // Its count per id: 1 where it maps none.
    SmallVector<int64_t> counts(3, 1);
    for (auto [d, id] : llvm::enumerate(threadIds[i]))
      counts[id] = threads.getStaticUpperBound()[d];
    Value active;
    for (auto [id, count] : llvm::enumerate(counts)) {
      if (count == blockSize[id])
        continue;
      Value in = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult,
                                       tids[id], index(count));
      active = active ? arith::AndIOp::create(rewriter, loc, active, in) : in;
    }
    Operation *placed = threads;
    if (active) {
      auto guard = scf::IfOp::create(rewriter, loc, active);
      rewriter.moveOpBefore(threads, guard.thenBlock()->getTerminator());
      placed = guard;
    }
    if (i + 1 < phases->size()) {
      rewriter.setInsertionPointAfter(placed);
      gpu::BarrierOp::create(rewriter, loc);
    }
    SmallVector<Value> threadIvs;
    for (unsigned id : threadIds[i])
      threadIvs.push_back(tids[id]);
    rewriter.eraseOp(threads.getBody()->getTerminator());
    rewriter.inlineBlockBefore(threads.getBody(), threads, threadIvs);
    rewriter.eraseOp(threads);
  }
  rewriter.eraseOp(blocks);
  return launch;
}

/// Records on `fn` (outlined from `kernel`, called with `operands`) the
/// LLVM parameters of the buffers no other parameter reaches: the aligned
/// pointer of each memref operand that is the only one viewing a kernel
/// argument `noAlias` marks. Each such buffer is then reached by one
/// pointer, which LLVM may assume no store through another changes: it
/// keeps a thread's accumulators in registers and issues loads early.
void recordNoAlias(gpu::GPUFuncOp fn, func::FuncOp kernel,
                   ArrayRef<Value> operands, ArrayRef<bool> noAlias) {
  // The kernel's argument each memref operand views (null for others).
  auto argumentOf = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(zero::rootBuffer(v));
    return isa<MemRefType>(v.getType()) && arg &&
                   arg.getOwner() == &kernel.getBody().front()
               ? arg
               : BlockArgument();
  };
  DenseMap<BlockArgument, unsigned> views;
  for (Value v : operands)
    if (BlockArgument arg = argumentOf(v))
      ++views[arg];
  SmallVector<int64_t> params;
  int64_t position = 0;
  for (Value v : operands) {
    std::optional<int64_t> count = zero::llvmParameterCount(v.getType());
    if (!count)
      return;
    BlockArgument arg = argumentOf(v);
    if (arg && noAlias[arg.getArgNumber()] && views[arg] == 1)
      params.push_back(position + 1);
    position += *count;
  }
  if (!params.empty())
    fn->setAttr(zero::kNoAliasParamsAttr,
                DenseI64ArrayAttr::get(fn.getContext(), params));
}

void ZeroGPUOutlineKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  IRRewriter rewriter(ctx);
  SmallVector<std::pair<func::FuncOp, SmallVector<scf::ForallOp>>> kernels;
  SymbolTableCollection symbols;
  SymbolUserMap users(symbols, module);
  DenseMap<func::FuncOp, SmallVector<bool>> noAlias;
  for (auto kernel : module.getOps<func::FuncOp>()) {
    if (kernel.isExternal() || !kernel->hasAttr(zero::kKernelAttr))
      continue;
    SmallVector<scf::ForallOp> foralls;
    for (auto forall : kernel.getBody().getOps<scf::ForallOp>())
      foralls.push_back(forall);
    if (foralls.empty())
      continue;
    noAlias[kernel] = zero::noAliasArguments(kernel, users);
    kernels.push_back({kernel, std::move(foralls)});
  }
  if (kernels.empty())
    return;

  rewriter.setInsertionPointToEnd(module.getBody());
  auto device = gpu::GPUModuleOp::create(rewriter, module.getLoc(),
                                         moduleName.getValue());
  SymbolTable(module).insert(device);
  SymbolTable deviceSymbols(device);
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(ctx));
  for (auto &[kernel, foralls] : kernels) {
    for (auto [i, forall] : llvm::enumerate(foralls)) {
      FailureOr<gpu::LaunchOp> launch = formLaunch(rewriter, forall);
      if (failed(launch))
        return signalPassFailure();
      // Constants are cheaper to rematerialize than to pass.
      if (failed(sinkOperationsIntoLaunchOp(*launch, [](Operation *op) {
            return op->hasTrait<OpTrait::ConstantLike>();
          })))
        return signalPassFailure();
      SmallVector<Value> operands;
      std::string name = (kernel.getName() + "_" + Twine(i)).str();
      gpu::GPUFuncOp fn = outlineKernelFunc(*launch, name, operands);
      recordNoAlias(fn, kernel, operands, noAlias[kernel]);
      deviceSymbols.insert(fn);
      rewriter.setInsertionPoint(*launch);
      gpu::LaunchFuncOp::create(rewriter, launch->getLoc(), fn,
                                launch->getGridSizeOperandValues(),
                                launch->getBlockSizeOperandValues(),
                                launch->getDynamicSharedMemorySize(), operands);
      rewriter.eraseOp(*launch);
    }
  }
}

} // namespace
