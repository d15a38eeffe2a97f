//===- GuardLoads.cpp - loads only a select's side needs -------*- C++ -*-===//
//
// A kernel's loop body loads every operand of its op, then selects: a
// causal attention's masked score is `select(mask, s * scale, -inf)`, and
// the thread whose mask element is false loads a score it never uses. The
// loads (and the ops) that only one side of a select needs move under its
// condition: a warp whose mask is false all along skips the load, and the
// upper triangle of the scores is not read.
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
