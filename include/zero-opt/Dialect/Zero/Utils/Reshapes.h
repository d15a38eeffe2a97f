//===- Reshapes.h - a destination seen through inverse reshapes -*- C++ -*-===//
//
// A producer whose result reaches its user through tensor reshapes can
// write a buffer laid out as the user sees it: the buffer reshaped back.
// `zero-gpu-pad-in-place` and `zero-gpu-bias-into-gemms` do so.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_RESHAPES_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_RESHAPES_H

#include "mlir/IR/Builders.h"

namespace mlir::zero {

/// `v` seen through the inverse of `views` (the tensor.expand_shape and
/// tensor.collapse_shape ops from a producer's result to the value `v` is
/// laid out as, in that order): a value of the producer's result's shape.
Value throughInverseReshapes(OpBuilder &b, Location loc, Value v,
                             ArrayRef<Operation *> views);

} // namespace mlir::zero

#endif
