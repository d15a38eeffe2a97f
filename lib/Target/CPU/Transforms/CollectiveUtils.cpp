//===- CollectiveUtils.cpp - what a started collective touches -*- C++ -*-===//
#include "CollectiveUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

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

Value zero::cpu::rootBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

void zero::cpu::collectViews(Value root, DenseSet<Value> &views) {
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

bool zero::cpu::CollectiveFootprint::init(func::CallOp start) {
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

bool zero::cpu::touchesViews(Operation *op, const DenseSet<Value> &views,
                             const DenseSet<Operation *> *ignore) {
  if (isa<ViewLikeOpInterface>(op) && op->getNumRegions() == 0)
    return false;
  bool hit = false;
  op->walk([&](Operation *inner) {
    if (!ignore || !ignore->contains(inner))
      hit = llvm::any_of(inner->getOperands(),
                         [&](Value v) { return views.contains(v); });
    return hit ? WalkResult::interrupt() : WalkResult::advance();
  });
  return hit;
}

bool zero::cpu::CollectiveFootprint::touches(Operation *op) const {
  return touchesViews(op, views, &ownAddress);
}

LogicalResult zero::cpu::startEarlier(func::CallOp start, Operation *after,
                                      const CollectiveFootprint &fp) {
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
      return failure();
    closure.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  // Nothing in between may touch the buffers (a write to the shard).
  for (Operation *op = after->getNextNode(); op != start.getOperation();
       op = op->getNextNode())
    if (!closure.contains(op) && fp.touches(op))
      return failure();
  SmallVector<Operation *> ordered(closure.begin(), closure.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *point = after;
  for (Operation *op : ordered) {
    op->moveAfter(point);
    point = op;
  }
  start->moveAfter(point);
  return success();
}
