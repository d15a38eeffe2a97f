//===- UnpackInPlace.cpp - bucket results into their copies' targets ------===//
//
// A gathered parameter is unpacked from its bucket into a buffer of its
// own and then copied into the parameter: the unpack can write the
// parameter itself.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

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

struct ZeroUnpackInPlacePass
    : zero::impl::ZeroUnpackInPlaceBase<ZeroUnpackInPlacePass> {
  void runOnOperation() override {
    SmallVector<BucketUnpackOp> unpacks;
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
      bool clear = true;
      for (Operation *op = unpack->getNextNode(); op != copy && clear;
           op = op->getNextNode())
        clear = !touchesViews(op, targetViews) &&
                (isa<BucketUnpackOp>(op) || !touchesViews(op, stagingViews));
      if (!clear)
        continue;
      Operation *alloc = unpack.getDest().getDefiningOp();
      unpack->moveBefore(copy);
      unpack.getDestMutable().assign(target);
      copy->erase();
      for (Operation *view : llvm::reverse(views))
        view->erase();
      alloc->erase();
    }
  }
};
} // namespace
