//===- AsyncCollectives.cpp - collectives as start and wait ----*- C++ -*-===//
//
// A buffer collective becomes a start returning a request and a wait of it,
// right after: the same program, with completion an op the schedule moves.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROASYNCCOLLECTIVES
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
template <typename StartOp>
void split(Operation *op) {
  OpBuilder b(op);
  auto coll = cast<CollectiveOpInterface>(op);
  Value request = StartOp::create(
      b, op->getLoc(), RequestType::get(op->getContext()),
      coll.getSendBuffer(), coll.getRecvBuffer(),
      b.getI64IntegerAttr(coll.getGroupSize()));
  WaitOp::create(b, op->getLoc(), request);
  op->erase();
}

struct ZeroAsyncCollectivesPass
    : zero::impl::ZeroAsyncCollectivesBase<ZeroAsyncCollectivesPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](CollectiveOpInterface op) {
      if (isa<AllReduceOp, ReduceScatterOp, AllGatherOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (!isa<MemRefType>(op->getOperand(0).getType())) {
        op->emitError("collective was not bufferized");
        return signalPassFailure();
      }
      if (isa<AllReduceOp>(op))
        split<AllReduceStartOp>(op);
      else if (isa<ReduceScatterOp>(op))
        split<ReduceScatterStartOp>(op);
      else
        split<AllGatherStartOp>(op);
    }
  }
};
} // namespace
