//===- PartitionDataParallel.cpp - ZeRO stage 0 (DDP) ----------*- C++ -*-===//
#include "PartitionUtils.h"

#include "mlir/IR/Matchers.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPARTITIONDATAPARALLEL
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
struct ZeroPartitionDataParallelPass
    : zero::impl::ZeroPartitionDataParallelBase<ZeroPartitionDataParallelPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    SmallVector<ClipGradNormOp> clips;
    fn.walk([&](ClipGradNormOp op) { clips.push_back(op); });
    if (worldSize < 1) {
      fn.emitError() << "world size must be at least 1";
      return signalPassFailure();
    }
    // Sums over replicas become all-reduces, and micro-batch j of rank r
    // is micro-batch j * N + r of the global batch, in a training step on
    // N ranks; both are the identity elsewhere (one rank, or a function
    // that runs alone).
    int64_t replicas = clips.empty() ? 1 : worldSize;
    OpBuilder b(fn);
    auto lower = [&](Operation *op) -> Value {
      Value v = op->getOperand(0);
      if (replicas == 1)
        return v;
      b.setInsertionPoint(op);
      partition::Builder pb{b, op->getLoc()};
      if (isa<MicroBatchIndexOp>(op))
        return arith::AddIOp::create(
            b, pb.loc,
            arith::MulIOp::create(
                b, pb.loc, v,
                arith::ConstantIndexOp::create(b, pb.loc, replicas)),
            RankOp::create(b, pb.loc, b.getIndexType()));
      // The sum of a constant is known: no collective for it.
      if (matchPattern(v, m_Constant()))
        return pb.mul(v, pb.scalarLike(v, double(replicas)));
      return pb.allReduce(v, replicas);
    };
    fn.walk([&](Operation *op) {
      if (!isa<ReplicaSumOp, MicroBatchIndexOp>(op))
        return;
      op->getResult(0).replaceAllUsesWith(lower(op));
      op->erase();
    });
    if (clips.empty())
      return;
    fn->setAttr(partition::kWorldSizeAttr, b.getI64IntegerAttr(worldSize));
    fn->setAttr(partition::kStageAttr, b.getI64IntegerAttr(0));
    if (worldSize == 1)
      return;
    double inv = 1.0 / double(worldSize);
    for (ClipGradNormOp clip : clips) {
      b.setInsertionPoint(clip);
      partition::Builder pb{b, clip.getLoc()};
      for (OpOperand &g : clip->getOpOperands()) {
        Value sum = pb.allReduce(g.get(), worldSize);
        auto t = partition::Builder::typeOf(sum);
        g.set(pb.mul(sum, pb.scalar(t.getElementType(), inv, t.getRank())));
      }
    }
    // The logged loss is the mean over the global batch.
    auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
    for (unsigned i = 0; i < fn.getNumResults(); ++i) {
      auto role = fn.getResultAttrOfType<RoleAttr>(i, kRoleAttr);
      if (!role || role.getValue() != Role::loss)
        continue;
      b.setInsertionPoint(ret);
      partition::Builder pb{b, ret.getLoc()};
      Value l = ret.getOperand(i);
      Value sum = pb.allReduce(l, worldSize);
      auto t = partition::Builder::typeOf(sum);
      ret.setOperand(
          i, pb.mul(sum, pb.scalar(t.getElementType(), inv, t.getRank())));
    }
  }
};
} // namespace
