//===- ScheduleCollectives.cpp - waits at first use ------------*- C++ -*-===//
//
// A collective is started where the partition passes put it (stage-3
// gathers are started earlier by zero-prefetch-gathers); its wait moves
// down to just before the first op that touches its send or receive
// buffer, so the compute in between overlaps the communication.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROSCHEDULECOLLECTIVES
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
/// Moves the wait of `start` down to just before the first op that
/// touches its buffers, or the terminator. Waits may pass each other: each
/// waits for its own collective (a reduce-scatter bucket's wait no longer
/// holds up the next layer's gathered parameter).
void sinkWait(CollectiveOpInterface start, WaitOp wait) {
  CollectiveFootprint fp(start);
  Operation *point = wait->getNextNode();
  while (point && !point->hasTrait<OpTrait::IsTerminator>() &&
         !fp.touches(point))
    point = point->getNextNode();
  if (point && point != wait->getNextNode())
    wait->moveBefore(point);
}

struct ZeroScheduleCollectivesPass
    : zero::impl::ZeroScheduleCollectivesBase<ZeroScheduleCollectivesPass> {
  void runOnOperation() override {
    SmallVector<std::pair<CollectiveOpInterface, WaitOp>> pairs;
    getOperation().walk([&](WaitOp wait) {
      auto start = wait.getRequest().getDefiningOp<CollectiveOpInterface>();
      if (start && start->getBlock() == wait->getBlock())
        pairs.push_back({start, wait});
    });
    for (auto [start, wait] : pairs)
      sinkWait(start, wait);
  }
};
} // namespace
