//===- TrackMemory.cpp - per-category allocation counters ------*- C++ -*-===//
//
// Every temporary buffer reports its size and category to the runtime when
// it is allocated and freed, so zero-run's counters measure what the memory
// plan predicts, allocation by allocation.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "zero-opt/Conversion/RuntimeFunctions.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUTRACKMEMORY
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;
using namespace mlir::zero;

namespace {
struct ZeroCPUTrackMemoryPass
    : zero::cpu::impl::ZeroCPUTrackMemoryBase<ZeroCPUTrackMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getBodyRegion());
    func::FuncOp kAlloc =
        lookupOrDeclareRuntimeFunction(module, RuntimeFunction::MemAlloc);
    func::FuncOp kFree =
        lookupOrDeclareRuntimeFunction(module, RuntimeFunction::MemFree);

    auto call = [&](Location loc, func::FuncOp callee, MemoryCategory c,
                    int64_t bytes) {
      Value cat = arith::ConstantIntOp::create(b, loc, (int64_t)c, 32);
      Value n = arith::ConstantIntOp::create(b, loc, bytes, 64);
      func::CallOp::create(b, loc, callee, ValueRange{cat, n});
    };
    WalkResult r = module.walk([&](Operation *op) {
      auto fn = op->getParentOfType<func::FuncOp>();
      // Kernels hold the buffers a loop allocates for each iteration.
      if (!fn ||
          !(fn->hasAttr(kEntryAttr) || (kernels && fn->hasAttr(kKernelAttr))))
        return WalkResult::advance();
      if (auto a = dyn_cast<memref::AllocOp>(op)) {
        b.setInsertionPointAfter(op);
        call(op->getLoc(), kAlloc, zero::allocCategory(op),
             zero::bufferBytes(a.getType()));
      } else if (auto d = dyn_cast<memref::DeallocOp>(op)) {
        // Deallocation frees exactly the buffers allocated here, so each
        // free is paired with its allocation statically.
        auto a = d.getMemref().getDefiningOp<memref::AllocOp>();
        if (!a) {
          op->emitError("cannot account for a deallocation of a buffer that "
                        "is not a direct allocation");
          return WalkResult::interrupt();
        }
        b.setInsertionPoint(op);
        call(op->getLoc(), kFree, zero::allocCategory(a),
             zero::bufferBytes(a.getType()));
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
