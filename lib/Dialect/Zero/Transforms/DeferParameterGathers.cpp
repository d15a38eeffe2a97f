//===- DeferParameterGathers.cpp - stage 1-2 gathers at the next step -----===//
//
// A 16-bit parameter is its fp32 master weight rounded. At stages 1 and 2
// the master is sharded and the parameter replicated, so the all-gather
// that refreshes the parameter can read the master's shards whenever the
// parameter is next needed: at the start of the next step, where the
// forward hides it, instead of at the end of this one, where nothing does.
//
//===----------------------------------------------------------------------===//
#include "PartitionUtils.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZERODEFERPARAMETERGATHERS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
/// A parameter refreshed at the end of the step from its master's shards.
struct Refresh {
  BlockArgument param, master;
  AllGatherOp gather;
  /// The gather's unpadding, then the write into the parameter.
  SmallVector<Operation *> chain;
  bufferization::MaterializeInDestinationOp write;
  /// Where in the entry block the step first reads the parameter.
  int64_t firstUse = INT64_MAX;
};

/// `g` as a refresh: the gather of an update's 16-bit copy of a master
/// weight argument, written (through pure single-use ops) into a
/// parameter argument, and read by nothing but the step's return.
std::optional<Refresh> match(AllGatherOp g, Block &entry) {
  if (!g->hasAttr(partition::kParamGatherAttr))
    return std::nullopt;
  auto opt = g.getInput().getDefiningOp<OptimizerOpInterface>();
  if (!opt || opt.getUpdatedParameter() != g.getInput() ||
      !g.getInput().hasOneUse())
    return std::nullopt;
  auto master = dyn_cast_or_null<BlockArgument>(opt.getMasterWeight());
  if (!master || master.getOwner() != &entry)
    return std::nullopt;
  Refresh r;
  r.master = master;
  r.gather = g;
  Value v = g.getResult()[0];
  while (v.hasOneUse()) {
    Operation *user = *v.getUsers().begin();
    if (auto w = dyn_cast<bufferization::MaterializeInDestinationOp>(user)) {
      auto param = dyn_cast<BlockArgument>(w.getDest());
      if (!param || param.getOwner() != &entry || w.getSource() != v)
        return std::nullopt;
      for (Operation *u : w->getResult(0).getUsers())
        if (!isa<func::ReturnOp>(u))
          return std::nullopt;
      r.param = param;
      r.write = w;
      return r;
    }
    if (user->getNumResults() != 1 || user->getNumRegions() ||
        !isMemoryEffectFree(user))
      return std::nullopt;
    r.chain.push_back(user);
    v = user->getResult(0);
  }
  return std::nullopt;
}

struct ZeroDeferParameterGathersPass
    : zero::impl::ZeroDeferParameterGathersBase<ZeroDeferParameterGathersPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    auto stage = fn->getAttrOfType<IntegerAttr>(partition::kStageAttr);
    int64_t n = partition::worldSizeOf(fn);
    if (!stage || (stage.getInt() != 1 && stage.getInt() != 2) || n < 2 ||
        fn.getBody().empty())
      return;
    Block &entry = fn.getBody().front();
    SmallVector<Refresh> refreshes;
    fn.walk([&](AllGatherOp g) {
      if (std::optional<Refresh> r = match(g, entry))
        refreshes.push_back(*r);
    });
    if (refreshes.empty())
      return;
    DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(entry))
      position[&op] = i;
    for (Refresh &r : refreshes)
      for (Operation *u : r.param.getUsers())
        if (Operation *top = entry.findAncestorOpInBlock(*u);
            top && top != r.write)
          r.firstUse = std::min(r.firstUse, position.lookup(top));
    // In the order the step first reads them: bucketed in that order, the
    // first bucket holds what the forward needs first.
    llvm::stable_sort(refreshes, [](const Refresh &a, const Refresh &b) {
      return a.firstUse < b.firstUse;
    });

    OpBuilder b(fn.getContext());
    b.setInsertionPointToStart(&entry);
    for (Refresh &r : refreshes) {
      Location loc = r.gather.getLoc();
      partition::Builder pb{b, loc};
      auto paramType = cast<RankedTensorType>(r.param.getType());
      Value rounded = pb.castTo(r.master, paramType.getElementType());
      Value gathered = pb.allGather(rounded, n);
      gathered.getDefiningOp()->setAttr(partition::kParamGatherAttr,
                                        b.getUnitAttr());
      Value full = pb.unpad(gathered, paramType.getShape());
      auto write = bufferization::MaterializeInDestinationOp::create(
          b, loc, full, r.param);
      // The step returns the parameter as it used it.
      r.write->getResult(0).replaceAllUsesWith(write->getResult(0));
      Value init = r.gather.getInit();
      r.write->erase();
      for (Operation *op : llvm::reverse(r.chain))
        op->erase();
      r.gather->erase();
      if (Operation *def = init.getDefiningOp(); def && def->use_empty())
        def->erase();
      r.param.replaceAllUsesExcept(write->getResult(0), write);
    }
  }
};
} // namespace
