//===- PartitionParameters.cpp - ZeRO stage 3 ------------------*- C++ -*-===//
#include "PartitionUtils.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/IRMapping.h"
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

/// Ops that only move data: a view of the gathered parameter made in the
/// forward pass can be remade in the backward from a fresh gather.
static bool isView(Operation *op) {
  return isa<tosa::ReshapeOp, tosa::TransposeOp, tosa::SliceOp, tosa::CastOp,
             tosa::TileOp, tensor::ExtractSliceOp>(op) &&
         op->getNumResults() == 1;
}

/// Marks a backward gather and its unpadding as backward ops, so that later
/// passes (and readers of the IR) see which phase each gather serves.
static void markBackward(OpBuilder &b, Value unpadded) {
  for (Operation *op = unpadded.getDefiningOp(); op;
       op = op->getOperand(0).getDefiningOp()) {
    op->setAttr(kBackwardAttr, b.getUnitAttr());
    if (isa<AllGatherOp>(op))
      break;
  }
}

/// The backward pass reads the forward's gathered parameter (or views of
/// it, such as its transpose): left alone, the full parameter would live
/// from the forward to the backward. Instead the backward gathers the shard
/// again, right before its first use, and remakes the views from it.
static void regatherForBackward(OpBuilder &b, Value gathered, Value shard,
                                RankedTensorType full, int64_t n) {
  // Forward values derived from the gathered parameter by views.
  SmallVector<Value> derived = {gathered};
  for (size_t i = 0; i < derived.size(); ++i)
    for (Operation *user : derived[i].getUsers())
      if (isView(user) && !user->hasAttr(kBackwardAttr) &&
          user->getBlock() == gathered.getParentBlock() &&
          llvm::all_of(user->getOperands(), [&](Value o) {
            return o == derived[i] || !o.getDefiningOp() ||
                   o.getDefiningOp()->hasTrait<OpTrait::ConstantLike>();
          }))
        derived.push_back(user->getResult(0));
  SmallVector<OpOperand *> backwardUses;
  for (Value v : derived)
    for (OpOperand &u : v.getUses())
      if (u.getOwner()->hasAttr(kBackwardAttr) &&
          u.getOwner()->getBlock() == gathered.getParentBlock())
        backwardUses.push_back(&u);
  if (backwardUses.empty())
    return;
  Operation *first = backwardUses.front()->getOwner();
  for (OpOperand *u : backwardUses)
    if (u->getOwner()->isBeforeInBlock(first))
      first = u->getOwner();
  b.setInsertionPoint(first);
  partition::Builder pb{b, first->getLoc()};
  IRMapping map;
  Value again = pb.unpad(pb.allGather(shard, n), full.getShape());
  markBackward(b, again);
  map.map(gathered, again);
  for (Value v : llvm::drop_begin(derived))
    b.clone(*v.getDefiningOp(), map)->setAttr(kBackwardAttr, b.getUnitAttr());
  for (OpOperand *u : backwardUses)
    u->set(map.lookup(u->get()));
}

namespace {
struct ZeroPartitionParametersPass
    : zero::impl::ZeroPartitionParametersBase<ZeroPartitionParametersPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// Whether `user` starts the chain that slices this rank's shard out of a
/// parameter for the optimizer (stage 1's zero.param_shard).
static bool feedsShard(Operation *user) {
  for (Operation *o = user; o && o->getNumResults() == 1;) {
    if (o->hasAttr("zero.param_shard"))
      return true;
    if (!o->getResult(0).hasOneUse())
      return false;
    o = *o->getResult(0).getUsers().begin();
  }
  return false;
}

/// The elements of other sharded parameters used between each parameter's
/// last forward use and its first backward use (its reuse distance), for
/// the parameters used in both phases of the entry block.
static DenseMap<BlockArgument, int64_t>
reuseDistances(Block &entry, ArrayRef<BlockArgument> sharded) {
  DenseMap<Operation *, unsigned> position;
  unsigned i = 0;
  for (Operation &op : entry)
    position[&op] = i++;
  struct Window {
    unsigned lastForward = 0, firstBackward = ~0u;
    bool forward = false, backward = false;
  };
  DenseMap<BlockArgument, Window> windows;
  DenseMap<BlockArgument, SmallVector<unsigned>> uses;
  for (BlockArgument arg : sharded) {
    Window &w = windows[arg];
    // The argument and the forward views of it (the backward reads those).
    SmallVector<Value> derived = {arg};
    SmallVector<Operation *> users;
    for (size_t k = 0; k < derived.size(); ++k)
      for (Operation *user : derived[k].getUsers()) {
        // The optimizer's shard and the in-place write-back are not uses.
        if (feedsShard(user) ||
            isa<bufferization::MaterializeInDestinationOp>(user))
          continue;
        if (isView(user) && !user->hasAttr(kBackwardAttr) &&
            user->getBlock() == &entry)
          derived.push_back(user->getResult(0));
        else
          users.push_back(user);
      }
    for (Operation *user : users) {
      Operation *top = entry.findAncestorOpInBlock(*user);
      if (!top)
        continue;
      unsigned p = position[top];
      uses[arg].push_back(p);
      if (user->hasAttr(kBackwardAttr)) {
        w.backward = true;
        w.firstBackward = std::min(w.firstBackward, p);
      } else {
        w.forward = true;
        w.lastForward = std::max(w.lastForward, p);
      }
    }
  }
  DenseMap<BlockArgument, int64_t> distance;
  for (BlockArgument arg : sharded) {
    Window w = windows[arg];
    if (!w.forward || !w.backward || w.firstBackward < w.lastForward)
      continue;
    int64_t d = 0;
    for (BlockArgument other : sharded)
      if (other != arg && llvm::any_of(uses[other], [&](unsigned p) {
            return p > w.lastForward && p < w.firstBackward;
          }))
        d += cast<RankedTensorType>(other.getType()).getNumElements();
    distance[arg] = d;
  }
  return distance;
}

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
  SmallVector<BlockArgument> sharded;
  for (BlockArgument arg : entry.getArguments()) {
    auto role = fn.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), kRoleAttr);
    if (role && role.getValue() == Role::parameter &&
        cast<RankedTensorType>(arg.getType()).getNumElements() >=
            persistenceThreshold)
      sharded.push_back(arg);
  }
  // Parameters kept from the forward for the backward: nearest reuse
  // first, within the live bound.
  DenseSet<BlockArgument> kept;
  if (maxReuseDistance >= 0) {
    DenseMap<BlockArgument, int64_t> distances = reuseDistances(entry, sharded);
    SmallVector<std::pair<int64_t, BlockArgument>> order;
    int64_t largest = 0;
    for (BlockArgument arg : sharded) {
      largest = std::max(
          largest, cast<RankedTensorType>(arg.getType()).getNumElements());
      auto d = distances.find(arg);
      if (d != distances.end() && d->second <= maxReuseDistance)
        order.push_back({d->second, arg});
    }
    llvm::stable_sort(order,
                      [](auto &a, auto &b) { return a.first < b.first; });
    int64_t held = largest;
    for (auto [d, arg] : order) {
      int64_t e = cast<RankedTensorType>(arg.getType()).getNumElements();
      if (maxLiveParameters >= 0 && held + e > maxLiveParameters)
        continue;
      held += e;
      kept.insert(arg);
    }
  }

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
      bool toShard = false;
      for (Operation *o = user; o && o->getNumResults() == 1;) {
        if (o->hasAttr("zero.param_shard")) {
          shardSlice = o;
          toShard = true;
          break;
        }
        if (!o->getResult(0).hasOneUse())
          break;
        o = *o->getResult(0).getUsers().begin();
      }
      if (!toShard)
        computeUses.push_back(&u);
    }
    if (!shardSlice)
      continue;
    for (Operation *user : shardSlice->getResult(0).getUsers())
      if (auto opt = dyn_cast<OptimizerOpInterface>(user))
        for (Operation *g : opt.getUpdatedParameter().getUsers())
          if (g->hasAttr(partition::kParamGatherAttr))
            gather = g;
    if (!gather) {
      shardSlice->emitError("no gathered update for this parameter shard");
      return signalPassFailure();
    }

    // Compute uses: gathered before the first use of each phase (forward,
    // backward) in each block; one gather for both when the parameter is
    // reused within the reuse distance.
    bool keep = kept.contains(arg);
    arg.setType(full.clone({s}));
    llvm::MapVector<std::pair<Block *, int>, SmallVector<OpOperand *>> groups;
    for (OpOperand *u : computeUses) {
      int backward = !keep && u->getOwner()->hasAttr(kBackwardAttr);
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
      if (key.second)
        markBackward(b, gathered);
      for (OpOperand *u : uses)
        u->set(gathered);
      if (!key.second && !keep)
        regatherForBackward(b, gathered, arg, full, n);
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
