//===- PrepareEntries.cpp - step functions ahead of bufferization -*- C++
//-*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUPREPAREENTRIES
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
struct ZeroCPUPrepareEntriesPass
    : zero::cpu::impl::ZeroCPUPrepareEntriesBase<ZeroCPUPrepareEntriesPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!fn->hasAttr("zero.entry") || fn.isExternal())
        continue;
      int64_t buffers = fn.getNumArguments();
      SmallVector<int64_t> inPlace;
      for (unsigned i = 0; i < fn.getNumResults(); ++i) {
        if (fn.getResultAttr(i, "zero.updates"))
          inPlace.push_back(i);
        else
          ++buffers;
      }
      fn->setAttr("zero.inplace_results",
                  DenseI64ArrayAttr::get(&getContext(), inPlace));
      fn->setAttr(
          "zero.abi_buffers",
          IntegerAttr::get(IntegerType::get(&getContext(), 64), buffers));
      fn.setPrivate();
    }
  }
};
} // namespace
