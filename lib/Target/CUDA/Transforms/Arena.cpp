//===- Arena.cpp - the step's device buffers at static offsets -*- C++ -*-===//
//
// A GPU step allocates nothing at run time: the memory plan already knows
// when each buffer is born and dies, so every allocation gets a fixed
// offset in one device block (the arena) that the runtime allocates once.
// The layout is exact and visible before launch (plan.json), and a step
// costs no allocator calls or device synchronizations.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Conversion/RuntimeFunctions.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MathExtras.h"

#include <functional>
#include <limits>

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUARENA
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;
using namespace mlir::zero;

namespace {

/// A buffer's bytes and the span of the replay's clock it is live in,
/// [start, end).
struct Lifetime {
  int64_t bytes, start, end;
};

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

/// Placement in `order`: each buffer takes the lowest gap that holds it
/// among the placed buffers whose lifetimes meet its own. In allocation
/// order those are the buffers live when it is allocated: first fit.
int64_t packInOrder(ArrayRef<Lifetime> buffers, ArrayRef<size_t> order,
                    int64_t alignment, SmallVectorImpl<int64_t> &offsets) {
  offsets.assign(buffers.size(), 0);
  SmallVector<size_t> placed;
  SmallVector<std::pair<int64_t, int64_t>> taken; // offset, bytes
  int64_t top = 0;
  for (size_t i : order) {
    const Lifetime &b = buffers[i];
    taken.clear();
    for (size_t j : placed)
      if (buffers[j].start < b.end && b.start < buffers[j].end)
        taken.push_back({offsets[j], buffers[j].bytes});
    llvm::sort(taken);
    int64_t at = 0;
    for (auto [offset, size] : taken) {
      if (at + b.bytes <= offset)
        break;
      at = std::max(at, (int64_t)llvm::alignTo(offset + size, alignment));
    }
    offsets[i] = at;
    top = std::max(top, at + b.bytes);
    placed.push_back(i);
  }
  return top;
}

struct ZeroGPUArenaPass : zero::cuda::impl::ZeroGPUArenaBase<ZeroGPUArenaPass> {
  using Base::Base;

  void runOnOperation() override {
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
      getOperation().emitError()
          << "zero-gpu-arena: alignment " << alignment.getValue()
          << " is not a power of two";
      return signalPassFailure();
    }
    for (auto fn : llvm::to_vector(getOperation().getOps<func::FuncOp>())) {
      if (fn.isExternal() || fn->hasAttr(kKernelAttr))
        continue;
      if (failed(run(fn)))
        return signalPassFailure();
    }
  }

private:
  struct Placed {
    Operation *op; ///< memref.alloc or memref.get_global
    int64_t offset, bytes;
  };

  LogicalResult run(func::FuncOp fn);
  LogicalResult replay(Block &block, bool top, int64_t &clock,
                       DenseMap<Operation *, size_t> &index,
                       SmallVector<Placed> &placed,
                       SmallVector<Lifetime> &lifetimes);
  void record(func::FuncOp fn, int64_t bytes, ArrayRef<Placed> placed);
};

LogicalResult ZeroGPUArenaPass::replay(Block &block, bool top, int64_t &clock,
                                       DenseMap<Operation *, size_t> &index,
                                       SmallVector<Placed> &placed,
                                       SmallVector<Lifetime> &lifetimes) {
  SmallVector<Operation *> here;
  for (Operation &op : block) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      MemRefType t = alloc.getType();
      if (!t.hasStaticShape() || !t.getLayout().isIdentity())
        return alloc.emitError()
               << "the CUDA target places every buffer in the arena at a "
                  "static offset, which needs a static identity-layout "
                  "buffer, not "
               << t;
      int64_t bytes = bufferBytes(t);
      index[alloc] = placed.size();
      placed.push_back({alloc, 0, bytes});
      lifetimes.push_back({bytes, clock++, kForever});
      here.push_back(alloc);
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      Operation *alloc = rootBuffer(dealloc.getMemref()).getDefiningOp();
      auto it = alloc ? index.find(alloc) : index.end();
      if (it == index.end())
        return dealloc.emitError()
               << "deallocates a buffer the step did not allocate";
      // Freed where it was allocated: the space is free from here on. A
      // conditional free keeps the block to the end of its region.
      if (alloc->getBlock() == dealloc->getBlock()) {
        lifetimes[it->second].end = clock++;
        llvm::erase(here, alloc);
      }
      continue;
    }
    for (Region &region : op.getRegions())
      for (Block &nested : region)
        if (failed(
                replay(nested, /*top=*/false, clock, index, placed, lifetimes)))
          return failure();
  }
  if (!top && !here.empty())
    return here.front()->emitError()
           << "is allocated inside a loop or conditional and not freed in "
              "it, so it cannot have one offset in the arena";
  return success();
}

void ZeroGPUArenaPass::record(func::FuncOp fn, int64_t bytes,
                              ArrayRef<Placed> placed) {
  ModuleOp module = getOperation();
  Builder b(&getContext());
  SmallVector<Attribute> buffers;
  for (const Placed &p : placed) {
    SmallVector<NamedAttribute> entry = {
        b.getNamedAttr("offset", b.getI64IntegerAttr(p.offset)),
        b.getNamedAttr("bytes", b.getI64IntegerAttr(p.bytes))};
    if (isa<memref::GetGlobalOp>(p.op)) {
      entry.push_back(b.getNamedAttr("category", b.getStringAttr("constant")));
    } else {
      entry.push_back(b.getNamedAttr(
          "category",
          b.getStringAttr(stringifyMemoryCategory(allocCategory(p.op)))));
      StringRef node = nodeName(p.op->getLoc());
      if (!node.empty())
        entry.push_back(b.getNamedAttr("node", b.getStringAttr(node)));
    }
    buffers.push_back(b.getDictionaryAttr(entry));
  }
  auto arena = b.getDictionaryAttr(
      {b.getNamedAttr("bytes", b.getI64IntegerAttr(bytes)),
       b.getNamedAttr("alignment", b.getI64IntegerAttr(alignment.getValue())),
       b.getNamedAttr("buffers", b.getArrayAttr(buffers))});
  NamedAttrList functions;
  if (auto memory = module->getAttrOfType<DictionaryAttr>("zero.memory"))
    functions = NamedAttrList(memory);
  NamedAttrList entry;
  if (auto mem = functions.get(fn.getName()))
    entry = NamedAttrList(cast<DictionaryAttr>(mem));
  entry.set("arena", arena);
  functions.set(fn.getName(), entry.getDictionary(&getContext()));
  module->setAttr("zero.memory", functions.getDictionary(&getContext()));
}

LogicalResult ZeroGPUArenaPass::run(func::FuncOp fn) {
  SmallVector<Placed> placed;
  SmallVector<Lifetime> lifetimes;
  DenseMap<Operation *, size_t> index;
  // Constants first: one block each for the whole step.
  SmallVector<memref::GetGlobalOp> globals;
  fn.walk([&](memref::GetGlobalOp g) { globals.push_back(g); });
  int64_t clock = 0;
  for (memref::GetGlobalOp g : globals) {
    MemRefType t = g.getType();
    if (!t.hasStaticShape() || !t.getLayout().isIdentity())
      return g.emitError() << "the CUDA target copies constants into the "
                              "arena, which needs a static identity-layout "
                              "global, not "
                           << t;
    int64_t bytes = bufferBytes(t);
    placed.push_back({g, 0, bytes});
    lifetimes.push_back({bytes, clock++, kForever});
  }
  if (failed(replay(fn.getBody().front(), /*top=*/true, clock, index, placed,
                    lifetimes)))
    return failure();
  // Sizes in whole alignment units, so that every offset stays aligned.
  for (Lifetime &l : lifetimes)
    l.bytes = llvm::alignTo(std::max<int64_t>(l.bytes, 1), alignment);
  // The smallest of a few layouts: first fit in program order, and offline
  // placements (each O(buffers^2) at most) of the peak's buffers first,
  // then by decreasing size, and by decreasing size x lifetime; none is
  // always the smallest.
  SmallVector<int64_t> best;
  int64_t bytes = packInOrder(
      lifetimes, llvm::to_vector(llvm::seq<size_t>(0, lifetimes.size())),
      alignment, best);
  auto length = [&](size_t i) {
    const Lifetime &l = lifetimes[i];
    return (l.end == kForever ? clock : l.end) - l.start;
  };
  // The moment most bytes are live: its buffers, placed first and largest
  // first, lie end to end, so the arena's size starts at the plan's peak.
  SmallVector<std::pair<int64_t, int64_t>> deltas; // time, +/- bytes
  for (const Lifetime &l : lifetimes) {
    deltas.push_back({l.start, l.bytes});
    if (l.end != kForever)
      deltas.push_back({l.end, -l.bytes});
  }
  llvm::sort(deltas);
  int64_t liveBytes = 0, peakBytes = -1, peakTime = 0;
  for (auto [time, delta] : deltas) {
    liveBytes += delta;
    if (liveBytes > peakBytes) {
      peakBytes = liveBytes;
      peakTime = time;
    }
  }
  auto atPeak = [&](size_t i) {
    return int64_t(
        !(lifetimes[i].start <= peakTime && peakTime < lifetimes[i].end));
  };
  SmallVector<std::function<std::tuple<int64_t, int64_t, int64_t>(size_t)>>
      keys = {[&](size_t i) {
                return std::make_tuple(atPeak(i), -lifetimes[i].bytes,
                                       lifetimes[i].start);
              },
              [&](size_t i) {
                return std::make_tuple(-lifetimes[i].bytes, lifetimes[i].start,
                                       int64_t(0));
              },
              [&](size_t i) {
                return std::make_tuple(-lifetimes[i].bytes * length(i),
                                       lifetimes[i].start, int64_t(0));
              }};
  SmallVector<int64_t> candidate;
  for (auto &key : keys) {
    SmallVector<size_t> order =
        llvm::to_vector(llvm::seq<size_t>(0, lifetimes.size()));
    llvm::sort(order, [&](size_t a, size_t b) { return key(a) < key(b); });
    int64_t size = packInOrder(lifetimes, order, alignment, candidate);
    if (size < bytes) {
      bytes = size;
      best = candidate;
    }
  }
  ArrayRef<int64_t> offsets = best;
  for (auto [p, offset] : llvm::zip(placed, offsets))
    p.offset = offset;
  record(fn, bytes, placed);
  if (placed.empty())
    return success();

  // The arena as a memref, from the runtime's base address.
  MLIRContext *ctx = &getContext();
  Location loc = fn.getLoc();
  OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
  func::FuncOp arenaFn = lookupOrDeclareRuntimeFunction(
      getOperation(), RuntimeFunction::CudaArena);
  Value size = arith::ConstantIntOp::create(b, loc, bytes, 64);
  Value base = func::CallOp::create(b, loc, arenaFn, size).getResult(0);
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  Value ptr = LLVM::IntToPtrOp::create(b, loc, ptrTy, base);
  auto arenaTy = MemRefType::get({bytes}, b.getI8Type());
  LLVMTypeConverter converter(ctx);
  Value desc =
      MemRefDescriptor::fromStaticShape(b, loc, converter, arenaTy, ptr);
  auto cast = UnrealizedConversionCastOp::create(b, loc, arenaTy, desc);
  cast->setAttr(kArenaAttr, b.getUnitAttr());
  Value arena = cast.getResult(0);

  auto view = [&](OpBuilder &at, Location l, int64_t offset, MemRefType t) {
    Value off = arith::ConstantIndexOp::create(at, l, offset);
    return memref::ViewOp::create(at, l, t, arena, off, ValueRange{});
  };
  // Constants: their blocks are no other buffer's, so they are copied from
  // the host only when the arena may have lost them (a new arena, or
  // another step ran in it): the step claims the arena under an address of
  // its own, a global of this module.
  if (!globals.empty()) {
    Operation *last = arena.getDefiningOp();
    SmallVector<std::pair<Value, Value>> fills; // device view, host global
    for (const Placed &p : placed) {
      auto g = dyn_cast<memref::GetGlobalOp>(p.op);
      if (!g)
        continue;
      g->moveAfter(last);
      b.setInsertionPointAfter(g);
      Value dst = view(b, g.getLoc(), p.offset, g.getType());
      g.getResult().replaceAllUsesExcept(dst, dst.getDefiningOp());
      fills.push_back({dst, g.getResult()});
      last = dst.getDefiningOp();
    }
    b.setInsertionPointAfter(last);
    ModuleOp module = getOperation();
    std::string ownerName = ("__zero_arena_owner_" + fn.getName()).str();
    auto ownerTy = MemRefType::get({}, b.getI8Type());
    if (!module.lookupSymbol(ownerName)) {
      OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
      memref::GlobalOp::create(
          mb, loc, ownerName, mb.getStringAttr("private"), ownerTy,
          DenseElementsAttr::get(RankedTensorType::get({}, mb.getI8Type()),
                                 mb.getI8IntegerAttr(0)),
          /*constant=*/false, IntegerAttr());
    }
    Value owner = memref::GetGlobalOp::create(b, loc, ownerTy, ownerName);
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, owner);
    Value id = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    func::FuncOp claimFn = lookupOrDeclareRuntimeFunction(
        module, RuntimeFunction::CudaArenaClaim);
    Value claimed = func::CallOp::create(b, loc, claimFn, id).getResult(0);
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 32);
    Value changed = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          claimed, zero);
    auto fill = scf::IfOp::create(b, loc, changed, /*withElseRegion=*/false);
    OpBuilder in = OpBuilder::atBlockTerminator(fill.thenBlock());
    auto tokenTy = gpu::AsyncTokenType::get(ctx);
    for (auto [dst, src] : fills) {
      Value stream =
          gpu::WaitOp::create(in, loc, tokenTy, ValueRange{}).getAsyncToken();
      gpu::MemcpyOp::create(in, loc, tokenTy, ValueRange{stream}, dst, src);
    }
  }
  for (const Placed &p : placed) {
    auto alloc = dyn_cast<memref::AllocOp>(p.op);
    if (!alloc)
      continue;
    OpBuilder at(alloc);
    Value v = view(at, alloc.getLoc(), p.offset, alloc.getType());
    alloc.getResult().replaceAllUsesWith(v);
    alloc.erase();
  }
  fn.walk([](memref::DeallocOp d) { d.erase(); });
  return success();
}

} // namespace
