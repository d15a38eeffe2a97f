//===- TosaBuilder.h - shape-exact TOSA building helpers --------*- C++ -*-===//
//
// The TOSA idioms that the ONNX importer, the derivative rules and the
// training-step passes all build: splat constants, elementwise ops with
// TOSA's size-1 broadcasting, const_shape operands, reshapes, slices and
// pads. Result types follow from the operand types, so every user builds
// the same ops for the same request.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_TOSABUILDER_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_TOSABUILDER_H

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::zero {

/// TOSA builders at one location. Elementwise ops take operands of equal
/// rank and broadcast their size-1 dimensions, as TOSA does; rank
/// equalization (ONNX's numpy rules) is left to the importer.
class TosaBuilder {
public:
  TosaBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  OpBuilder &b;
  Location loc;

  static RankedTensorType typeOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  static ArrayRef<int64_t> shapeOf(Value v) { return typeOf(v).getShape(); }

  // --- Constants ---------------------------------------------------------
  /// Splat of `v` in `t`: a float, a bool (v != 0) or a truncated integer.
  Value splat(RankedTensorType t, double v);
  /// `v` as a tensor of `rank` size-1 dimensions, which broadcasts against
  /// any tensor of that rank.
  Value scalar(Type elt, double v, int64_t rank = 0);
  /// A scalar of v's element type and rank.
  Value scalarLike(Value v, double c);
  Value zerosLike(Value v) { return splat(typeOf(v), 0.0); }
  /// A constant holding `attr`, of its type.
  Value constant(DenseElementsAttr attr);
  /// The !tosa.shape operand that reshape, slice, pad and tile take.
  Value constShape(ArrayRef<int64_t> shape);

  // --- Elementwise -------------------------------------------------------
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  /// x * y with the zero i8 shift operand tosa.mul requires.
  Value mul(Value x, Value y);
  Value neg(Value x);
  Value recip(Value x);
  Value minimum(Value x, Value y);
  /// PyTorch clip_grad_norm_'s `min(1, maxNorm * (1 / (norm + 1e-6)))` for
  /// a 0-d `norm`, in its type.
  Value clipCoefficient(Value norm, double maxNorm);
  Value select(Value cond, Value x, Value y);
  /// x > y and x >= y, as i1 tensors.
  Value greater(Value x, Value y);
  Value greaterEqual(Value x, Value y);
  Value logicalAnd(Value x, Value y);
  Value logicalNot(Value x);
  /// `v` with element type `elt`; `v` itself when it has it already.
  Value castTo(Value v, Type elt);
  /// Square root through linalg: TOSA has none.
  Value sqrt(Value v);

  // --- Shapes ------------------------------------------------------------
  /// `v` itself when it has `shape` already.
  Value reshape(Value v, ArrayRef<int64_t> shape);
  Value transpose(Value v, ArrayRef<int32_t> perm);
  /// Reduces `v` over `axes` with `OpTy` (tosa.reduce_sum, _max, _min or
  /// _product), keeping them as size 1; axes of size 1 build nothing.
  /// Adjacent axes (unit ones between them included) are one dimension of a
  /// reshape and one reduction.
  template <typename OpTy> Value reduce(Value v, ArrayRef<int64_t> axes);
  Value reduceSum(Value v, ArrayRef<int64_t> axes) {
    return reduce<tosa::ReduceSumOp>(v, axes);
  }
  /// Sums `g` down to `shape` (same rank) over the dimensions where `shape`
  /// has 1: the adjoint of TOSA's broadcasting.
  Value unbroadcast(Value g, ArrayRef<int64_t> shape);
  /// Zero padding per dimension; `v` itself when there is none.
  Value pad(Value v, ArrayRef<int64_t> before, ArrayRef<int64_t> after);
  /// Unit-stride slice; `v` itself when the slice is all of it.
  Value slice(Value v, ArrayRef<int64_t> start, ArrayRef<int64_t> size);

private:
  /// The result shape of TOSA's broadcasting of equal-rank shapes.
  static SmallVector<int64_t> broadcast(ArrayRef<int64_t> x,
                                        ArrayRef<int64_t> y);
};

} // namespace mlir::zero

#endif
