//===- RematSolver.h - which activations to keep, under a budget -*- C++
//-*-===//
//
// The rematerialization problem of a training step, free of IR: the
// forward's ops in program order, which of their results the backward
// reads (the candidates, each kept from the forward or recomputed), their
// bytes, the cost of recomputing each op, and where the forward and the
// backward read them. A recomputed candidate is copied at the first
// backward op that needs it, for itself or for a later copy, and lives
// until its last backward reader; a kept one lives from its definition to
// its last reader. Its peak is the most candidate bytes live at once.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_SCHEDULE_REMATSOLVER_H
#define ZERO_OPT_DIALECT_ZERO_SCHEDULE_REMATSOLVER_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace mlir::zero {

struct RematProblem {
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();
  struct Node {
    std::string name;
    /// Bytes of the results the backward reads (0 when it reads none).
    int64_t bytes = 0;
    /// What recomputing the op costs (seconds on the machine, or FLOPs).
    double cost = 0;
    /// Positions in the step: the op, its last forward reader (itself when
    /// none), its first and last backward readers (kNever and 0 when none).
    int64_t def = 0, lastForward = 0, firstBackward = kNever, last = 0;
    /// The nodes whose results it reads, and those that read its results.
    SmallVector<int, 4> producers, consumers;
    /// Whether the backward reads it itself. A candidate it does not read
    /// (a segment's checkpoint, offered to the heuristic) is copied only
    /// for the copies that read it; its first and last backward times are
    /// its readers'.
    bool read = true;
    bool candidate() const { return firstBackward != kNever; }
  };
  std::vector<Node> nodes;

  /// Every candidate kept: nothing recomputed.
  std::vector<bool> keepAll() const;
  /// When each node is recomputed (kNever: it is not), given which
  /// candidates are kept: a recomputed node is copied at the first backward
  /// op that reads it or that needs a copy reading it.
  std::vector<int64_t> recomputeTimes(const std::vector<bool> &kept) const;
  /// The most candidate bytes live at once.
  int64_t peak(const std::vector<bool> &kept) const;
  /// The summed cost of the recomputed nodes.
  double cost(const std::vector<bool> &kept) const;
};

struct RematSolution {
  std::vector<bool> kept;
  int64_t peak = 0;
  double cost = 0;
  /// "milp" (CBC), "heuristic" (the stated fallback) or "keep-all".
  std::string method;
  /// Whether the cost is proven least for the budget.
  bool optimal = false;
  /// Why the fallback ran, when it did.
  std::string note;
  double seconds = 0;
};

/// The least-cost choice of kept candidates whose peak fits `budget`, from
/// the MILP with CBC within `timeLimit` seconds; larger problems or a
/// solver out of time fall back to the heuristic: the cheapest of the
/// greedy choice (cheapest recompute per byte first) and the `starts`
/// (kept vectors, e.g. segment cuts) that fit, with as many recomputed
/// candidates kept again, dearest per byte first, as the budget allows.
/// `least` is the least peak any choice reaches: when negative, it is set,
/// from the best of the greedy order's prefixes and the starts, improved
/// by a MILP of its own within a few seconds. Fails when `budget` is below
/// it.
/// Whether the MILP of `problem` is within the size CBC is given.
bool withinMilpLimit(const RematProblem &problem);

FailureOr<RematSolution> solveRemat(const RematProblem &problem, int64_t budget,
                                    double timeLimit, int64_t &least,
                                    ArrayRef<std::vector<bool>> starts = {});

} // namespace mlir::zero

#endif
