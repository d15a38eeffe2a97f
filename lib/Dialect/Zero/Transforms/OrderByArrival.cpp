//===- OrderByArrival.cpp - the optimizer step in gradient order -*- C++ -*-=//
//
// The optimizer step follows the backward in parameter order, but the
// gradients arrive in the backward's order: the first parameter (the
// embedding) is the last one ready. Stably sorting the step's ops by the
// latest backward position they depend on lets the updates of gradients
// reduced early run while the last buckets are in flight.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROORDERBYARRIVAL
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
bool isTensorView(Operation *op) {
  return isReshape(op) || isa<tensor::ExtractSliceOp, tensor::CastOp>(op);
}

/// The block argument `v` views, through reshapes and slices, or null.
BlockArgument viewedArgument(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isTensorView(def))
      return {};
    v = def->getOperand(0);
  }
  return dyn_cast<BlockArgument>(v);
}

/// Whether the step may move `op`: no memory effects but a collective's
/// and a write into a destination tensor, which the argument chains order.
bool movable(Operation *op) {
  return isMemoryEffectFree(op) || isa<CollectiveOpInterface>(op) ||
         isa<bufferization::MaterializeInDestinationOp>(op);
}

struct ZeroOrderByArrivalPass
    : zero::impl::ZeroOrderByArrivalBase<ZeroOrderByArrivalPass> {
  void runOnOperation() override {
    for (Block &block : getOperation().getBody())
      order(block);
  }

  void order(Block &block) {
    // The step: the ops after the last backward op, before the terminator.
    Operation *lastBackward = lastBackwardOp(block);
    if (!lastBackward || !block.mightHaveTerminator())
      return;
    DenseMap<Operation *, int64_t> position;
    int64_t n = 0;
    for (Operation &op : block)
      position[&op] = n++;
    SmallVector<Operation *> step;
    for (Operation *op = lastBackward->getNextNode();
         op && !op->hasTrait<OpTrait::IsTerminator>(); op = op->getNextNode())
      step.push_back(op);
    if (step.size() < 2 || !llvm::all_of(step, movable))
      return;
    DenseMap<Operation *, unsigned> index;
    for (auto [i, op] : llvm::enumerate(step))
      index[op] = i;

    // Edges run forward in the block: a value to its uses, and along the
    // ops that touch an argument some op of the step writes.
    std::vector<SmallVector<unsigned, 4>> preds(step.size()),
        succs(step.size());
    std::vector<int64_t> outside(step.size(), -1);
    auto edge = [&](unsigned from, unsigned to) {
      preds[to].push_back(from);
      succs[from].push_back(to);
    };
    llvm::SetVector<BlockArgument> written;
    for (unsigned i = 0; i < step.size(); ++i) {
      Operation *op = step[i];
      DenseSet<unsigned> from;
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands()) {
          if (isa<BlockArgument>(v))
            continue;
          Operation *def = block.findAncestorOpInBlock(*v.getDefiningOp());
          if (!def || def == op)
            continue;
          auto it = index.find(def);
          if (it == index.end())
            outside[i] = std::max(outside[i], position.lookup(def));
          else if (from.insert(it->second).second)
            edge(it->second, i);
        }
      });
      auto noteWrite = [&](Value dest) {
        if (BlockArgument arg = viewedArgument(dest);
            arg && arg.getOwner() == &block)
          written.insert(arg);
      };
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
        for (Value init : dps.getDpsInits())
          noteWrite(init);
      if (auto mat = dyn_cast<bufferization::MaterializeInDestinationOp>(op))
        noteWrite(mat.getDest());
    }
    // An op reaches an argument through its views: each view's users touch
    // it too.
    for (BlockArgument arg : written) {
      SmallVector<unsigned> ops;
      SmallVector<Value> work{arg};
      DenseSet<unsigned> seen;
      while (!work.empty()) {
        Value v = work.pop_back_val();
        for (Operation *user : v.getUsers()) {
          Operation *top = block.findAncestorOpInBlock(*user);
          auto it = top ? index.find(top) : index.end();
          if (it == index.end() || !seen.insert(it->second).second)
            continue;
          ops.push_back(it->second);
          if (isTensorView(user))
            llvm::append_range(work, user->getResults());
        }
      }
      llvm::sort(ops);
      for (unsigned k = 1; k < ops.size(); ++k)
        edge(ops[k - 1], ops[k]);
    }

    // An op's place: the latest backward position it depends on. A
    // collective of the step itself (stage 1's reduce-scatters) starts as
    // early as that allows, and its result is ready after every backward
    // op and after the collectives placed before it. Then an op that is not
    // a collective joins its first user's place when that is later.
    std::vector<int64_t> rank(step.size()), ready(step.size());
    auto isCollective = [&](unsigned i) {
      return isa<CollectiveOpInterface>(step[i]);
    };
    for (unsigned i = 0; i < step.size(); ++i) {
      rank[i] = outside[i];
      for (unsigned p : preds[i])
        rank[i] = std::max(rank[i], ready[p]);
      ready[i] = isCollective(i) ? n + rank[i] + 1 : rank[i];
    }
    for (unsigned i = step.size(); i-- > 0;) {
      if (succs[i].empty() || isCollective(i))
        continue;
      int64_t first = std::numeric_limits<int64_t>::max();
      for (unsigned s : succs[i])
        first = std::min(first, rank[s]);
      rank[i] = std::max(rank[i], first);
    }
    auto sorted = llvm::to_vector(llvm::seq<unsigned>(0, step.size()));
    llvm::stable_sort(
        sorted, [&](unsigned a, unsigned b) { return rank[a] < rank[b]; });
    if (llvm::is_sorted(sorted))
      return;
    Operation *end = block.getTerminator();
    for (unsigned i : sorted)
      step[i]->moveBefore(end);
  }
};
} // namespace
