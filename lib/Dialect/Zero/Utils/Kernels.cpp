//===- Kernels.cpp - what a kernel of a step can hold ---------------------===//
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"

using namespace mlir;

bool mlir::zero::isComputeOnly(Operation *op) {
  WalkResult r = op->walk([](Operation *nested) {
    if (isa<CallOpInterface>(nested) || isa<ZeroDialect>(nested->getDialect()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

bool mlir::zero::isKernelRoot(Operation *op) {
  if (isa<linalg::LinalgOp, memref::CopyOp>(op))
    return isComputeOnly(op);
  if (isa<scf::ForOp, scf::IfOp, scf::WhileOp, scf::ParallelOp, scf::ForallOp>(
          op))
    return isComputeOnly(op) && llvm::all_of(op->getResultTypes(), [](Type t) {
             return !isa<BaseMemRefType>(t);
           });
  return false;
}
