//===- PrefetchGathers.cpp - stage-3 gathers ahead of use -------*- C++ -*-===//
//
// Runs after deallocation placement, so the parameter elements live at each
// op are known exactly: each all-gather starts as many gathers ahead as the
// prefetch budget allows, unless that would hold more parameter elements at
// once than the live limit. Both count elements, as DeepSpeed's
// stage3_prefetch_bucket_size and stage3_max_live_parameters do, whatever
// the element type.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPREFETCHGATHERS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
struct Gather {
  AllGatherStartOp start;
  WaitOp wait;
  CollectiveFootprint footprint;
  int64_t elements = 0; ///< of the receive buffer
};

/// Elements of parameters-category temporaries live just after each op of
/// `block` (allocation to deallocation, within the block).
struct LiveParameters {
  DenseMap<Operation *, unsigned> position;
  SmallVector<Operation *> ops;
  SmallVector<int64_t> elements;
  Block *block = nullptr;

  /// What `op` adds to the live elements: a parameters-category
  /// allocation of this block, or its deallocation.
  int64_t delta(Operation *op) const {
    auto sized = [&](Value v) -> int64_t {
      auto alloc = v.getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != block ||
          allocCategory(alloc) != MemoryCategory::parameters ||
          !alloc.getType().hasStaticShape())
        return 0;
      return alloc.getType().getNumElements();
    };
    if (auto alloc = dyn_cast<memref::AllocOp>(op))
      return sized(alloc);
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
      return -sized(dealloc.getMemref());
    return 0;
  }

  void compute(Block &b) {
    block = &b;
    position.clear();
    ops.clear();
    elements.clear();
    int64_t live = 0;
    for (Operation &op : b) {
      position[&op] = ops.size();
      ops.push_back(&op);
      elements.push_back(live += delta(&op));
    }
  }
  /// After the `count` ops following `after` were reordered among
  /// themselves: their positions and live elements again. The ops before
  /// and after them keep theirs (the same ops, so the same sum).
  void reordered(Operation *after, unsigned count) {
    unsigned first = position.lookup(after) + 1;
    int64_t live = elements[first - 1];
    Operation *op = after->getNextNode();
    for (unsigned i = first; i < first + count; ++i, op = op->getNextNode()) {
      ops[i] = op;
      position[op] = i;
      elements[i] = live += delta(op);
    }
  }
  bool before(Operation *a, Operation *b) const {
    return position.lookup(a) < position.lookup(b);
  }
  /// The most elements live from just after `from` to just before `to`.
  int64_t maxBetween(Operation *from, Operation *to) const {
    int64_t m = 0;
    for (unsigned i = position.lookup(from); i < position.lookup(to); ++i)
      m = std::max(m, elements[i]);
    return m;
  }
};

struct ZeroPrefetchGathersPass
    : zero::impl::ZeroPrefetchGathersBase<ZeroPrefetchGathersPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      // Below stage 3 the gathers bring back updated shards after the
      // optimizer: there is nothing ahead of them to prefetch for.
      auto stage = fn->getAttrOfType<IntegerAttr>("zero.stage");
      if (stage && stage.getInt() < 3)
        return;
      for (Block &block : fn.getBody())
        if (failed(runOnBlock(block, prefetchBucketSize, maxLiveParameters)))
          return signalPassFailure();
    });
  }

  LogicalResult runOnBlock(Block &block, int64_t budget, int64_t limit) {
    SmallVector<Gather> gathers;
    for (Operation &op : block) {
      auto wait = dyn_cast<WaitOp>(op);
      if (!wait)
        continue;
      auto start = wait.getRequest().getDefiningOp<AllGatherStartOp>();
      if (!start || start->getBlock() != &block)
        continue;
      Gather g{start, wait, CollectiveFootprint(start), 0};
      g.elements = start.getOutput().getType().getNumElements();
      gathers.push_back(std::move(g));
    }
    if (gathers.empty())
      return success();
    LiveParameters live;
    live.compute(block);
    if (limit >= 0) {
      // Scheduling cannot go below what the step holds without prefetch.
      auto peak = llvm::max_element(live.elements);
      if (*peak > limit) {
        Operation *at = live.ops[peak - live.elements.begin()];
        return at->emitError()
               << "stage3_max_live_parameters allows " << limit
               << " elements of gathered parameters, but the step holds "
               << *peak
               << " at once here without any prefetching; raise it to at "
                  "least "
               << *peak;
      }
    }
    for (unsigned j = 1; j < gathers.size(); ++j) {
      // Anchors: the waits of earlier gathers, nearest first, while the
      // gathers that would be ahead of their use fit the budget.
      SmallVector<Operation *> anchors;
      int64_t ahead = gathers[j].elements;
      for (unsigned k = j; k-- > 0 && ahead <= budget;) {
        if (live.before(gathers[k].wait, gathers[j].start))
          anchors.push_back(gathers[k].wait);
        ahead += gathers[k].elements;
      }
      // Earliest first: the first that is legal and within the limit.
      // Gathers keep their order: never before the previous one's start.
      Operation *previous = gathers[j - 1].start;
      for (Operation *anchor : llvm::reverse(anchors)) {
        if (live.before(anchor, previous))
          anchor = previous;
        if (limit >= 0 &&
            live.maxBetween(anchor, gathers[j].start) + gathers[j].elements >
                limit)
          continue;
        // The start and what it needs move up among the ops after the
        // anchor, up to where the start was: only those change places.
        unsigned moved = live.position.lookup(gathers[j].start) -
                         live.position.lookup(anchor);
        if (succeeded(startEarlier(gathers[j].start, anchor,
                                   gathers[j].footprint))) {
          live.reordered(anchor, moved);
          break;
        }
      }
    }
    return success();
  }
};
} // namespace
