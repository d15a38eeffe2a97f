//===- PartitionParameters.cpp - ZeRO stage 3 ------------------*- C++ -*-===//
#include "PartitionUtils.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPARTITIONPARAMETERS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

/// Erases `v`'s defining op and then its operands' producers while they
/// have no uses left. Collectives are never dead code to MLIR (they are
/// events every rank must reach), so this removal is explicit.
static void eraseDeadChain(Value v) {
  Operation *op = v ? v.getDefiningOp() : nullptr;
  if (!op || !op->use_empty())
    return;
  SmallVector<Value> operands(op->getOperands());
  op->erase();
  for (Value o : operands)
    eraseDeadChain(o);
}

namespace {
struct ZeroPartitionParametersPass
    : zero::impl::ZeroPartitionParametersBase<ZeroPartitionParametersPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

void ZeroPartitionParametersPass::runOnOperation() {
  func::FuncOp fn = getOperation();
  int64_t n = partition::worldSizeOf(fn);
  if (!fn->getAttr(partition::kStageAttr))
    return;
  OpBuilder b(fn);
  fn->setAttr(partition::kStageAttr, b.getI64IntegerAttr(3));
  if (n <= 1)
    return;
  Block &entry = fn.getBody().front();
  auto ret = cast<func::ReturnOp>(fn.getBody().back().getTerminator());

  for (BlockArgument arg : entry.getArguments()) {
    auto role = fn.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), kRoleAttr);
    if (!role || role.getValue() != Role::parameter)
      continue;
    auto full = cast<RankedTensorType>(arg.getType());
    if (full.getNumElements() < persistenceThreshold)
      continue; // small parameters stay replicated (persistence)
    int64_t s = partition::shardSize(full.getNumElements(), n);

    // Stage 1 sliced this rank's shard out of the full parameter for the
    // update and gathered the result back: now the argument is the shard.
    Operation *shardSlice = nullptr, *gather = nullptr;
    SmallVector<OpOperand *> computeUses;
    for (OpOperand &u : arg.getUses()) {
      Operation *user = u.getOwner();
      bool feedsShard = false;
      for (Operation *o = user; o && o->getNumResults() == 1;) {
        if (o->hasAttr("zero.param_shard")) {
          shardSlice = o;
          feedsShard = true;
          break;
        }
        if (!o->getResult(0).hasOneUse())
          break;
        o = *o->getResult(0).getUsers().begin();
      }
      if (!feedsShard)
        computeUses.push_back(&u);
    }
    if (!shardSlice)
      continue;
    for (Operation *user : shardSlice->getResult(0).getUsers())
      if (auto opt = dyn_cast<OptimizerOpInterface>(user))
        for (Operation *g : opt.getUpdatedParameter().getUsers())
          if (g->hasAttr("zero.param_gather"))
            gather = g;
    if (!gather) {
      shardSlice->emitError("no gathered update for this parameter shard");
      return signalPassFailure();
    }

    // Compute uses: gathered before the first use of each phase (forward,
    // backward) in each block.
    arg.setType(full.clone({s}));
    llvm::MapVector<std::pair<Block *, int>, SmallVector<OpOperand *>> groups;
    for (OpOperand *u : computeUses) {
      int backward = u->getOwner()->hasAttr(kBackwardAttr);
      groups[{u->getOwner()->getBlock(), backward}].push_back(u);
    }
    for (auto &[key, uses] : groups) {
      Operation *first = uses.front()->getOwner();
      for (OpOperand *u : uses)
        if (u->getOwner()->isBeforeInBlock(first))
          first = u->getOwner();
      b.setInsertionPoint(first);
      partition::Builder pb{b, first->getLoc()};
      Value gathered = pb.unpad(pb.allGather(arg, n), full.getShape());
      gathered.getDefiningOp()->walk([&](Operation *o) {
        if (key.second)
          o->setAttr(kBackwardAttr, b.getUnitAttr());
      });
      for (OpOperand *u : uses)
        u->set(gathered);
    }

    // The update reads and writes the shard itself.
    shardSlice->getResult(0).replaceAllUsesWith(arg);
    Value updatedShard = gather->getOperand(0);
    for (OpOperand &r : ret->getOpOperands()) {
      auto upd = fn.getResultAttrOfType<IntegerAttr>(r.getOperandNumber(),
                                                     kUpdatesAttr);
      if (upd && upd.getInt() == arg.getArgNumber()) {
        Value old = r.get();
        r.set(updatedShard);
        eraseDeadChain(old);
      }
    }
    fn.setArgAttr(arg.getArgNumber(), kShardAttr,
                  b.getDictionaryAttr(
                      {b.getNamedAttr(
                           "numel", b.getI64IntegerAttr(full.getNumElements())),
                       b.getNamedAttr("shard", b.getI64IntegerAttr(s)),
                       b.getNamedAttr(
                           "shape", b.getDenseI64ArrayAttr(full.getShape()))}));
    eraseDeadChain(shardSlice->getResult(0));
  }
  SmallVector<Type> results;
  for (Value v : ret.getOperands())
    results.push_back(v.getType());
  fn.setFunctionType(
      FunctionType::get(&getContext(), entry.getArgumentTypes(), results));
}
