//===- PartitionGradients.cpp - ZeRO stage 2 -------------------*- C++ -*-===//
#include "PartitionUtils.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPARTITIONGRADIENTS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

/// Moves `op` and the producers of its operands defined after `point` (in
/// the same block) to just after `point`, producers first.
static void hoistAfter(Operation *op, Operation *point) {
  Block *block = point->getBlock();
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == block && point->isBeforeInBlock(def))
      hoistAfter(def, point);
  }
  Operation *after = point;
  // Keep the moved ops in dependency order: after the last one moved.
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp();
        def && def->getBlock() == block && after->isBeforeInBlock(def))
      after = def;
  op->moveAfter(after);
}

namespace {
struct ZeroPartitionGradientsPass
    : zero::impl::ZeroPartitionGradientsBase<ZeroPartitionGradientsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!fn->getAttr(partition::kStageAttr))
      return;
    OpBuilder b(fn);
    fn->setAttr(partition::kStageAttr, b.getI64IntegerAttr(2));
    SmallVector<ReduceScatterOp> scatters;
    fn.walk([&](ReduceScatterOp op) {
      if (op->hasAttr(partition::kGradScatterAttr))
        scatters.push_back(op);
    });
    for (ReduceScatterOp rs : scatters) {
      // The local gradient the flatten/pad chain starts from.
      Value v = rs.getInput();
      while (Operation *def = v.getDefiningOp()) {
        if (!isa<tosa::ReshapeOp, tosa::PadOp>(def))
          break;
        v = def->getOperand(0);
      }
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != rs->getBlock())
        continue; // an argument, or computed in another block: stays
      // Right after the gradient is complete, so the full gradient dies
      // here and only the shard lives on.
      hoistAfter(rs, def);
    }
  }
};
} // namespace
