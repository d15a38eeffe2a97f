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

  void compute(Block &block) {
    position.clear();
    ops.clear();
    for (Operation &op : block) {
      position[&op] = ops.size();
      ops.push_back(&op);
    }
    SmallVector<int64_t> delta(ops.size() + 1, 0);
    for (auto [i, op] : llvm::enumerate(ops)) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc || allocCategory(op) != MemoryCategory::parameters ||
          !alloc.getType().hasStaticShape())
        continue;
      int64_t size = alloc.getType().getNumElements();
      unsigned end = ops.size();
      for (Operation *user : alloc->getUsers())
        if (isa<memref::DeallocOp>(user) && user->getBlock() == &block)
          end = position[user];
      delta[i] += size;
      delta[end] -= size;
    }
    elements.assign(ops.size(), 0);
    int64_t live = 0;
    for (unsigned i = 0; i < ops.size(); ++i)
      elements[i] = live += delta[i];
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
        if (gathers[k].wait->isBeforeInBlock(gathers[j].start))
          anchors.push_back(gathers[k].wait);
        ahead += gathers[k].elements;
      }
      // Earliest first: the first that is legal and within the limit.
      // Gathers keep their order: never before the previous one's start.
      Operation *previous = gathers[j - 1].start;
      for (Operation *anchor : llvm::reverse(anchors)) {
        if (anchor->isBeforeInBlock(previous))
          anchor = previous;
        if (limit >= 0 &&
            live.maxBetween(anchor, gathers[j].start) + gathers[j].elements >
                limit)
          continue;
        if (succeeded(startEarlier(gathers[j].start, anchor,
                                   gathers[j].footprint))) {
          live.compute(block);
          break;
        }
      }
    }
    return success();
  }
};
} // namespace
