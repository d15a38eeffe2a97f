//===- Reshapes.cpp - a destination seen through inverse reshapes ---------===//
#include "zero-opt/Dialect/Zero/Utils/Reshapes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value zero::throughInverseReshapes(OpBuilder &b, Location loc, Value v,
                                   ArrayRef<Operation *> views) {
  for (Operation *view : llvm::reverse(views)) {
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(view))
      v = tensor::ExpandShapeOp::create(b, loc, collapse.getSrcType(), v,
                                        collapse.getReassociationIndices());
    else
      v = tensor::CollapseShapeOp::create(
          b, loc, v,
          cast<tensor::ExpandShapeOp>(view).getReassociationIndices());
  }
  return v;
}
