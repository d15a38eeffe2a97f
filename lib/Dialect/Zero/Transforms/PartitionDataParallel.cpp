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
/// The result that is the loss, or -1.
int lossResult(func::FuncOp fn) {
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (auto role = fn.getResultAttrOfType<RoleAttr>(i, kRoleAttr);
        role && role.getValue() == Role::loss)
      return i;
  return -1;
}

/// A model's own algorithm on N ranks: every update of a replicated
/// initializer must be the same on each replica, so it may read this
/// rank's batch only through a sum over the replicas (its Gradients of the
/// loss). Buffers (BatchNorm's local statistics) may differ.
LogicalResult checkReplicatedUpdates(func::FuncOp fn) {
  auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  for (unsigned i = 0; i < fn.getNumResults(); ++i) {
    auto updates = fn.getResultAttrOfType<IntegerAttr>(i, kUpdatesAttr);
    if (!updates)
      continue;
    auto role = fn.getArgAttrOfType<RoleAttr>(updates.getInt(), kRoleAttr);
    if (role && role.getValue() == Role::buffer)
      continue;
    std::optional<unsigned> sample = findPerReplicaArgument(
        ret.getOperand(i), fn, llvm::IsaPred<AllReduceOp>);
    if (!sample)
      continue;
    auto name = [&](unsigned arg) {
      auto n = fn.getArgAttrOfType<StringAttr>(arg, kNameAttr);
      return n ? n.getValue() : StringRef("?");
    };
    return fn.emitError()
           << "the update of '" << name(updates.getInt())
           << "' reads this rank's input '" << name(*sample)
           << "' other than through a Gradient of the loss with respect to "
              "a replicated value, so the replicas would diverge; train "
              "this model on one rank (--world-size=1)";
  }
  return success();
}

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
    // A training step returns a loss: the native step (with its norm and
    // clipping) or a model's own algorithm (TrainingInfoProto). There, sums
    // over replicas become all-reduces, the replica count is N, and
    // micro-batch j of rank r is micro-batch j * N + r of the global batch;
    // elsewhere (one rank, or a function that runs alone) each is the
    // identity.
    bool step = !clips.empty() || lossResult(fn) >= 0;
    int64_t replicas = step ? worldSize : 1;
    OpBuilder b(fn);
    auto lower = [&](Operation *op) -> Value {
      b.setInsertionPoint(op);
      partition::Builder pb{b, op->getLoc()};
      if (auto count = dyn_cast<ReplicaCountOp>(op))
        return pb.splat(cast<RankedTensorType>(count.getType()),
                        double(replicas));
      Value v = op->getOperand(0);
      if (replicas == 1)
        return v;
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
      if (!isa<ReplicaSumOp, ReplicaCountOp, MicroBatchIndexOp>(op))
        return;
      op->getResult(0).replaceAllUsesWith(lower(op));
      op->erase();
    });
    if (!step)
      return;
    if (clips.empty() && worldSize > 1 && failed(checkReplicatedUpdates(fn)))
      return signalPassFailure();
    fn->setAttr(partition::kWorldSizeAttr, b.getI64IntegerAttr(worldSize));
    fn->setAttr(partition::kStageAttr, b.getI64IntegerAttr(0));
    if (worldSize == 1)
      return;
    double inv = 1.0 / double(worldSize);
    partition::BlockOrder order;
    for (ClipGradNormOp clip : clips) {
      b.setInsertionPoint(clip);
      partition::Builder pb{b, clip.getLoc()};
      for (OpOperand &g : clip->getOpOperands()) {
        Value local = g.get();
        Operation *complete = local.getDefiningOp();
        Type elt = partition::Builder::typeOf(local).getElementType();
        bool widen = reduceInF32 && elt.getIntOrFloatBitWidth() < 32;
        if (widen)
          local = pb.castTo(local, b.getF32Type());
        Value sum = pb.allReduce(local, worldSize);
        if (reduceWhenComplete && complete &&
            complete->getBlock() == clip->getBlock()) {
          // The reduction starts while the rest of the backward runs.
          Operation *reduce = sum.getDefiningOp();
          partition::hoistAfter(reduce, complete, order);
          UnitAttr unit = b.getUnitAttr();
          reduce->setAttr(kBackwardAttr, unit);
          if (widen)
            local.getDefiningOp()->setAttr(kBackwardAttr, unit);
        }
        auto t = partition::Builder::typeOf(sum);
        Value avg =
            pb.mul(sum, pb.scalar(t.getElementType(), inv, t.getRank()));
        g.set(widen ? pb.castTo(avg, elt) : avg);
      }
    }
    // The logged loss is the mean over the global batch.
    auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());
    if (int i = lossResult(fn); i >= 0) {
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
