//===- ApplyNoAlias.cpp - noalias on expanded kernel parameters -*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUAPPLYNOALIAS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
struct ZeroCPUApplyNoAliasPass
    : zero::cpu::impl::ZeroCPUApplyNoAliasBase<ZeroCPUApplyNoAliasPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      auto params =
          func->getAttrOfType<DenseI64ArrayAttr>(zero::cpu::kNoAliasParamsAttr);
      if (!params)
        continue;
      for (int64_t i : params.asArrayRef()) {
        if (i < 0 || i >= func.getNumArguments() ||
            !isa<LLVM::LLVMPointerType>(func.getArgument(i).getType())) {
          func.emitError("zero.noalias_params names parameter ")
              << i << ", which is not a pointer";
          return signalPassFailure();
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                        UnitAttr::get(&getContext()));
      }
      func->removeAttr(zero::cpu::kNoAliasParamsAttr);
    }
  }
};
} // namespace
