//===- ReassociateReductions.cpp - reductions that vectorize ----*- C++ -*-===//
//
// A sum over a row in loop order is a serial chain of additions; marking
// the combining op `reassoc` lets LLVM split it across vector lanes.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUREASSOCIATEREDUCTIONS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
struct ZeroCPUReassociateReductionsPass
    : zero::cpu::impl::ZeroCPUReassociateReductionsBase<
          ZeroCPUReassociateReductionsPass> {
  void runOnOperation() override {
    getOperation().walk([](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() == 0 || !op.getBlock())
        return;
      Operation *yield = op.getBlock()->getTerminator();
      for (BlockArgument acc : op.getRegionOutputArgs()) {
        Value combined = yield->getOperand(acc.getArgNumber() -
                                           op.getNumDpsInputs());
        auto fm = combined.getDefiningOp<arith::ArithFastMathInterface>();
        if (!fm || !llvm::is_contained(combined.getDefiningOp()->getOperands(),
                                       Value(acc)))
          continue;
        fm->setAttr(fm.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(
                        op->getContext(), fm.getFastMathFlagsAttr().getValue() |
                                              arith::FastMathFlags::reassoc));
      }
    });
  }
};
} // namespace
