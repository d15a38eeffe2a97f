//===- MatmulLayout.h - matmuls that read operands transposed ---*- C++ -*-===//
//
// `zero-fold-transposes-into-matmuls` writes, and `zero-linalg-to-blas`
// reads, matmuls whose indexing maps are the default ones except that A or
// B is read with its innermost pair swapped: a GEMM with transpose flags.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_MATMULLAYOUT_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_MATMULLAYOUT_H

#include "zero-opt/Dialect/Zero/IR/GemmLoops.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::zero {

/// `map` with its two last results swapped.
AffineMap swapInnermostResults(AffineMap map);

/// Which operands a `linalg.matmul` or `linalg.batch_matmul` reads
/// transposed.
struct GemmTransposes {
  bool a = false, b = false;
};

/// The transposes of `op`, or nothing when it is not a matmul or batch
/// matmul whose maps are the default ones up to swapping the innermost pair
/// of A or B.
std::optional<GemmTransposes> getGemmTransposes(linalg::LinalgOp op);

/// The default maps of `op`'s kind with the given operands transposed.
SmallVector<AffineMap> getGemmMaps(linalg::LinalgOp op, GemmTransposes t);

/// The loops of `op` (a named matmul or a `linalg.generic` multiply-add
/// with two inputs), or nothing when it is not such a GEMM.
std::optional<GemmLoops> getGemmLoops(linalg::LinalgOp op);

/// `map`, which reads the result of `reshape` (a tensor.expand_shape or
/// tensor.collapse_shape), as a read of its source, when the reshape only
/// adds or drops dimensions of size 1; nullopt otherwise.
std::optional<AffineMap> readThroughUnitReshape(Operation *reshape,
                                                AffineMap map);

/// Whether `fill` writes a constant float zero.
bool isZeroFill(linalg::FillOp fill);

/// The `linalg.fill` of zeros into `c` that the GEMM `op` would accumulate
/// onto, when nothing between them has memory effects: BLAS then writes C
/// without reading it (beta = 0) and the fill goes. Null otherwise.
linalg::FillOp zeroFillBefore(Operation *op, Value c);

/// Whether `fill` is such a fill of the GEMM after it (zero-linalg-to-blas
/// erases it).
bool isGemmZeroFill(linalg::FillOp fill);

/// What a 16-bit GEMM's f32 product reaches when every use only rounds it:
/// views that keep its values (`tensor.extract_slice`, `collapse_shape`,
/// `expand_shape`) and the block arguments of the consumers that round.
struct RoundedUses {
  SmallVector<Value> views;
  SmallVector<std::pair<linalg::GenericOp, BlockArgument>> consumers;
};

/// For a GEMM on static tensors whose A and B are bf16 (or f16), whose f32
/// sums start from a zero fill, and whose every use, through views, is a
/// `linalg.generic` input that the body only rounds to A's type (to
/// nearest even): those uses. Such a GEMM may write its sums rounded
/// (`zero-round-matmul-results`).
std::optional<RoundedUses> getRoundedUses(linalg::LinalgOp op);

} // namespace mlir::zero

#endif // ZERO_OPT_DIALECT_ZERO_UTILS_MATMULLAYOUT_H
