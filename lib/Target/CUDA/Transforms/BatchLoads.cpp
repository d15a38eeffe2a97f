//===- BatchLoads.cpp - a thread's loads issued several at a time -*- C++ -*-=//
//
// A GPU thread runs its serial loops in order and waits for each load at
// its first use: a reduction over a row loads one element, adds it, and
// only then issues the next load, one memory latency per iteration. The
// loop is unrolled by a batch, and the loads of the batch's iterations
// (with the index arithmetic they need) move ahead of the iterations'
// other work, so a batch's loads are in flight together. A load moves
// only over stores to buffers it cannot overlap; the arithmetic keeps its
// order, so the values are the same.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUBATCHLOADS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// What may share memory with what in one kernel function.
struct Aliasing {
  Operation *fn;
  SmallVector<bool> noAlias; ///< per argument: overlaps no other

  /// Fresh storage: no other value's unless a view of it.
  bool distinct(Value root) const {
    if (auto arg = dyn_cast<BlockArgument>(root))
      return arg.getOwner()->isEntryBlock() &&
             arg.getOwner()->getParentOp() == fn && noAlias[arg.getArgNumber()];
    return isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(
        root.getDefiningOp());
  }

  bool disjoint(Value a, Value b) const {
    Value ra = zero::rootBuffer(a), rb = zero::rootBuffer(b);
    if (ra == rb)
      return !zero::mayOverlap(a, b);
    if (distinct(ra) || distinct(rb))
      return true;
    auto ga = ra.getDefiningOp<memref::GetGlobalOp>();
    auto gb = rb.getDefiningOp<memref::GetGlobalOp>();
    return ga && gb && ga.getName() != gb.getName();
  }
};

/// The buffers `body`'s ops write, or failure where an op's effects are
/// unknown or a write names no buffer (a barrier, a call).
FailureOr<SmallVector<Value>> writtenBuffers(Block &body) {
  SmallVector<Value> written;
  for (Operation &op : body.without_terminator()) {
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(&op);
    if (!effects)
      return failure();
    for (const MemoryEffects::EffectInstance &e : *effects) {
      if (isa<MemoryEffects::Read>(e.getEffect()))
        continue;
      Value v = e.getValue();
      if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(e.getEffect()) &&
          !v)
        continue;
      if (!v || !isa<BaseMemRefType>(v.getType()))
        return failure();
      written.push_back(v);
    }
  }
  return written;
}

/// Whether `op` may move ahead of the loop body's other work: it computes,
/// or it only loads from buffers nothing in the body writes (and may hold
/// such ops in its regions, a guarded load's scf.if).
bool movable(Operation *op, ArrayRef<Value> written, const Aliasing &alias) {
  if (op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return llvm::all_of(
        written, [&](Value w) { return alias.disjoint(load.getMemRef(), w); });
  if (op->getNumRegions() == 0)
    return isMemoryEffectFree(op);
  if (!isa<scf::IfOp>(op))
    return false;
  WalkResult r = op->walk([&](Operation *inner) {
    if (inner == op || isa<scf::YieldOp>(inner))
      return WalkResult::advance();
    return movable(inner, written, alias) ? WalkResult::advance()
                                          : WalkResult::interrupt();
  });
  return !r.wasInterrupted();
}

/// Whether `op` loads: a load, or an op holding one (a guarded load).
bool loads(Operation *op) {
  return op->walk([](memref::LoadOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Reorders `body`: first the ops that only compute or load from buffers
/// the body does not write, and need nothing else of the body, by how many
/// loads they wait for one after another (the batch's loads and their
/// index arithmetic, then what needs a loaded value, such as a load at a
/// loaded index); then the others, in their order.
void issueLoadsEarly(Block &body, ArrayRef<Value> written,
                     const Aliasing &alias) {
  // An early op's level, and the loads waited for once its value is there.
  DenseMap<Operation *, std::pair<unsigned, unsigned>> level;
  SmallVector<Operation *> rest;
  unsigned deepest = 0;
  for (Operation &op : body.without_terminator()) {
    bool early = movable(&op, written, alias);
    unsigned depth = 0;
    auto needs = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != &body)
        return;
      auto it = level.find(def);
      if (it == level.end())
        early = false;
      else
        depth = std::max(depth, it->second.second);
    };
    for (Value v : op.getOperands())
      needs(v);
    SetVector<Value> above;
    getUsedValuesDefinedAbove(op.getRegions(), above);
    for (Value v : above)
      needs(v);
    if (early) {
      level[&op] = {depth, depth + (loads(&op) ? 1 : 0)};
      deepest = std::max(deepest, depth);
    } else {
      rest.push_back(&op);
    }
  }
  SmallVector<Operation *> order;
  for (unsigned d = 0; d <= deepest; ++d)
    for (Operation &op : body.without_terminator())
      if (auto it = level.find(&op); it != level.end() && it->second.first == d)
        order.push_back(&op);
  order.append(rest);
  Operation *end = body.getTerminator();
  for (Operation *op : order)
    op->moveBefore(end);
}

/// `loop`'s iterations [first, first + count) as one iteration of a loop
/// of `copies` copies of the body, `count` a multiple of `copies`.
scf::ForOp unrolled(scf::ForOp loop, ValueRange inits, int64_t first,
                    int64_t count, int64_t copies, int64_t lower,
                    int64_t step) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value lb = index(lower + first * step);
  Value ub = index(lower + (first + count) * step);
  Value st = index(copies * step);
  SmallVector<Value> offsets;
  for (int64_t j = 1; j < copies; ++j)
    offsets.push_back(index(j * step));
  auto out = scf::ForOp::create(b, loc, lb, ub, st, inits);
  Block &body = *out.getBody();
  if (!body.empty())
    body.getTerminator()->erase();
  b.setInsertionPointToEnd(&body);
  SmallVector<Value> carried(out.getRegionIterArgs());
  Block &from = *loop.getBody();
  for (int64_t j = 0; j < copies; ++j) {
    IRMapping map;
    Value iv = out.getInductionVar();
    if (j > 0)
      iv = arith::AddIOp::create(b, loc, iv, offsets[j - 1]);
    map.map(loop.getInductionVar(), iv);
    map.map(loop.getRegionIterArgs(), carried);
    for (Operation &op : from.without_terminator())
      b.clone(op, map);
    carried =
        llvm::map_to_vector(from.getTerminator()->getOperands(),
                            [&](Value v) { return map.lookupOrDefault(v); });
  }
  scf::YieldOp::create(b, loc, carried);
  return out;
}

struct ZeroGPUBatchLoadsPass
    : zero::cuda::impl::ZeroGPUBatchLoadsBase<ZeroGPUBatchLoadsPass> {
  using Base::Base;

  /// Unrolls `loop` by the batch and issues each batch's loads first;
  /// false when it has no constant bounds or nothing to move.
  bool batch(scf::ForOp loop, const Aliasing &alias) {
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
    if (!lower || !step || !upper || *step <= 0 || *upper <= *lower ||
        !loop.getInductionVar().getType().isIndex())
      return false;
    int64_t trips = (*upper - *lower + *step - 1) / *step;
    if (trips < 2)
      return false;
    Block &body = *loop.getBody();
    FailureOr<SmallVector<Value>> written = writtenBuffers(body);
    if (failed(written))
      return false;
    if (llvm::none_of(body.without_terminator(), [&](Operation &op) {
          return loads(&op) && movable(&op, *written, alias);
        }))
      return false;
    int64_t copies = std::min<int64_t>(trips, batchSize);
    int64_t full = trips / copies * copies;
    SmallVector<scf::ForOp> parts;
    parts.push_back(
        unrolled(loop, loop.getInitArgs(), 0, full, copies, *lower, *step));
    // The iterations left: one more iteration of fewer copies.
    if (full < trips)
      parts.push_back(unrolled(loop, parts.back().getResults(), full,
                               trips - full, trips - full, *lower, *step));
    loop.replaceAllUsesWith(parts.back().getResults());
    loop.erase();
    for (scf::ForOp part : parts) {
      FailureOr<SmallVector<Value>> w = writtenBuffers(*part.getBody());
      issueLoadsEarly(*part.getBody(), *w, alias);
    }
    return true;
  }

  void runOnOperation() override {
    if (batchSize < 1) {
      getOperation()->emitError("zero-gpu-batch-loads: batch ")
          << static_cast<int64_t>(batchSize) << " must be at least 1";
      return signalPassFailure();
    }
    int64_t batched = 0;
    SymbolTableCollection tables;
    SymbolUserMap users(tables, getOperation());
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      // A batch of one leaves every loop as it is.
      if (fn.isExternal() || batchSize == 1)
        continue;
      Aliasing alias{fn.getOperation(), zero::noAliasArguments(fn, users)};
      for (unsigned i = 0; i < fn.getNumArguments(); ++i)
        if (fn.getArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName()))
          alias.noAlias[i] = true;
      // Innermost loops: the serial work of one thread.
      SmallVector<scf::ForOp> loops;
      fn.walk([&](scf::ForOp loop) {
        bool inner = !loop.getBody()
                          ->walk([](Operation *op) {
                            return isa<LoopLikeOpInterface>(op)
                                       ? WalkResult::interrupt()
                                       : WalkResult::advance();
                          })
                          .wasInterrupted();
        if (inner)
          loops.push_back(loop);
      });
      for (scf::ForOp loop : loops)
        batched += batch(loop, alias);
    }
    zero::setKernelCounts(getOperation(), {{"gpu_batched_loops", batched}});
  }
};
} // namespace
