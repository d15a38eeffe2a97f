//===- KernelNoAlias.cpp - alias facts for kernel arguments -----*- C++ -*-===//
//
// The caller knows which buffers a kernel's arguments are views of; the
// kernel, compiled alone, does not. Passing that on as `llvm.noalias` lets
// LLVM keep accumulators in registers and vectorize without run-time
// overlap checks.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUKERNELNOALIAS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {

struct ZeroCPUKernelNoAliasPass
    : zero::cpu::impl::ZeroCPUKernelNoAliasBase<ZeroCPUKernelNoAliasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    SymbolUserMap users(symbols, module);
    for (auto kernel : module.getOps<func::FuncOp>()) {
      if (!kernel->hasAttr(zero::kKernelAttr) || kernel.isExternal())
        continue;
      unsigned n = kernel.getNumArguments();
      SmallVector<bool> noAlias = zero::noAliasArguments(kernel, users);
      if (llvm::none_of(noAlias, [](bool b) { return b; }))
        continue;
      // convert-func-to-llvm drops argument attributes of memrefs, which
      // expand into a descriptor's fields; record which LLVM parameters
      // get `noalias` once expanded: the aligned pointer, the one loads
      // and stores go through (the allocated pointer, equal to it, is not
      // accessed, and marking both would claim they differ).
      // noAliasArguments marks nothing unless every argument is a ranked
      // memref or a scalar, whose expansion is known.
      SmallVector<int64_t> params;
      int64_t position = 0;
      for (unsigned i = 0; i < n; ++i) {
        if (noAlias[i]) {
          kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                            UnitAttr::get(&getContext()));
          params.push_back(position + 1);
        }
        position += *zero::llvmParameterCount(kernel.getArgument(i).getType());
      }
      if (!params.empty())
        kernel->setAttr(zero::kNoAliasParamsAttr,
                        DenseI64ArrayAttr::get(&getContext(), params));
    }
  }
};
} // namespace
