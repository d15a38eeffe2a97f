//===- PartitionOptimizerStates.cpp - ZeRO stage 1 -------------*- C++ -*-===//
#include "PartitionUtils.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPARTITIONOPTIMIZERSTATES
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

/// The average's rounding back to 16 bits when the gradient was reduced in
/// f32, or null.
static tosa::CastOp roundedBack(Value v) {
  auto cast = v.getDefiningOp<tosa::CastOp>();
  return cast && cast.getInput().getDefiningOp<tosa::MulOp>() ? cast : nullptr;
}

/// The gradient an all-reduce + 1/N averaging (from the data-parallel
/// pass) was applied to, or null: the f32 widening of it where the
/// gradient is reduced in f32.
static Value averagedGradient(Value v) {
  if (tosa::CastOp back = roundedBack(v))
    v = back.getInput();
  auto mul = v.getDefiningOp<tosa::MulOp>();
  if (!mul)
    return {};
  auto ar = mul.getInput1().getDefiningOp<AllReduceOp>();
  return ar ? ar.getInput() : Value();
}

static DictionaryAttr shardInfo(OpBuilder &b, RankedTensorType full,
                                int64_t s) {
  return b.getDictionaryAttr(
      {b.getNamedAttr("numel", b.getI64IntegerAttr(full.getNumElements())),
       b.getNamedAttr("shard", b.getI64IntegerAttr(s)),
       b.getNamedAttr("shape", b.getDenseI64ArrayAttr(full.getShape()))});
}

namespace {
struct ZeroPartitionOptimizerStatesPass
    : zero::impl::ZeroPartitionOptimizerStatesBase<
          ZeroPartitionOptimizerStatesPass> {
  void runOnOperation() override;
};
} // namespace

void ZeroPartitionOptimizerStatesPass::runOnOperation() {
  func::FuncOp fn = getOperation();
  SmallVector<ClipGradNormOp> clips;
  fn.walk([&](ClipGradNormOp op) { clips.push_back(op); });
  if (clips.empty())
    return;
  int64_t n = partition::worldSizeOf(fn);
  if (n < 1) {
    fn.emitError("run zero-partition-data-parallel first");
    return signalPassFailure();
  }
  OpBuilder b(fn);
  fn->setAttr(partition::kStageAttr, b.getI64IntegerAttr(1));
  if (n == 1)
    return;
  Block &entry = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());

  for (ClipGradNormOp clip : clips) {
    // Reduce-scatter the gradients instead of all-reducing them.
    b.setInsertionPoint(clip);
    partition::Builder pb{b, clip.getLoc()};
    SmallVector<Value> shards;
    SmallVector<RankedTensorType> fullTypes;
    SmallVector<Value> oldAverages(clip.getGrads());
    for (Value g : clip.getGrads()) {
      Value local = averagedGradient(g);
      if (!local) {
        clip.emitError("gradient is not averaged over the ranks; run "
                       "zero-partition-data-parallel first");
        return signalPassFailure();
      }
      auto t = partition::Builder::typeOf(local);
      int64_t s = partition::shardSize(t.getNumElements(), n);
      Value flat = pb.flatPadded(local, s * n);
      Value rs = pb.reduceScatter(flat, n);
      rs.getDefiningOp()->setAttr(partition::kGradScatterAttr, b.getUnitAttr());
      Value shard =
          pb.mul(rs, pb.scalar(t.getElementType(), 1.0 / double(n), 1));
      // Reduced in f32: the shard is rounded back to the gradient's type.
      if (roundedBack(g))
        shard =
            pb.castTo(shard, partition::Builder::typeOf(g).getElementType());
      shards.push_back(shard);
      fullTypes.push_back(t);
    }
    SmallVector<Type> shardTypes;
    for (Value s : shards)
      shardTypes.push_back(s.getType());
    auto sharded = ClipGradNormOp::create(
        b, clip.getLoc(), clip.getNorm().getType(), shardTypes, shards,
        clip.getMaxNormAttr(), b.getUnitAttr(), b.getI64IntegerAttr(n));
    clip.getNorm().replaceAllUsesWith(sharded.getNorm());

    // Every optimizer update moves to the shards.
    for (auto [k, clipped] : llvm::enumerate(clip.getClipped())) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &u : clipped.getUses())
        uses.push_back(&u);
      for (OpOperand *u : uses) {
        auto opt = dyn_cast<OptimizerOpInterface>(u->getOwner());
        if (!opt) {
          u->getOwner()->emitError("clipped gradient used outside an "
                                   "optimizer update");
          return signalPassFailure();
        }
        Operation *op = opt.getOperation();
        auto full = fullTypes[k];
        int64_t s = partition::shardSize(full.getNumElements(), n);
        // Each value keeps its element type: an fp32 master weight and its
        // states shard alike next to a bf16 parameter.
        auto shardOf = [&](Type t) {
          return cast<RankedTensorType>(t).clone(ArrayRef<int64_t>{s});
        };
        b.setInsertionPoint(op);
        partition::Builder ob{b, op->getLoc()};
        IRMapping map;
        Value param = opt.getParameter();
        Value paramShard = ob.rankSlice(ob.flatPadded(param, s * n), s);
        paramShard.getDefiningOp()->setAttr("zero.param_shard",
                                            b.getUnitAttr());
        map.map(param, paramShard);
        map.map(opt.getGradient(), sharded.getClipped()[k]);
        // Optimizer states become shard arguments.
        for (Value st : opt.getStateOperands()) {
          auto arg = dyn_cast<BlockArgument>(st);
          if (!arg || arg.getOwner() != &entry) {
            op->emitError("optimizer state is not a step argument");
            return signalPassFailure();
          }
          arg.setType(shardOf(arg.getType()));
          fn.setArgAttr(arg.getArgNumber(), kShardAttr, shardInfo(b, full, s));
          map.map(st, arg);
        }
        Operation *upd = b.clone(*op, map);
        for (Value r : upd->getResults())
          r.setType(shardOf(r.getType()));
        auto updI = cast<OptimizerOpInterface>(upd);
        // The full parameter is gathered back from every rank's shard.
        Value gathered = ob.allGather(updI.getUpdatedParameter(), n);
        gathered.getDefiningOp()->setAttr(partition::kParamGatherAttr,
                                          b.getUnitAttr());
        // Written back into the parameter's own buffer.
        Value newParam =
            bufferization::MaterializeInDestinationOp::create(
                b, op->getLoc(), ob.unpad(gathered, full.getShape()), param)
                .getResult();
        opt.getUpdatedParameter().replaceAllUsesWith(newParam);
        for (auto [oldS, newS] :
             llvm::zip(opt.getUpdatedStates(), updI.getUpdatedStates()))
          oldS.replaceAllUsesWith(newS);
        op->erase();
      }
    }
    clip->erase();
    // The data-parallel pass's all-reduces are replaced: collectives are
    // never dead code by themselves, so remove them explicitly.
    for (Value avg : oldAverages) {
      if (tosa::CastOp back = roundedBack(avg)) {
        if (!back->use_empty())
          continue;
        avg = back.getInput();
        back->erase();
      }
      auto mul = avg.getDefiningOp<tosa::MulOp>();
      if (!mul || !mul->use_empty())
        continue;
      auto ar = mul.getInput1().getDefiningOp<AllReduceOp>();
      mul->erase();
      if (ar && ar->use_empty())
        ar->erase();
    }
  }
  // Result types follow the (now shard-typed) returned states.
  SmallVector<Type> results;
  for (Value v : ret.getOperands())
    results.push_back(v.getType());
  fn.setFunctionType(
      FunctionType::get(&getContext(), entry.getArgumentTypes(), results));
}
