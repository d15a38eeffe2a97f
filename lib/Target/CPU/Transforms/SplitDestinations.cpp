//===- SplitDestinations.cpp - one destination per write -------*- C++ -*-===//
//
// CSE merges identical tensor.empty and linalg.fill ops, so hundreds of
// linalg ops can share one destination. One-shot bufferization then checks
// every pair of those writes for conflicts (quadratic in the uses, minutes
// on a 48-layer model) only to give each its own buffer anyway. Giving each
// write its own destination up front yields the same buffers.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUSPLITDESTINATIONS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

/// A destination that only holds a fill value or nothing, so copying it is
/// as good as sharing it.
static bool isFreshDestination(Operation *op) {
  if (isa<tensor::EmptyOp>(op))
    return true;
  auto fill = dyn_cast<linalg::FillOp>(op);
  return fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
}

namespace {
struct ZeroCPUSplitDestinationsPass
    : zero::cpu::impl::ZeroCPUSplitDestinationsBase<
          ZeroCPUSplitDestinationsPass> {
  void runOnOperation() override {
    OpBuilder b(&getContext());
    getOperation().walk([&](DestinationStyleOpInterface dps) {
      if (!dps.hasPureTensorSemantics())
        return;
      for (OpOperand &init : dps.getDpsInitsMutable()) {
        Operation *def = init.get().getDefiningOp();
        if (!def || !isFreshDestination(def) || def->hasOneUse() ||
            def->getBlock() != dps->getBlock())
          continue;
        // The clone sits by its user and carries the user's location (and
        // so its memory category).
        b.setInsertionPoint(dps);
        IRMapping map;
        if (auto fill = dyn_cast<linalg::FillOp>(def)) {
          Operation *empty = fill.getOutputs()[0].getDefiningOp();
          map.map(empty->getResult(0), b.clone(*empty)->getResult(0));
          map.lookup(empty->getResult(0))
              .getDefiningOp()
              ->setLoc(dps->getLoc());
        }
        Operation *copy = b.clone(*def, map);
        copy->setLoc(dps->getLoc());
        init.set(copy->getResult(0));
      }
    });
  }
};
} // namespace
