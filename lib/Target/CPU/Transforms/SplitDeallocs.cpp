//===- SplitDeallocs.cpp - deallocations that alias nothing ----*- C++ -*-===//
//
// Ownership-based deallocation ends a straight-line step with one
// bufferization.dealloc of all its buffers; upstream simplification then
// asks, for every pair of them, whether they may alias. Distinct
// memref.allocs never alias, so a buffer whose allocation no other operand
// stems from can be freed on its own, found in one pass over the operands.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUSPLITDEALLOCS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
/// The allocation or block argument `v` views, or null when it comes from
/// anything else (a loop result, a call).
Value originOf(Value v) {
  Value root = zero::rootBuffer(v);
  return isa<BlockArgument>(root) || root.getDefiningOp<memref::AllocOp>()
             ? root
             : Value();
}

struct ZeroCPUSplitDeallocsPass
    : zero::cpu::impl::ZeroCPUSplitDeallocsBase<ZeroCPUSplitDeallocsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation()->walk(
        [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
    for (bufferization::DeallocOp op : deallocs)
      split(op);
  }

  void split(bufferization::DeallocOp op) {
    if (op.getMemrefs().size() < 2)
      return;
    // How many operands stem from each origin; any unknown origin keeps
    // the op whole.
    DenseMap<Value, unsigned> uses;
    for (Value v : llvm::concat<Value>(op.getMemrefs(), op.getRetained())) {
      Value origin = originOf(v);
      if (!origin)
        return;
      ++uses[origin];
    }
    SmallVector<Value> memrefs, conditions;
    OpBuilder b(op);
    for (auto [m, c] : llvm::zip(op.getMemrefs(), op.getConditions())) {
      Value origin = originOf(m);
      if (isa<OpResult>(origin) && uses[origin] == 1 &&
          matchPattern(c, m_One())) {
        bufferization::DeallocOp::create(b, op.getLoc(), ValueRange{m},
                                         ValueRange{c}, ValueRange{});
        continue;
      }
      memrefs.push_back(m);
      conditions.push_back(c);
    }
    op.getMemrefsMutable().assign(memrefs);
    op.getConditionsMutable().assign(conditions);
  }
};
} // namespace
