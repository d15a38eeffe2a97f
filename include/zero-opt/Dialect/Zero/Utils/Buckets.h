//===- Buckets.h - views of a bucket's members and slots --------*- C++ -*-===//
//
// A bucket stages its members in `rows` rows of a flat buffer (one per rank
// for reduce-scatter and all-gather, one for all-reduce): each member's
// elements, as `rows` rows, take the same columns of every staging row.
// The bucket copies' lowering and `zero-pack-in-place` see both sides
// through these views.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_BUCKETS_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_BUCKETS_H

#include "mlir/IR/Builders.h"

namespace mlir::zero {

/// Member `v` (identity layout, or one unit-stride row) as `rows` rows of
/// its elements, through views; one row is `v` flattened.
Value bucketMemberView(OpBuilder &b, Location loc, Value v, int64_t rows);

/// Columns [offset, offset + cols) of each of staging buffer `stage`'s
/// `rows` rows; one row is a flat range.
Value bucketSlotView(OpBuilder &b, Location loc, Value stage, int64_t rows,
                     int64_t offset, int64_t cols);

} // namespace mlir::zero

#endif
