//===- GuardLoads.cpp - loads only a select's side needs -------*- C++ -*-===//
//
// A kernel's loop body loads every operand of its op, then selects: a
// causal attention's masked score is `select(mask, s * scale, -inf)`, and
// the thread whose mask element is false loads a score it never uses. The
// loads (and the ops) that only one side of a select needs move under its
// condition: a warp whose mask is false all along reads nothing new, and the
// upper triangle of the scores is not read. Where the side's arithmetic
// may run on any value, the guard is no branch: a load reads the buffer's
// first element where its side is not picked (one cached line for all
// those threads), so the loads of a thread's loop still go out together.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/Utils/GuardedReads.h"
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUGUARDLOADS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// The ops of `select`'s operand `index` worth moving under its condition:
/// they load something, and nothing between the first of them and the
/// select writes memory (a load moved past a store could read its value).
SetVector<Operation *> movedSlice(arith::SelectOp select, unsigned index) {
  SetVector<Operation *> slice = zero::exclusiveSelectSlice(select, index);
  if (llvm::all_of(slice, [](Operation *op) { return isMemoryEffectFree(op); }))
    return {};
  for (Operation *op = slice.front(); op != select.getOperation();
       op = op->getNextNode())
    if (!zero::onlyReads(op))
      return {};
  return slice;
}

/// Whether what `slice` computes from its loads can run on any loaded
/// value: every op but the loads and the index arithmetic they need is
/// speculatable (arithmetic; not an integer division by a loaded value).
bool runsOnAnyValue(const SetVector<Operation *> &slice) {
  DenseSet<Operation *> needed;
  for (Operation *op : llvm::reverse(slice))
    if (isa<memref::LoadOp>(op) ||
        llvm::any_of(op->getUsers(),
                     [&](Operation *user) { return needed.contains(user); }))
      needed.insert(op);
  return llvm::all_of(slice, [&](Operation *op) {
    return needed.contains(op) || isSpeculatable(op);
  });
}

struct ZeroGPUGuardLoadsPass
    : zero::cuda::impl::ZeroGPUGuardLoadsBase<ZeroGPUGuardLoadsPass> {
  void runOnOperation() override {
    SmallVector<arith::SelectOp> selects;
    int64_t guarded = 0;
    getOperation()->walk([&](arith::SelectOp select) {
      if (select.getCondition().getType().isInteger(1))
        selects.push_back(select);
    });
    // In block order: a select inside a later one's slice is guarded (an
    // scf.if, which stays) or left before that one moves it.
    for (arith::SelectOp select : selects) {
      SetVector<Operation *> onTrue = movedSlice(select, 1);
      SetVector<Operation *> onFalse = movedSlice(select, 2);
      if (onTrue.empty() && onFalse.empty())
        continue;
      // Each load of a side reads the buffer's first element where the
      // other side is picked: one address, which the cache serves, for all
      // those threads; no branch, so a thread's loads still go out
      // together (zero-gpu-batch-loads).
      if (runsOnAnyValue(onTrue) && runsOnAnyValue(onFalse)) {
        ++guarded;
        for (auto [slice, picked] :
             {std::pair(&onTrue, true), std::pair(&onFalse, false)})
          for (Operation *op : *slice) {
            op->moveBefore(select);
            auto load = dyn_cast<memref::LoadOp>(op);
            if (!load)
              continue;
            OpBuilder b(load);
            Location loc = load.getLoc();
            Value first = arith::ConstantIndexOp::create(b, loc, 0);
            SmallVector<Value> indices;
            for (Value i : load.getIndices())
              indices.push_back(arith::SelectOp::create(
                  b, loc, select.getCondition(), picked ? i : first,
                  picked ? first : i));
            load.getIndicesMutable().assign(indices);
          }
        continue;
      }
      // Otherwise each side runs under an scf.if on the condition, which
      // yields the side's value in the select's place.
      ++guarded;
      auto side = [&](const SetVector<Operation *> &slice, Value result) {
        return [&slice, result](OpBuilder &b, Location loc) {
          IRMapping map;
          for (Operation *op : slice)
            b.clone(*op, map);
          scf::YieldOp::create(b, loc, map.lookupOrDefault(result));
        };
      };
      OpBuilder b(select);
      auto guard = scf::IfOp::create(b, select.getLoc(), select.getCondition(),
                                     side(onTrue, select.getTrueValue()),
                                     side(onFalse, select.getFalseValue()));
      select.replaceAllUsesWith(guard.getResult(0));
      select.erase();
      for (const SetVector<Operation *> *slice : {&onTrue, &onFalse})
        for (Operation *op : llvm::reverse(*slice))
          op->erase();
    }
    zero::setKernelCounts(getOperation(), {{"gpu_guarded_selects", guarded}});
  }
};
} // namespace
