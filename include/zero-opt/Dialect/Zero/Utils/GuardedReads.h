//===- GuardedReads.h - reads a select may not need -------------*- C++ -*-===//
//
// A select picks one of two values: what only the other one needed need not
// be read. A causal attention's masked scores are `select(mask, s, -inf)`:
// a GPU thread whose mask element is false need not load its score. The
// CUDA target's `zero-gpu-guard-loads` moves such loads under the
// condition, and the timeline prices the reads they save.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_UTILS_GUARDEDREADS_H
#define ZERO_OPT_DIALECT_ZERO_UTILS_GUARDEDREADS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace mlir::zero {

/// Whether `op`, with what it holds, writes no memory: it computes, or
/// only reads (effects known, upstream's `getEffectsRecursively`).
bool onlyReads(Operation *op);

/// The ops of the select's block that compute its operand `index` (1: the
/// true value, 2: the false one) and nothing else: pure ops and loads,
/// without regions, each result used only by such ops or as that operand.
/// In block order; empty when the operand is defined elsewhere.
SetVector<Operation *> exclusiveSelectSlice(arith::SelectOp select,
                                            unsigned index);

/// The fraction of `buffer`'s elements that are true, when it is a view of
/// all of a constant i1 global (`memref.get_global`, through reshapes,
/// casts and whole subviews).
std::optional<double> constantTrueFraction(Value buffer);

/// The share of `input`'s elements a GPU launch of `op` reads when its
/// threads read what only one side of a select needs under the select's
/// condition: `input`'s block argument feeds only that side, and the
/// condition is the element of another input that is a constant mask
/// (`constantTrueFraction`; its false share for the false side). 1 when
/// the read is not guarded.
double guardedReadShare(linalg::LinalgOp op, OpOperand *input);

} // namespace mlir::zero

#endif // ZERO_OPT_DIALECT_ZERO_UTILS_GUARDEDREADS_H
