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

/// An unpack now writing its parameter, and the views of that parameter.
struct InPlace {
  BucketUnpackOp unpack;
  DenseSet<Value> targetViews;
};

/// Moves the in-place unpacks of each bucket, in their order, to just
/// before the first use of any of their targets: the bucket is waited for
/// there, where the step first needs one of its parameters (all of them
/// at once, since they are one collective), and the unpacks stay together
/// as one launch. Targets the step does not use again stay unpacked where
/// they are. `stagingViews`: each staging buffer's views, by its root.
void sinkToFirstUse(ArrayRef<InPlace> unpacks,
                    const DenseMap<Value, DenseSet<Value>> &stagingViews) {
  llvm::MapVector<std::pair<Block *, Value>, SmallVector<const InPlace *>>
      buckets;
  for (const InPlace &u : unpacks) {
    BucketUnpackOp op = u.unpack;
    buckets[{op->getBlock(), rootBuffer(op.getStaging())}].push_back(&u);
  }
  // Every bucket's point first, then the moves: a move renumbers the
  // block at the next order query.
  SmallVector<std::pair<BucketUnpackOp, Operation *>> moves;
  for (auto &[key, members] : buckets) {
    const DenseSet<Value> &staging = stagingViews.find(key.second)->second;
    // The earliest of the members' first uses, each looked for only up to
    // the earliest so far.
    Operation *point = nullptr;
    for (const InPlace *u : members)
      if (!point || u->unpack->isBeforeInBlock(point))
        point = firstTouch(u->unpack, u->targetViews, staging, point);
    // Unused by the rest of the step (a gather back after the update):
    // left where it is, to run while the next buckets travel.
    if (point->hasTrait<OpTrait::IsTerminator>())
      continue;
    // Each passes only ops before its own first use.
    for (const InPlace *u : members)
      if (u->unpack->isBeforeInBlock(point))
        moves.push_back({u->unpack, point});
  }
  for (auto [u, point] : moves)
    u->moveBefore(point);
}

struct ZeroUnpackInPlacePass
    : zero::impl::ZeroUnpackInPlaceBase<ZeroUnpackInPlacePass> {
  void runOnOperation() override {
    SmallVector<BucketUnpackOp> unpacks;
    SmallVector<InPlace> inPlace;
    // Collected once per staging buffer: a bucket's unpacks share it.
    DenseMap<Value, DenseSet<Value>> stagingViews;
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
      Value stagingRoot = rootBuffer(unpack.getStaging());
      DenseSet<Value> none, targetViews;
      const DenseSet<Value> *staging = &none;
      if (stagingRoot) {
        auto [it, fresh] = stagingViews.try_emplace(stagingRoot);
        if (fresh)
          collectViews(stagingRoot, it->second);
        staging = &it->second;
      }
      collectViews(rootBuffer(target), targetViews);
      if (firstTouch(unpack, targetViews, *staging, copy) != copy)
        continue;
      Operation *alloc = unpack.getDest().getDefiningOp();
      unpack->moveBefore(copy);
      unpack.getDestMutable().assign(target);
      copy->erase();
      for (Operation *view : llvm::reverse(views))
        view->erase();
      alloc->erase();
      // Sunk with its bucket: the staging buffer's unpacks.
      if (stagingRoot)
        inPlace.push_back({unpack, std::move(targetViews)});
    }
    sinkToFirstUse(inPlace, stagingViews);
  }
};
} // namespace
