//===- GuardLoads.cpp - loads only a select's side needs -------*- C++ -*-===//
//
// A kernel's loop body loads every operand of its op, then selects: a
// causal attention's masked score is `select(mask, s * scale, -inf)`, and
// the thread whose mask element is false loads a score it never uses. The
// loads (and the ops) that only one side of a select needs move under its
// condition: a warp whose mask is false all along skips the load, and the
// upper triangle of the scores is not read. The arithmetic on the loaded
// value stays after the guard, which then holds nothing that waits.
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

/// The ops of `slice` that wait under the condition: its loads and the
/// index arithmetic they need, when the others can run on any value
/// (arithmetic: they run after the guard on a placeholder where the side
/// is not picked), so the guard holds nothing that waits for its load and
/// a thread's next loads go out behind it (zero-gpu-batch-loads); all of
/// `slice` otherwise.
SetVector<Operation *> guardedPart(const SetVector<Operation *> &slice) {
  DenseSet<Operation *> needed;
  for (Operation *op : llvm::reverse(slice))
    if (isa<memref::LoadOp>(op) ||
        llvm::any_of(op->getUsers(),
                     [&](Operation *user) { return needed.contains(user); }))
      needed.insert(op);
  if (llvm::any_of(slice, [&](Operation *op) {
        return !needed.contains(op) && !isSpeculatable(op);
      }))
    return slice;
  SetVector<Operation *> part;
  for (Operation *op : slice)
    if (needed.contains(op))
      part.insert(op);
  return part;
}

/// The results of `inside` something outside it uses.
SmallVector<Value> escaping(const SetVector<Operation *> &inside) {
  SmallVector<Value> out;
  for (Operation *op : inside)
    for (Value v : op->getResults())
      if (llvm::any_of(v.getUsers(),
                       [&](Operation *user) { return !inside.contains(user); }))
        out.push_back(v);
  return out;
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
      SetVector<Operation *> inTrue = guardedPart(onTrue);
      SetVector<Operation *> inFalse = guardedPart(onFalse);
      SmallVector<Value> outTrue = escaping(inTrue);
      SmallVector<Value> outFalse = escaping(inFalse);
      SmallVector<Value> out = llvm::to_vector(outTrue);
      out.append(outFalse);
      // The side not picked yields zeros.
      if (llvm::any_of(out, [](Value v) {
            return !isa_and_nonnull<TypedAttr>(
                Builder(v.getContext()).getZeroAttr(v.getType()));
          }))
        continue;
      ++guarded;
      auto side = [&](const SetVector<Operation *> &inside, bool isTrue) {
        return [&, isTrue](OpBuilder &b, Location loc) {
          IRMapping map;
          for (Operation *op : inside)
            b.clone(*op, map);
          SmallVector<Value> yields;
          for (auto [values, mine] : {std::pair(ArrayRef(outTrue), isTrue),
                                      std::pair(ArrayRef(outFalse), !isTrue)})
            for (Value v : values)
              yields.push_back(
                  mine
                      ? map.lookup(v)
                      : arith::ConstantOp::create(
                            b, loc, cast<TypedAttr>(b.getZeroAttr(v.getType())))
                            .getResult());
          scf::YieldOp::create(b, loc, yields);
        };
      };
      OpBuilder b(select);
      auto guard = scf::IfOp::create(b, select.getLoc(), select.getCondition(),
                                     side(inTrue, true), side(inFalse, false));
      for (auto [v, r] : llvm::zip(out, guard.getResults()))
        v.replaceAllUsesWith(r);
      // What runs on the guard's values comes after it, in order.
      for (const SetVector<Operation *> *slice : {&onTrue, &onFalse})
        for (Operation *op : *slice)
          if (!inTrue.contains(op) && !inFalse.contains(op))
            op->moveBefore(select);
      for (const SetVector<Operation *> *inside : {&inTrue, &inFalse})
        for (Operation *op : llvm::reverse(*inside))
          op->erase();
    }
    zero::setKernelCounts(getOperation(), {{"gpu_guarded_selects", guarded}});
  }
};
} // namespace
