//===- GemmLoops.h - the loops of a GEMM given by its maps ------*- C++ -*-===//
//
// One definition of what a strided BLAS call computes, shared by
// `zero.rounded_matmul`'s verifier and every pass that finds GEMMs.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_IR_GEMMLOOPS_H
#define ZERO_OPT_DIALECT_ZERO_IR_GEMMLOOPS_H

#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::zero {

/// The loops of a contraction that one strided BLAS call per batch index
/// computes: up to two `batch` loops (indexing C and A or B or both: an
/// operand a batch loop does not index is broadcast along it, stride 0),
/// and `m` (A and C), `n` (B and C), `k` (A and B). Any
/// projected-permutation maps: each operand's strides along the loops say
/// how BLAS reads it.
struct GemmLoops {
  SmallVector<unsigned, 2> batch;
  unsigned m, n, k;
};

/// The loops of a contraction given by its maps (A, B, C), or nothing when
/// it is no such GEMM. Of several M (or N) loops, the one C indexes
/// innermost is the GEMM's and the others are batch loops along which B
/// (or A) is broadcast: a GEMM written in row blocks of another buffer.
std::optional<GemmLoops> getGemmLoops(ArrayRef<AffineMap> maps);

} // namespace mlir::zero

#endif
