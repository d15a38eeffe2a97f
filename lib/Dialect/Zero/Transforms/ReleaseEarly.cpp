//===- ReleaseEarly.cpp - free each buffer after its last use --*- C++ -*-===//
//
// Ownership-based deallocation frees buffers at the end of their block, so
// a straight-line training step would keep every activation, gradient and
// gathered parameter until it returns. This moves each such dealloc to
// right after the last use of the buffer or anything derived from it
// (views, pointers, the request of a collective started on it, up to
// its wait).
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZERORELEASEEARLY
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

/// The last op of `block` that uses `root` or a value derived from it, or
/// null when the buffer escapes the block (yielded, returned, stored).
static FailureOr<Operation *>
lastUse(Value root, Block *block, Operation *dealloc,
        const DenseMap<Operation *, unsigned> &position) {
  Operation *last = nullptr;
  SmallVector<Value> work{root};
  DenseSet<Value> seen{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == dealloc)
        continue;
      if (user->hasTrait<OpTrait::IsTerminator>() ||
          (isa<memref::StoreOp>(user) && user->getOperand(0) == v))
        return failure();
      Operation *anc = block->findAncestorOpInBlock(*user);
      if (!anc)
        return failure();
      if (!last || position.lookup(last) < position.lookup(anc))
        last = anc;
      // Loaded values are data, not the buffer.
      if (isa<memref::LoadOp>(user))
        continue;
      for (Value r : user->getResults())
        if (seen.insert(r).second)
          work.push_back(r);
    }
  }
  return last;
}

namespace {
struct ZeroReleaseEarlyPass
    : zero::impl::ZeroReleaseEarlyBase<ZeroReleaseEarlyPass> {
  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk([&](memref::DeallocOp d) { deallocs.push_back(d); });
    // Positions are taken once: moving a dealloc invalidates the block's
    // op order, and recomputing it per dealloc is quadratic in the step.
    DenseMap<Operation *, unsigned> position;
    DenseSet<Block *> numbered;
    SmallVector<std::pair<Operation *, Operation *>> moves;
    for (memref::DeallocOp d : deallocs) {
      auto alloc = d.getMemref().getDefiningOp<memref::AllocOp>();
      Block *block = d->getBlock();
      if (!alloc || alloc->getBlock() != block)
        continue;
      if (numbered.insert(block).second)
        for (auto [i, op] : llvm::enumerate(*block))
          position[&op] = i;
      FailureOr<Operation *> last = lastUse(alloc, block, d, position);
      if (failed(last))
        continue;
      moves.push_back({d, *last ? *last : alloc.getOperation()});
    }
    for (auto [d, after] : moves)
      d->moveAfter(after);
  }
};
} // namespace
