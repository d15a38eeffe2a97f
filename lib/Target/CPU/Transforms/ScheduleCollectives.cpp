//===- ScheduleCollectives.cpp - waits at first use ------------*- C++ -*-===//
//
// A collective is started where the partition passes put it (stage-3
// gathers are started earlier by zero-cpu-prefetch-gathers); its wait
// moves down to just before the first op that touches its send or receive
// buffer, so the compute in between overlaps the communication (which the
// runtime's communication thread carries out meanwhile).
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "CollectiveUtils.h"

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


namespace {
bool overlaps(func::FuncOp fn) {
  auto overlap = fn->getAttrOfType<BoolAttr>("zero.overlap_comm");
  return !overlap || overlap.getValue();
}

/// Moves the wait of `start` down to just before the first op that
/// touches its buffers, or the terminator. Waits may pass each other: each
/// waits for its own collective (a reduce-scatter bucket's wait no longer
/// holds up the next layer's gathered parameter).
void sinkWait(func::CallOp start, func::CallOp wait) {
  zero::cpu::CollectiveFootprint fp;
  if (!fp.init(start))
    return;
  Operation *point = wait->getNextNode();
  while (point && !point->hasTrait<OpTrait::IsTerminator>() &&
         !fp.touches(point))
    point = point->getNextNode();
  if (point && point != wait->getNextNode())
    wait->moveBefore(point);
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
  }
};
} // namespace
