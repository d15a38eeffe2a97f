//===- PartitionGradients.cpp - ZeRO stage 2 -------------------*- C++ -*-===//
#include "PartitionUtils.h"

#include "mlir/IR/Matchers.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPARTITIONGRADIENTS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

/// The widening of a 16-bit gradient to f32 before its reduction
/// (communication_data_type fp32), or flatten/pad: the ops between a
/// gradient and its reduce-scatter.
static bool isScatterPrologue(Operation *op) {
  if (auto cast = dyn_cast<tosa::CastOp>(op))
    return partition::Builder::typeOf(cast.getInput())
               .getElementTypeBitWidth() <
           partition::Builder::typeOf(cast.getOutput())
               .getElementTypeBitWidth();
  return isa<tosa::ReshapeOp, tosa::PadOp>(op);
}

/// At stage 2 the scatter and its flatten/pad belong to the backward pass,
/// as the stage-3 backward gathers do.
static void markBackward(ReduceScatterOp rs) {
  UnitAttr unit = UnitAttr::get(rs.getContext());
  rs->setAttr(kBackwardAttr, unit);
  for (Operation *o = rs.getInput().getDefiningOp(); o && isScatterPrologue(o);
       o = o->getOperand(0).getDefiningOp())
    o->setAttr(kBackwardAttr, unit);
}

/// With gradient accumulation, `rs` scatters `loop#k * (1/g)`, where the
/// loop sums the micro-batch gradients into its iter_arg k. Rewrites the
/// loop to reduce-scatter each micro-batch gradient as soon as it is
/// complete and to carry only the shard, so no full-size gradient lives
/// across micro-batches. Returns false (IR untouched) on any other form.
static bool scatterPerMicroBatch(ReduceScatterOp rs, Operation *def) {
  auto mul = dyn_cast<tosa::MulOp>(def);
  if (!mul)
    return false;
  auto res = dyn_cast<OpResult>(mul.getInput1());
  auto loop = res ? dyn_cast<scf::ForOp>(res.getOwner()) : nullptr;
  DenseElementsAttr scale;
  if (!loop || !res.hasOneUse() ||
      !matchPattern(mul.getInput2(), m_Constant(&scale)) || !scale.isSplat())
    return false;
  unsigned k = res.getResultNumber();
  BlockArgument acc = loop.getRegionIterArg(k);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  auto mat = yield.getOperand(k)
                 .getDefiningOp<bufferization::MaterializeInDestinationOp>();
  if (!mat || mat.getDest() != acc || !mat->hasOneUse())
    return false;
  auto add = mat.getSource().getDefiningOp<linalg::AddOp>();
  if (!add || !add->hasOneUse() || add.getOutputs()[0] != acc)
    return false;
  Value micro =
      add.getInputs()[0] == acc ? add.getInputs()[1] : add.getInputs()[0];
  if (micro == acc || !llvm::all_of(acc.getUses(), [&](OpOperand &u) {
        return u.getOwner() == add || u.getOwner() == mat;
      }))
    return false;

  auto shardTy = cast<RankedTensorType>(rs.getResult()[0].getType());
  int64_t n = rs.getWorldSize();
  OpBuilder b(loop);
  partition::Builder pb{b, rs.getLoc()};
  // The carried value becomes this rank's shard, starting at zero.
  loop.getInitArgsMutable()[k].set(pb.splat(shardTy, 0.0));
  acc.setType(shardTy);
  res.setType(shardTy);
  // Scatter right after the micro-batch gradient is complete.
  if (Operation *m = micro.getDefiningOp();
      m && m->getBlock() == loop.getBody())
    b.setInsertionPointAfter(m);
  else
    b.setInsertionPointToStart(loop.getBody());
  // Reduced in f32 (communication_data_type): each micro-batch gradient is
  // widened, and the shard accumulates in f32.
  Value sent = micro;
  if (partition::Builder::typeOf(micro).getElementType() !=
      shardTy.getElementType())
    sent = pb.castTo(micro, shardTy.getElementType());
  Value part =
      pb.reduceScatter(pb.flatPadded(sent, shardTy.getNumElements() * n), n);
  part.getDefiningOp()->setAttr(partition::kGradScatterAttr, b.getUnitAttr());
  markBackward(cast<ReduceScatterOp>(part.getDefiningOp()));
  b.setInsertionPoint(mat);
  Value sum = linalg::AddOp::create(b, add.getLoc(), ValueRange{acc, part},
                                    ValueRange{acc})
                  .getResult(0);
  Value kept = bufferization::MaterializeInDestinationOp::create(
                   b, mat.getLoc(), sum, acc)
                   .getResult();
  yield->setOperand(k, kept);
  mat->erase();
  add->erase();
  // The mean over micro-batches, now on the shard.
  b.setInsertionPointAfter(loop);
  Value mean = pb.mul(
      res, pb.scalar(shardTy.getElementType(),
                     scale.getSplatValue<APFloat>().convertToDouble(), 1));
  rs.getResult()[0].replaceAllUsesWith(mean);
  SmallVector<Operation *> chain;
  for (Value v = rs.getInput(); Operation *o = v.getDefiningOp();
       v = o->getOperand(0)) {
    chain.push_back(o);
    if (o == mul)
      break;
  }
  rs->erase();
  for (Operation *o : chain)
    if (o->use_empty())
      o->erase();
  return true;
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
    partition::BlockOrder order;
    for (ReduceScatterOp rs : scatters) {
      // The local gradient the flatten/pad chain (and the widening to f32,
      // with communication_data_type fp32) starts from.
      Value v = rs.getInput();
      while (Operation *def = v.getDefiningOp()) {
        if (!isScatterPrologue(def))
          break;
        v = def->getOperand(0);
      }
      Operation *def = v.getDefiningOp();
      if (def && scatterPerMicroBatch(rs, def)) {
        order.invalidate();
        continue;
      }
      if (!def || def->getBlock() != rs->getBlock())
        continue; // an argument, or computed in another block: stays
      // Right after the gradient is complete, so the full gradient dies
      // here and only the shard lives on.
      partition::hoistAfter(rs, def, order);
      markBackward(rs);
    }
  }
};
} // namespace
