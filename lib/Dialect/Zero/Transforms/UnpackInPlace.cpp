//===- UnpackInPlace.cpp - bucket results into their copies' targets ------===//
//
// A gathered parameter is unpacked from its bucket into a buffer of its
// own and then copied into the parameter: the unpack can write the
// parameter itself, where the step first touches it.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROUNPACKINPLACE
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
/// The source and target of a whole-buffer copy; nulls for any other op.
std::pair<Value, Value> copyOperands(Operation *op) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return {copy.getSource(), copy.getTarget()};
  if (auto copy = dyn_cast<linalg::CopyOp>(op);
      copy && copy.hasPureBufferSemantics())
    return {copy.getInputs()[0], copy.getOutputs()[0]};
  return {};
}

/// The copy that is the only reader of `unpack`'s own buffer, with the
/// reshapes between them; null when there is none.
Operation *soleCopy(BucketUnpackOp unpack, SmallVector<Operation *> &views) {
  auto alloc = unpack.getDest().getDefiningOp<memref::AllocOp>();
  if (!alloc || !isContiguousBuffer(alloc) ||
      alloc->getBlock() != unpack->getBlock())
    return nullptr;
  Operation *copy = nullptr;
  for (OpOperand *use : usesThroughReshapes(alloc, views)) {
    Operation *user = use->getOwner();
    if (user == unpack)
      continue;
    auto [src, dst] = copyOperands(user);
    if (copy || src != use->get())
      return nullptr;
    copy = user;
  }
  return copy;
}

/// The first op after `after` that touches `targetViews` or writes the
/// staging buffer (`stagingViews`; another unpack only reads it), or the
/// terminator; not looked for past `bound` (returned when reached).
Operation *firstTouch(Operation *after, const DenseSet<Value> &targetViews,
                      const DenseSet<Value> &stagingViews, Operation *bound) {
  Operation *op = after->getNextNode();
  while (op != bound && !op->hasTrait<OpTrait::IsTerminator>() &&
         !touchesViews(op, targetViews) &&
         (isa<BucketUnpackOp>(op) || !touchesViews(op, stagingViews)))
    op = op->getNextNode();
  return op;
}

/// Moves the in-place unpacks of each bucket, in their order, to just
/// before the first use of any of their targets: the bucket is waited for
/// there, where the step first needs one of its parameters (all of them
/// at once, since they are one collective), and the unpacks stay together
/// as one launch. Targets the step does not use again stay unpacked where
/// they are.
void sinkToFirstUse(ArrayRef<BucketUnpackOp> unpacks) {
  llvm::MapVector<std::pair<Block *, Value>, SmallVector<BucketUnpackOp>>
      buckets;
  for (BucketUnpackOp u : unpacks)
    if (Value staging = rootBuffer(u.getStaging()))
      buckets[{u->getBlock(), staging}].push_back(u);
  // Every bucket's point first, then the moves: a move renumbers the
  // block at the next order query.
  SmallVector<std::pair<BucketUnpackOp, Operation *>> moves;
  for (auto &[key, members] : buckets) {
    DenseSet<Value> stagingViews;
    collectViews(key.second, stagingViews);
    // The earliest of the members' first uses, each looked for only up to
    // the earliest so far.
    Operation *point = nullptr;
    for (BucketUnpackOp u : members) {
      if (point && !u->isBeforeInBlock(point))
        continue;
      DenseSet<Value> targetViews;
      collectViews(rootBuffer(u.getDest()), targetViews);
      point = firstTouch(u, targetViews, stagingViews, point);
    }
    // Unused by the rest of the step (a gather back after the update):
    // left where it is, to run while the next buckets travel.
    if (point->hasTrait<OpTrait::IsTerminator>())
      continue;
    // Each passes only ops before its own first use.
    for (BucketUnpackOp u : members)
      if (u->isBeforeInBlock(point))
        moves.push_back({u, point});
  }
  for (auto [u, point] : moves)
    u->moveBefore(point);
}

struct ZeroUnpackInPlacePass
    : zero::impl::ZeroUnpackInPlaceBase<ZeroUnpackInPlacePass> {
  void runOnOperation() override {
    SmallVector<BucketUnpackOp> unpacks, inPlace;
    getOperation().walk([&](BucketUnpackOp op) { unpacks.push_back(op); });
    for (BucketUnpackOp unpack : unpacks) {
      SmallVector<Operation *> views;
      Operation *copy = soleCopy(unpack, views);
      if (!copy || copy->getBlock() != unpack->getBlock() ||
          copy->isBeforeInBlock(unpack))
        continue;
      Value target = copyOperands(copy).second;
      if (!isContiguousBuffer(target) ||
          cast<MemRefType>(target.getType()).getElementType() !=
              unpack.getDest().getType().getElementType())
        continue;
      // The unpack moves to the copy: nothing in between may touch the
      // target or write the staging buffer (other unpacks only read it).
      DenseSet<Value> targetViews, stagingViews;
      collectViews(rootBuffer(target), targetViews);
      collectViews(rootBuffer(unpack.getStaging()), stagingViews);
      if (firstTouch(unpack, targetViews, stagingViews, copy) != copy)
        continue;
      Operation *alloc = unpack.getDest().getDefiningOp();
      unpack->moveBefore(copy);
      unpack.getDestMutable().assign(target);
      copy->erase();
      for (Operation *view : llvm::reverse(views))
        view->erase();
      alloc->erase();
      inPlace.push_back(unpack);
    }
    sinkToFirstUse(inPlace);
  }
};
} // namespace
