//===- CollectiveUtils.h - what a started collective touches ----*- C++ -*-===//
#ifndef ZERO_OPT_TARGET_CPU_TRANSFORMS_COLLECTIVEUTILS_H
#define ZERO_OPT_TARGET_CPU_TRANSFORMS_COLLECTIVEUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::zero::cpu {

/// The buffer `v` views, through view-like ops.
Value rootBuffer(Value v);
/// Adds `root` and every view of it to `views`.
void collectViews(Value root, DenseSet<Value> &views);
/// Whether `op` (or an op nested in it) uses one of `views`, leaving out
/// ops in `ignore`. Making a view reads nothing: its uses are checked.
bool touchesViews(Operation *op, const DenseSet<Value> &views,
                  const DenseSet<Operation *> *ignore = nullptr);

/// The buffers a `zero_rt_comm_start` reads and writes (with their views),
/// and the test for an op that touches them.
struct CollectiveFootprint {
  DenseSet<Value> views;
  DenseSet<Operation *> ownAddress; ///< the start's address computation
  Value recv;                       ///< the receive buffer's root

  /// False when the buffers cannot be traced from the start's operands.
  bool init(func::CallOp start);
  bool touches(Operation *op) const;
};

/// Moves `start` to just after `after`, with the pure ops and the receive
/// buffer's allocation it needs from between them. Fails, changing
/// nothing, when something in between touches its buffers or another op
/// it needs cannot move.
LogicalResult startEarlier(func::CallOp start, Operation *after,
                           const CollectiveFootprint &fp);

} // namespace mlir::zero::cpu

#endif
