//===- Masks.h - values a constant mask makes zero --------------*- C++ -*-===//
//
// A causal softmax's probabilities are exactly zero where its constant mask
// hides: `exp(select(mask, s, -inf) - max)` is `exp(-inf)`. The passes that
// skip those zeros (a sum's terms, a GEMM's blocks) prove them here.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_MASKS_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_MASKS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <tuple>

namespace mlir::zero {

/// exp(x) rounds to zero in f32 (and every narrower type) below this.
constexpr double kMaxMaskFill = -104;

/// A pass's `max-fill` option (the fill at or below which a select's value
/// counts as -inf before an exponential): an error at `op` when it is
/// above kMaxMaskFill.
LogicalResult checkMaxFill(Operation *op, double maxFill);

/// Whether every slice of a mask along the dimensions that a map gives some
/// loops (the others fixed) holds an element equal to `kept`. Answers are
/// kept: every layer's softmax asks about the same mask.
class MaskSliceCheck {
public:
  bool holds(DenseElementsAttr mask, AffineMap map,
             const llvm::SmallBitVector &loops, bool kept);

private:
  DenseMap<std::tuple<Attribute, uint64_t, unsigned>, bool> answers;
};

/// A select's condition without its negation (an `xori` with true);
/// `negated` says whether there was one.
Value withoutNegation(Value condition, bool &negated);

/// A constant i1 mask, its indexing map in a consumer's loops, and the
/// value of its elements where the consumer's operand is zero.
struct ZeroMask {
  Value bits;
  DenseElementsAttr values;
  AffineMap map;
  bool zeroWhen;
};

/// The mask where `x`, read through `xMap` (a consumer's loops to `x`'s
/// dimensions), is exactly zero: `x` is the one result of a parallel
/// `linalg.generic` whose yielded value is zero wherever an element of a
/// constant i1 input hides it (a select of zero, or the exponential of a
/// select of a fill at or below `maxFill`, less a row's statistic, scaled),
/// the select and the exponential in that generic or in the parallel
/// generics whose results it reads (a softmax stored in stages). None when
/// that is not proven.
std::optional<ZeroMask> maskedZerosOf(Value x, AffineMap xMap, double maxFill,
                                      MaskSliceCheck &slices);

/// Marks a parallel `linalg.generic` with an identity result map whose
/// elements outside a region no use ever reads (zero-split-masked-matmuls
/// sets it): a target may leave them unwritten. An i64 array of runs
/// `end, lo, hi`: the rows (the op's second-to-last loop) from the last
/// run's end to `end` are read at the columns (its last loop) [lo, hi).
constexpr llvm::StringLiteral kWrittenRegionAttr = "zero.written_region";

/// The region an op's result is read in, over its last two loops.
struct WrittenRegion {
  struct Run {
    int64_t end, lo, hi;
  };
  int64_t rows = 0, cols = 0;
  SmallVector<Run> runs;

  /// Rows up to `end` read at [lo, hi): a run of its own, or the last
  /// one extended when it reads the same columns.
  void append(Run run);
  /// The share of the rows x cols elements inside.
  double share() const;
  /// Each run's columns widened to multiples of `multiple` (within cols),
  /// runs that became equal merged.
  WrittenRegion rounded(int64_t multiple) const;
  /// The attribute's value.
  SmallVector<int64_t> flat() const;
};

/// `op`'s kWrittenRegionAttr, when it is well formed for its loops: a
/// linalg op of at least two static loops, the last two of `rows` and
/// `cols`, runs ending in increasing order at `rows`, each 0 <= lo <= hi
/// <= cols. None otherwise (the whole result is written).
std::optional<WrittenRegion> writtenRegionOf(Operation *op);

} // namespace mlir::zero

#endif
