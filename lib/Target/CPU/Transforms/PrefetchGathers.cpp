//===- PrefetchGathers.cpp - stage-3 gathers ahead of use -------*- C++ -*-===//
//
// Runs after deallocation placement, so the bytes of parameters live at each
// op are known exactly: each all-gather starts as many gathers ahead as the
// prefetch budget allows, unless that would hold more parameter bytes at
// once than the live limit.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "CollectiveUtils.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero-rt/Runtime.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUPREFETCHGATHERS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;
using namespace mlir::zero;

namespace {
struct Gather {
  func::CallOp start, wait;
  cpu::CollectiveFootprint footprint;
  int64_t bytes = 0; ///< of the receive buffer
};

/// Bytes of parameters-category temporaries live just after each op of
/// `block` (allocation to deallocation, within the block).
struct LiveParameters {
  DenseMap<Operation *, unsigned> position;
  SmallVector<Operation *> ops;
  SmallVector<int64_t> bytes;

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
      if (!alloc || cpu::allocCategory(op) != MemoryCategory::parameters)
        continue;
      int64_t size = cpu::bufferBytes(alloc.getType());
      unsigned end = ops.size();
      for (Operation *user : alloc->getUsers())
        if (isa<memref::DeallocOp>(user) && user->getBlock() == &block)
          end = position[user];
      delta[i] += size;
      delta[end] -= size;
    }
    bytes.assign(ops.size(), 0);
    int64_t live = 0;
    for (unsigned i = 0; i < ops.size(); ++i)
      bytes[i] = live += delta[i];
  }
  /// The most bytes live from just after `from` to just before `to`.
  int64_t maxBetween(Operation *from, Operation *to) const {
    int64_t m = 0;
    for (unsigned i = position.lookup(from); i < position.lookup(to); ++i)
      m = std::max(m, bytes[i]);
    return m;
  }
};

struct ZeroCPUPrefetchGathersPass
    : zero::cpu::impl::ZeroCPUPrefetchGathersBase<ZeroCPUPrefetchGathersPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      auto budget = fn->getAttrOfType<IntegerAttr>("zero.prefetch_bytes");
      auto limit =
          fn->getAttrOfType<IntegerAttr>("zero.max_live_parameter_bytes");
      auto overlap = fn->getAttrOfType<BoolAttr>("zero.overlap_comm");
      if (overlap && !overlap.getValue())
        return;
      for (Block &block : fn.getBody())
        if (failed(runOnBlock(block, budget ? budget.getInt() : 0,
                              limit ? limit.getInt() : -1)))
          return signalPassFailure();
    });
  }

  LogicalResult runOnBlock(Block &block, int64_t budget, int64_t limit) {
    SmallVector<Gather> gathers;
    for (Operation &op : block) {
      auto wait = dyn_cast<func::CallOp>(op);
      if (!wait || wait.getCallee() != "zero_rt_comm_wait")
        continue;
      auto start = wait.getOperand(0).getDefiningOp<func::CallOp>();
      auto kind = start ? getConstantIntValue(start.getOperand(0))
                        : std::optional<int64_t>();
      if (!kind || *kind != ZERO_RT_ALL_GATHER || start->getBlock() != &block)
        continue;
      Gather g{start, wait, {}, 0};
      if (!g.footprint.init(start) || !g.footprint.recv)
        continue;
      auto t = dyn_cast<MemRefType>(g.footprint.recv.getType());
      if (!t || !t.hasStaticShape())
        continue;
      g.bytes = cpu::bufferBytes(t);
      gathers.push_back(std::move(g));
    }
    if (gathers.empty())
      return success();
    LiveParameters live;
    live.compute(block);
    if (limit >= 0) {
      // Scheduling cannot go below what the step holds without prefetch.
      auto peak = llvm::max_element(live.bytes);
      if (*peak > limit) {
        Operation *at = live.ops[peak - live.bytes.begin()];
        return at->emitError()
               << "stage3_max_live_parameters allows " << limit / 4
               << " elements of gathered parameters, but the step holds "
               << *peak / 4
               << " at once here without any prefetching; raise it to at "
                  "least "
               << *peak / 4;
      }
    }
    for (unsigned j = 1; j < gathers.size(); ++j) {
      // Anchors: the waits of earlier gathers, nearest first, while the
      // gathers that would be ahead of their use fit the budget.
      SmallVector<Operation *> anchors;
      int64_t ahead = gathers[j].bytes;
      for (unsigned k = j; k-- > 0 && ahead <= budget;) {
        if (gathers[k].wait->isBeforeInBlock(gathers[j].start))
          anchors.push_back(gathers[k].wait);
        ahead += gathers[k].bytes;
      }
      // Earliest first: the first that is legal and within the limit.
      // Gathers keep their order: never before the previous one's start.
      Operation *previous = gathers[j - 1].start;
      for (Operation *anchor : llvm::reverse(anchors)) {
        if (anchor->isBeforeInBlock(previous))
          anchor = previous;
        if (limit >= 0 &&
            live.maxBetween(anchor, gathers[j].start) + gathers[j].bytes >
                limit)
          continue;
        if (succeeded(cpu::startEarlier(gathers[j].start, anchor,
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
