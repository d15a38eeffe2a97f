//===- ScheduleCollectives.cpp - waits at first use ------------*- C++ -*-===//
//
// A collective is started where the partition passes put it; its wait
// moves down to just before the first op that touches its send or receive
// buffer, so the compute in between overlaps the communication (which the
// runtime's communication thread carries out meanwhile).
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "zero-rt/Runtime.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUSCHEDULECOLLECTIVES
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

static constexpr StringLiteral kStart = "zero_rt_comm_start";
static constexpr StringLiteral kWait = "zero_rt_comm_wait";

/// The memref whose aligned pointer an address computation starts from.
static Value addressedBuffer(Value addr) {
  SmallVector<Value> work{addr};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def)
      continue;
    if (auto p = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(def))
      return p.getSource();
    if (isa<arith::ArithDialect>(def->getDialect()))
      llvm::append_range(work, def->getOperands());
  }
  return {};
}

/// The buffer `v` views, through view-like ops.
static Value rootBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

/// Every value that is `root` or a view of it.
static void collectViews(Value root, DenseSet<Value> &views) {
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!views.insert(v).second)
      continue;
    for (Operation *user : v.getUsers())
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == v)
          llvm::append_range(work, user->getResults());
  }
}

static bool isCallTo(Operation *op, StringRef name) {
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getCallee() == name;
}

namespace {
/// The buffers a started collective reads and writes, and the test for an
/// op that touches them.
struct Footprint {
  DenseSet<Value> views;
  DenseSet<Operation *> ownAddress; ///< the start's address computation
  Value recv;

  bool init(func::CallOp start) {
    for (unsigned i : {2u, 3u}) {
      Value buffer = addressedBuffer(start.getOperand(i));
      if (!buffer)
        return false; // cannot tell what the collective touches
      Value root = rootBuffer(buffer);
      if (i == 3)
        recv = root;
      collectViews(root, views);
    }
    for (Value v : views)
      for (Operation *user : v.getUsers())
        if (isa<memref::ExtractAlignedPointerAsIndexOp,
                memref::ExtractStridedMetadataOp>(user))
          ownAddress.insert(user);
    return true;
  }

  bool touches(Operation *op) const {
    // Making a view reads nothing; its uses are checked instead.
    if (isa<ViewLikeOpInterface>(op) && op->getNumRegions() == 0)
      return false;
    bool hit = false;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (views.contains(v) && !ownAddress.contains(inner))
          hit = true;
      return hit ? WalkResult::interrupt() : WalkResult::advance();
    });
    return hit;
  }
};

bool overlaps(func::FuncOp fn) {
  auto overlap = fn->getAttrOfType<BoolAttr>("zero.overlap_comm");
  return !overlap || overlap.getValue();
}

/// Moves the wait of `start` down to just before the first op that
/// touches its buffers, the next wait, or the terminator.
void sinkWait(func::CallOp start, func::CallOp wait) {
  Footprint fp;
  if (!fp.init(start))
    return;
  Operation *point = wait->getNextNode();
  while (point && !point->hasTrait<OpTrait::IsTerminator>() &&
         !fp.touches(point) && !isCallTo(point, kWait))
    point = point->getNextNode();
  if (point && point != wait->getNextNode())
    wait->moveBefore(point);
}

/// Starts an all-gather right after the previous all-gather's wait, so
/// that it runs while the previous gathered parameter is computed with
/// (one gather in flight ahead, as forward/backward prefetch in FSDP).
/// The start takes its address computation and its receive buffer's
/// allocation along; a buffer larger than `budget` bytes is not
/// prefetched.
void prefetch(func::CallOp start, Operation *after, int64_t budget) {
  Footprint fp;
  if (!fp.init(start) || !fp.recv)
    return;
  auto recvType = dyn_cast<MemRefType>(fp.recv.getType());
  if (!recvType || !recvType.hasStaticShape() ||
      zero::cpu::bufferBytes(recvType) > budget)
    return;
  // What the start needs from between `after` and itself moves with it;
  // only pure ops and the receive buffer's allocation can.
  Block *block = start->getBlock();
  SetVector<Operation *> closure;
  SmallVector<Value> work(start->getOperands());
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != block || def->isBeforeInBlock(after) ||
        def == after || closure.contains(def))
      continue;
    if (!isPure(def) && !isa<memref::AllocOp>(def))
      return;
    closure.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  // Nothing in between may touch the buffers (a write to the shard).
  for (Operation *op = after->getNextNode(); op != start.getOperation();
       op = op->getNextNode())
    if (!closure.contains(op) && fp.touches(op))
      return;
  SmallVector<Operation *> ordered(closure.begin(), closure.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *point = after;
  for (Operation *op : ordered) {
    op->moveAfter(point);
    point = op;
  }
  start->moveAfter(point);
}

struct ZeroCPUScheduleCollectivesPass
    : zero::cpu::impl::ZeroCPUScheduleCollectivesBase<
          ZeroCPUScheduleCollectivesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<func::CallOp, func::CallOp>> pairs;
    getOperation().walk([&](func::CallOp wait) {
      auto fn = wait->getParentOfType<func::FuncOp>();
      if (wait.getCallee() != kWait || !fn || !overlaps(fn))
        return;
      auto start = wait.getOperand(0).getDefiningOp<func::CallOp>();
      if (start && start.getCallee() == kStart &&
          start->getBlock() == wait->getBlock())
        pairs.push_back({start, wait});
    });
    for (auto [start, wait] : pairs)
      sinkWait(start, wait);
    // Gathers, in order within each block, each prefetched behind the
    // previous one's wait.
    DenseMap<Block *, func::CallOp> lastGatherWait;
    for (auto [start, wait] : pairs) {
      auto kind = getConstantIntValue(start.getOperand(0));
      if (!kind || *kind != ZERO_RT_ALL_GATHER)
        continue;
      auto fn = start->getParentOfType<func::FuncOp>();
      auto budget = fn->getAttrOfType<IntegerAttr>("zero.prefetch_bytes");
      func::CallOp prev = lastGatherWait.lookup(start->getBlock());
      if (budget && prev && prev->isBeforeInBlock(start))
        prefetch(start, prev, budget.getInt());
      lastGatherWait[start->getBlock()] = wait;
    }
  }
};
} // namespace
