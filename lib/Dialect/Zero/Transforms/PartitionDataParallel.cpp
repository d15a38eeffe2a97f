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
    // Sums over replicas: all-reduces in a training step on N ranks, the
    // identity elsewhere (one rank, or a function that runs alone).
    int64_t replicas = clips.empty() ? 1 : worldSize;
    OpBuilder b(fn);
    fn.walk([&](ReplicaSumOp op) {
      Value v = op.getInput();
      if (replicas > 1) {
        b.setInsertionPoint(op);
        partition::Builder pb{b, op.getLoc()};
        // The sum of a constant is known: no collective for it.
        if (matchPattern(v, m_Constant()))
          v = pb.mul(v, pb.scalarLike(v, double(replicas)));
        else
          v = pb.allReduce(v, replicas);
      }
      op.replaceAllUsesWith(v);
      op.erase();
    });
    // Micro-batch j of rank r is micro-batch j * N + r of the global batch.
    fn.walk([&](MicroBatchIndexOp op) {
      Value v = op.getLocal();
      if (replicas > 1) {
        b.setInsertionPoint(op);
        Location loc = op.getLoc();
        v = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(
                b, loc, v, arith::ConstantIndexOp::create(b, loc, replicas)),
            RankOp::create(b, loc, b.getIndexType()));
      }
      op.replaceAllUsesWith(v);
      op.erase();
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
