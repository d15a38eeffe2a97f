//===- ApplyNoAlias.cpp - noalias on expanded kernel parameters -*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROAPPLYNOALIAS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {
struct ZeroApplyNoAliasPass
    : zero::impl::ZeroApplyNoAliasBase<ZeroApplyNoAliasPass> {
  void runOnOperation() override {
    for (Region &region : getOperation()->getRegions())
      for (auto func : region.getOps<LLVM::LLVMFuncOp>()) {
        auto params =
            func->getAttrOfType<DenseI64ArrayAttr>(zero::kNoAliasParamsAttr);
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
        func->removeAttr(zero::kNoAliasParamsAttr);
      }
  }
};
} // namespace
