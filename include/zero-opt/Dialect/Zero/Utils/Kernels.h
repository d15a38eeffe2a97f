//===- Kernels.h - what a kernel of a step can hold -------------*- C++ -*-===//
//
// zero-form-kernels outlines the step's compute into kernels around kernel
// roots; the CUDA target's passes and the timeline's launch model ask the
// same questions of the same IR, so the answers live here.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_KERNELS_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_KERNELS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::zero {

/// Whether `op`, with everything nested in it, is pure compute on buffers
/// (no call, no zero dialect op) that a kernel can hold.
bool isComputeOnly(Operation *op);

/// The op a kernel is formed around: a linalg op or copy, a launch group,
/// or a loop or conditional of pure compute that yields no buffer. What is not
/// stays in the step (allocation, views, scalar bookkeeping, calls,
/// collectives).
bool isKernelRoot(Operation *op);

/// Whether nothing nested in `op` writes memory: its own outputs are all
/// it writes (a gather's loads are reads).
bool writesOnlyOutputs(Operation *op);

/// Sets `counts` in the module's `zero.kernels` dictionary, keeping its
/// other entries (the counts `--time-report` prints).
void setKernelCounts(Operation *module,
                     ArrayRef<std::pair<StringRef, int64_t>> counts);

/// The linalg.fill right before `root` (views and constants in between)
/// that initializes one of root's outputs, such as a reduction's
/// accumulator; null when there is none.
Operation *initializingFill(Operation *root);

/// The fills right before `root` (views and constants in between) that
/// initialize distinct outputs of root, nearest first: one per output of a
/// reduction with several. The first is `initializingFill(root)`.
SmallVector<Operation *, 2> initializingFills(Operation *root);

/// The op whose accumulator `fill` initializes, when a GPU launch of that
/// op can initialize it too (one launch instead of two): the op follows the
/// fill as `initializingFills` finds them and is no GEMM (cuBLAS computes
/// those). An op with parallel loops needs each thread to initialize the
/// elements it computes, which nobody else reads: the output's map indexes
/// each parallel loop and nothing else, and no other operand may overlap it
/// (`mayOverlap`). A serial op (one thread) takes any. Null otherwise.
Operation *
fusedInitializationRoot(Operation *fill,
                        llvm::function_ref<bool(Value, Value)> mayOverlap);

} // namespace mlir::zero

#endif
