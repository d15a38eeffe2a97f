//===- VerifyCollectives.cpp - every rank issues the same collectives ----===//
//
// A collective that only some ranks reach hangs the others. This rejects
// any collective under control flow whose outcome can differ between
// ranks: conditions and trip counts computed from the rank, from the
// rank's own batch, or from its shards.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROVERIFYCOLLECTIVES
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

/// Ops every rank must issue together: collectives, synchronous or
/// started, and the waits that complete them.
static bool isCommunication(Operation *op) {
  return isa<CollectiveOpInterface, WaitOp>(op);
}

namespace {
/// Values that may differ between ranks.
class RankVariance {
public:
  explicit RankVariance(func::FuncOp fn) {
    for (BlockArgument a : fn.getArguments()) {
      auto role = fn.getArgAttrOfType<RoleAttr>(a.getArgNumber(), kRoleAttr);
      // Buffers too: with local BatchNorm statistics each rank has its own.
      if ((role && (role.getValue() == Role::input ||
                    role.getValue() == Role::buffer)) ||
          fn.getArgAttr(a.getArgNumber(), kShardAttr))
        varying.insert(a);
    }
    // Loop-carried values need a fixpoint.
    for (bool changed = true; changed;) {
      size_t before = varying.size();
      fn.walk([&](Operation *op) { visit(op); });
      changed = varying.size() != before;
    }
  }

  bool contains(Value v) const { return varying.contains(v); }

private:
  DenseSet<Value> varying;

  void visit(Operation *op) {
    // The sum or concatenation over all ranks is the same on every rank;
    // a reduce-scatter leaves each rank its own part.
    auto collective = dyn_cast<CollectiveOpInterface>(op);
    if (collective &&
        collective.getCollectiveKind() != CollectiveKind::reduce_scatter)
      return;
    bool in = isa<RankOp>(op) || collective ||
              llvm::any_of(op->getOperands(),
                           [&](Value v) { return varying.contains(v); });
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      for (auto [arg, init, yielded, res] :
           llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs(),
                     loop.getYieldedValues(), loop.getResults()))
        if (varying.contains(init) || varying.contains(yielded)) {
          varying.insert(arg);
          varying.insert(res);
        }
      return;
    }
    if (!in)
      return;
    for (Value r : op->getResults())
      varying.insert(r);
  }
};
} // namespace

/// The rank-varying value that decides whether or how often `op` runs
/// inside `parent`, if any.
static Value varyingControl(Operation *parent, const RankVariance &rv) {
  if (auto i = dyn_cast<scf::IfOp>(parent))
    return rv.contains(i.getCondition()) ? i.getCondition() : Value();
  if (auto s = dyn_cast<scf::IndexSwitchOp>(parent))
    return rv.contains(s.getArg()) ? s.getArg() : Value();
  if (auto f = dyn_cast<scf::ForOp>(parent))
    for (Value v : {f.getLowerBound(), f.getUpperBound(), f.getStep()})
      if (rv.contains(v))
        return v;
  if (auto w = dyn_cast<scf::WhileOp>(parent)) {
    Value c = w.getConditionOp().getCondition();
    return rv.contains(c) ? c : Value();
  }
  return {};
}

namespace {
struct ZeroVerifyCollectivesPass
    : zero::impl::ZeroVerifyCollectivesBase<ZeroVerifyCollectivesPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    if (!fn.getBody().hasOneBlock()) {
      bool any = false;
      fn.walk([&](Operation *op) {
        if (isCommunication(op) && !any) {
          op->emitError("collective in a function with unstructured control "
                        "flow; use scf ops so that every rank provably "
                        "issues the same collectives");
          any = true;
        }
      });
      if (any)
        signalPassFailure();
      return;
    }
    RankVariance rv(fn);
    bool failed = false;
    DenseSet<Operation *> reported;
    fn.walk([&](Operation *op) {
      if (!isCommunication(op))
        return;
      // The wait of a start already reported is the same divergence.
      if (auto wait = dyn_cast<WaitOp>(op))
        if (reported.contains(wait.getRequest().getDefiningOp()))
          return;
      for (Operation *p = op->getParentOp(); p && p != fn;
           p = p->getParentOp()) {
        Value v = varyingControl(p, rv);
        if (!v)
          continue;
        reported.insert(op);
        InFlightDiagnostic d =
            op->emitError()
            << "'" << op->getName()
            << "' may run on some ranks and not others: the "
            << (isa<scf::ForOp, scf::WhileOp>(p) ? "trip count" : "condition")
            << " of the enclosing '" << p->getName()
            << "' depends on the rank or on the rank's own data; every "
               "rank must issue the same collectives in the same order";
        if (Operation *def = v.getDefiningOp())
          d.attachNote(def->getLoc()) << "rank-dependent value defined here";
        failed = true;
        break;
      }
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
