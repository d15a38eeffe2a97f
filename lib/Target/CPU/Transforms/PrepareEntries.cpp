//===- PrepareEntries.cpp - step functions ahead of bufferization -------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUPREPAREENTRIES
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

/// Makes the argument an update is returned into the destination of the op
/// computing it. Fusion gives a destination the op does not read (the
/// 16-bit copy of a master weight) a tensor.empty, through which
/// bufferization would write a fresh buffer and copy it back; with the
/// argument as destination it writes in place where that is safe.
static void writeIntoArgument(Value result, BlockArgument arg) {
  if (result.getType() != arg.getType())
    return;
  SmallVector<Operation *> reshapes;
  Value v = result;
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      break;
    reshapes.push_back(def);
    v = def->getOperand(0);
  }
  auto dps = v.getDefiningOp<DestinationStyleOpInterface>();
  if (!dps)
    return;
  OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(v));
  if (!init || !init->get().getDefiningOp<tensor::EmptyOp>())
    return;
  OpBuilder b(dps);
  Location loc = dps->getLoc();
  // The argument reshaped as the op's result: each reshape undone.
  Value d = arg;
  for (Operation *op : reshapes) {
    if (auto c = dyn_cast<tensor::CollapseShapeOp>(op))
      d = tensor::ExpandShapeOp::create(b, loc, c.getSrcType(), d,
                                        c.getReassociationIndices());
    else
      d = tensor::CollapseShapeOp::create(
          b, loc, cast<tensor::ExpandShapeOp>(op).getSrcType(), d,
          cast<tensor::ExpandShapeOp>(op).getReassociationIndices());
  }
  init->set(d);
}

namespace {
struct ZeroCPUPrepareEntriesPass
    : zero::cpu::impl::ZeroCPUPrepareEntriesBase<ZeroCPUPrepareEntriesPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!fn->hasAttr("zero.entry") || fn.isExternal())
        continue;
      int64_t buffers = fn.getNumArguments();
      SmallVector<int64_t> inPlace;
      auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
      for (unsigned i = 0; i < fn.getNumResults(); ++i) {
        if (auto upd = fn.getResultAttrOfType<IntegerAttr>(i, "zero.updates")) {
          inPlace.push_back(i);
          writeIntoArgument(ret.getOperand(i), fn.getArgument(upd.getInt()));
        } else {
          ++buffers;
        }
      }
      fn->setAttr("zero.inplace_results",
                  DenseI64ArrayAttr::get(&getContext(), inPlace));
      fn->setAttr(
          "zero.abi_buffers",
          IntegerAttr::get(IntegerType::get(&getContext(), 64), buffers));
      fn->setAttr(zero::kDisjointArgumentsAttr, UnitAttr::get(&getContext()));
      fn.setPrivate();
    }
  }
};
} // namespace
