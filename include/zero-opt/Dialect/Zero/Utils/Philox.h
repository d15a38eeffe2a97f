//===- Philox.h - the counter-based draws of dropout masks ------*- C++ -*-===//
//
// A dropout mask is a pure function of (seed, node, step, row of the
// global batch, element within the row): the first word of Philox4x32-10
// (Salmon et al., SC 2011) keyed by the seed and counting (element, row,
// step, node). The importer's mask and the fused attention kernels build
// the same draw from here, so both keep the same elements.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_PHILOX_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_PHILOX_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

#include <cstdint>

namespace mlir::zero {

/// Integer ops one draw builds (10 rounds of two 32 x 32 -> 64-bit
/// products, 5 ops each, and 4 xors; the shift and the compare), for
/// pricing.
constexpr double kPhiloxDrawOps = 10 * (2 * 5 + 4) + 2;

/// The keep threshold of a dropout of `ratio`: an element is kept when the
/// top 24 bits of its word are below it.
uint32_t dropoutKeepThreshold(double ratio);

/// Whether each element is kept (i1): `elem`, `row` and `step` are i32
/// values, or vectors of i32 of one shape (then so is the result).
Value buildDropoutKeep(OpBuilder &b, Location loc, Value elem, Value row,
                       Value step, uint64_t seed, uint32_t stream,
                       uint32_t keep);

} // namespace mlir::zero

#endif // ZERO_OPT_DIALECT_ZERO_UTILS_PHILOX_H
