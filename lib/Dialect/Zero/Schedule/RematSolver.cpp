//===- RematSolver.cpp - which activations to keep, under a budget --------===//
//
// The MILP is Checkmate's (Jain et al., MLSys 2020) on the step's fixed op
// order: a binary per candidate (kept or recomputed) and, per recomputed
// candidate and backward time, whether its copy exists yet. A copy exists
// by its first backward reader, once made it stays until its last reader,
// and a copy needs the copies of the candidates it reads through
// recomputed ops. Every backward time bounds the live candidate bytes,
// and every forward definition the bytes the forward holds.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Schedule/RematSolver.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"

#include <Cbc_C_Interface.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>

using namespace mlir;
using namespace mlir::zero;

static constexpr int64_t kNever = RematProblem::kNever;

std::vector<bool> RematProblem::keepAll() const {
  std::vector<bool> kept(nodes.size());
  for (auto [i, n] : llvm::enumerate(nodes))
    kept[i] = n.candidate();
  return kept;
}

std::vector<int64_t>
RematProblem::recomputeTimes(const std::vector<bool> &kept) const {
  std::vector<int64_t> at(nodes.size(), kNever);
  for (int i = int(nodes.size()) - 1; i >= 0; --i) {
    if (kept[i])
      continue;
    int64_t t = nodes[i].read ? nodes[i].firstBackward : kNever;
    for (int c : nodes[i].consumers)
      t = std::min(t, at[c]);
    at[i] = t;
  }
  return at;
}

int64_t RematProblem::peak(const std::vector<bool> &kept) const {
  std::vector<int64_t> at = recomputeTimes(kept);
  int64_t peak = 0;
  std::vector<int64_t> times;
  for (const Node &n : nodes)
    if (n.candidate()) {
      // The forward, as each candidate is defined.
      int64_t live = 0;
      for (auto [j, m] : llvm::enumerate(nodes))
        if (m.candidate() && m.def <= n.def &&
            (kept[j] || m.lastForward >= n.def))
          live += m.bytes;
      peak = std::max(peak, live);
      times.push_back(n.firstBackward);
    }
  // The backward, at each first reader (where copies are made).
  for (int64_t t : times) {
    int64_t live = 0;
    for (auto [j, m] : llvm::enumerate(nodes))
      if (m.candidate() && t <= m.last && (kept[j] || at[j] <= t))
        live += m.bytes;
    peak = std::max(peak, live);
  }
  return peak;
}

double RematProblem::cost(const std::vector<bool> &kept) const {
  std::vector<int64_t> at = recomputeTimes(kept);
  double cost = 0;
  for (auto [i, n] : llvm::enumerate(nodes))
    if (at[i] != kNever)
      cost += n.cost;
  return cost;
}

/// The candidates, cheapest to recompute per byte first: the greedy
/// fallback recomputes a prefix of this order.
static SmallVector<int> greedyOrder(const RematProblem &p) {
  SmallVector<int> order;
  for (auto [i, n] : llvm::enumerate(p.nodes))
    if (n.candidate())
      order.push_back(i);
  auto price = [&](int i) {
    return p.nodes[i].cost / double(std::max<int64_t>(1, p.nodes[i].bytes));
  };
  llvm::stable_sort(order, [&](int a, int b) { return price(a) < price(b); });
  return order;
}

/// Kept: all but the first `recomputed` of `order`.
static std::vector<bool> keptBut(const RematProblem &p, ArrayRef<int> order,
                                 size_t recomputed) {
  std::vector<bool> kept = p.keepAll();
  for (int i : order.take_front(recomputed))
    kept[i] = false;
  return kept;
}

/// The shortest prefix of the greedy order that fits (a binary search: the
/// peak falls as more is recomputed, up to copies made earlier for later
/// ones); recomputes every candidate when none does.
static RematSolution greedy(const RematProblem &p, int64_t budget) {
  SmallVector<int> order = greedyOrder(p);
  size_t lo = 0, hi = order.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (p.peak(keptBut(p, order, mid)) <= budget)
      hi = mid;
    else
      lo = mid + 1;
  }
  RematSolution s;
  s.kept = keptBut(p, order, lo);
  s.method = "heuristic";
  return s;
}

/// The prefix of the greedy order with the least peak.
static std::vector<bool> greedyLeast(const RematProblem &p) {
  SmallVector<int> order = greedyOrder(p);
  std::vector<bool> best = p.keepAll(), kept = best;
  int64_t bestPeak = p.peak(best);
  for (int i : order) {
    kept[i] = false;
    if (int64_t peak = p.peak(kept); peak < bestPeak) {
      bestPeak = peak;
      best = kept;
    }
  }
  return best;
}

/// Keeps again the recomputed candidates of `kept`, dearest to recompute
/// per byte first, while the peak stays within `budget`.
static void keepWhileFits(const RematProblem &p, std::vector<bool> &kept,
                          int64_t budget) {
  SmallVector<int> order = greedyOrder(p);
  for (int i : llvm::reverse(order)) {
    if (kept[i])
      continue;
    kept[i] = true;
    if (p.peak(kept) > budget)
      kept[i] = false;
  }
}

namespace {
/// The MILP's columns and rows, built for CBC.
class Milp {
public:
  /// Least cost within `budget`, or (budget < 0) the least peak.
  Milp(const RematProblem &p, int64_t budget) : p(p), budget(budget) {}

  /// Lays out the columns; false when there are over `maxColumns`.
  bool layOut(size_t maxColumns);
  /// Lays out and builds the model; false when it is over `maxColumns`.
  bool build(size_t maxColumns);
  size_t columns() const { return numColumns; }
  /// Solves within `timeLimit`; the kept candidates, or none.
  std::optional<std::vector<bool>> solve(double timeLimit,
                                         const std::vector<bool> &start,
                                         bool &optimal, bool &timedOut);

private:
  const RematProblem &p;
  int64_t budget;
  std::vector<int64_t> times;        ///< backward times, ascending
  std::vector<int> keepCol, costCol; ///< per node: k (candidates), r
  std::vector<int> lo, hi;           ///< per node: window of time indices
  std::vector<int> copyBase;         ///< per node: column of c at lo
  size_t numColumns = 0;
  struct Row {
    SmallVector<int> cols;
    SmallVector<double> coefs;
    char sense;
    double rhs;
  };
  std::vector<Row> rows;
  std::vector<double> objective;
  std::vector<bool> integer;
  int peakCol = -1; ///< the least-peak mode's peak, in maxBytes
  double byteScale = 1;

  bool minimizePeak() const { return budget < 0; }
  /// A row bounding live bytes: by the budget, or by the peak column.
  Row memoryRow() {
    if (minimizePeak())
      return Row{{peakCol}, {-1}, 'L', 0};
    return Row{{}, {}, 'L', double(budget) * byteScale};
  }

public:
  /// The least peak's value in the solution (least-peak mode).
  double peakScale() const { return 1 / byteScale; }

  int addColumn(double obj, bool isInteger) {
    objective.push_back(obj);
    integer.push_back(isInteger);
    return int(numColumns++);
  }
  int copyCol(int node, int t) const { return copyBase[node] + t - lo[node]; }
  int timeIndex(int64_t t) const {
    return int(llvm::lower_bound(times, t) - times.begin());
  }
};
} // namespace

bool Milp::layOut(size_t maxColumns) {
  const auto &nodes = p.nodes;
  size_t n = nodes.size();
  for (const auto &node : nodes)
    if (node.candidate())
      times.push_back(node.firstBackward);
  llvm::sort(times);
  times.erase(std::unique(times.begin(), times.end()), times.end());

  // Windows: a copy can exist from the earliest first reader among the
  // node and what reads it, and counts until its last reader.
  lo.assign(n, INT_MAX);
  hi.assign(n, -1);
  for (int i = int(n) - 1; i >= 0; --i) {
    int64_t first = nodes[i].firstBackward;
    int l = nodes[i].candidate() ? timeIndex(first) : INT_MAX;
    for (int c : nodes[i].consumers)
      l = std::min(l, lo[c]);
    lo[i] = l;
    if (nodes[i].candidate())
      hi[i] = int(llvm::upper_bound(times, nodes[i].last) - times.begin()) - 1;
  }
  keepCol.assign(n, -1);
  costCol.assign(n, -1);
  copyBase.assign(n, -1);
  size_t copies = 0;
  for (size_t i = 0; i < n; ++i)
    if (nodes[i].candidate() && lo[i] <= hi[i])
      copies += hi[i] - lo[i] + 1;
  numColumns = copies + n;
  return numColumns <= maxColumns;
}

bool Milp::build(size_t maxColumns) {
  if (!layOut(maxColumns))
    return false;
  const auto &nodes = p.nodes;
  size_t n = nodes.size();
  // Scaled so that the solver's tolerances are far below a byte and a
  // cost's smallest step.
  double totalCost = 0;
  int64_t maxBytes = 1;
  for (const auto &node : nodes) {
    totalCost += node.cost;
    maxBytes = std::max(maxBytes, node.bytes);
  }
  double costScale = totalCost > 0 ? 1e6 / totalCost : 1;
  if (minimizePeak())
    costScale = 0;
  byteScale = 1.0 / double(maxBytes);
  numColumns = 0;
  if (minimizePeak())
    peakCol = addColumn(1, false);
  for (size_t i = 0; i < n; ++i) {
    if (nodes[i].candidate()) {
      // Cost (1 - k): the constant part is left out of the objective.
      keepCol[i] = addColumn(-nodes[i].cost * costScale, true);
      copyBase[i] = int(numColumns);
      for (int t = lo[i]; t <= hi[i]; ++t)
        addColumn(0, false);
    } else {
      costCol[i] = addColumn(nodes[i].cost * costScale, false);
    }
  }

  for (size_t i = 0; i < n; ++i) {
    const auto &node = nodes[i];
    if (!node.candidate())
      continue;
    // A recomputed candidate's copy exists by its first reader...
    int first = timeIndex(node.firstBackward);
    rows.push_back({{copyCol(i, first), keepCol[i]}, {1, 1}, 'G', 1});
    // ... and stays.
    for (int t = lo[i] + 1; t <= hi[i]; ++t)
      rows.push_back({{copyCol(i, t), copyCol(i, t - 1)}, {1, -1}, 'G', 0});
    // The candidates it reads through recomputed ops: copies by then (when
    // not kept), and the ops in between recomputed (when it is not kept).
    SmallVector<int> work(node.producers.begin(), node.producers.end());
    llvm::SmallDenseSet<int> seen;
    while (!work.empty()) {
      int q = work.pop_back_val();
      if (!seen.insert(q).second)
        continue;
      if (!nodes[q].candidate()) {
        rows.push_back({{costCol[q], keepCol[i]}, {1, 1}, 'G', 1});
        work.append(nodes[q].producers.begin(), nodes[q].producers.end());
        continue;
      }
      for (int t = lo[i]; t <= std::min(hi[i], hi[q]); ++t)
        rows.push_back(
            {{copyCol(q, t), copyCol(i, t), keepCol[q]}, {1, -1, 1}, 'G', 0});
    }
  }
  // Backward: the bytes live at each time.
  for (int t = 0; t < int(times.size()); ++t) {
    Row row = memoryRow();
    for (size_t i = 0; i < n; ++i) {
      if (!nodes[i].candidate() || t > hi[i])
        continue;
      double b = double(nodes[i].bytes) * byteScale;
      row.cols.push_back(keepCol[i]);
      row.coefs.push_back(b);
      if (t >= lo[i]) {
        row.cols.push_back(copyCol(i, t));
        row.coefs.push_back(b);
      }
    }
    rows.push_back(std::move(row));
  }
  // Forward: at each definition, the kept candidates no longer read there
  // and the ones still read.
  for (const auto &at : nodes) {
    if (!at.candidate())
      continue;
    Row row = memoryRow();
    for (size_t i = 0; i < n; ++i) {
      const auto &node = nodes[i];
      if (!node.candidate() || node.def > at.def)
        continue;
      double b = double(node.bytes) * byteScale;
      if (node.lastForward >= at.def) {
        row.rhs -= b;
      } else {
        row.cols.push_back(keepCol[i]);
        row.coefs.push_back(b);
      }
    }
    rows.push_back(std::move(row));
  }
  return true;
}

std::optional<std::vector<bool>> Milp::solve(double timeLimit,
                                             const std::vector<bool> &start,
                                             bool &optimal, bool &timedOut) {
  Cbc_Model *model = Cbc_newModel();
  llvm::scope_exit release([&] { Cbc_deleteModel(model); });
  for (size_t c = 0; c < numColumns; ++c)
    Cbc_addCol(model, "", 0, int(c) == peakCol ? 1e30 : 1, objective[c],
               integer[c], 0, nullptr, nullptr);
  for (const Row &r : rows)
    Cbc_addRow(model, "", int(r.cols.size()), r.cols.data(), r.coefs.data(),
               r.sense, r.rhs);
  Cbc_setLogLevel(model, 0);
  Cbc_setMaximumSeconds(model, timeLimit);
  Cbc_setAllowableGap(model, 0);
  Cbc_setAllowableFractionGap(model, 0);
  // The fallback's choice as a first incumbent.
  std::vector<double> x(numColumns, 0);
  std::vector<int64_t> at = p.recomputeTimes(start);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    if (keepCol[i] >= 0) {
      x[keepCol[i]] = start[i];
      for (int t = lo[i]; t <= hi[i]; ++t)
        x[copyCol(i, t)] = at[i] <= times[t];
    } else {
      x[costCol[i]] = at[i] != kNever;
    }
  }
  if (peakCol >= 0)
    x[peakCol] = double(p.peak(start)) * byteScale;
  Cbc_setInitialSolution(model, x.data());
  Cbc_solve(model);
  timedOut = Cbc_isSecondsLimitReached(model);
  optimal = Cbc_isProvenOptimal(model);
  if (Cbc_isProvenInfeasible(model) || Cbc_numberSavedSolutions(model) == 0)
    return std::nullopt;
  const double *solution = Cbc_getColSolution(model);
  std::vector<bool> kept(p.nodes.size(), false);
  for (size_t i = 0; i < p.nodes.size(); ++i)
    if (keepCol[i] >= 0)
      kept[i] = solution[keepCol[i]] > 0.5;
  return kept;
}

// Past a few hundred thousand columns CBC's presolve alone takes minutes.
static constexpr size_t kMaxColumns = 300000;

bool mlir::zero::withinMilpLimit(const RematProblem &p) {
  return Milp(p, 0).layOut(kMaxColumns);
}

FailureOr<RematSolution>
mlir::zero::solveRemat(const RematProblem &p, int64_t budget, double timeLimit,
                       int64_t &least, ArrayRef<std::vector<bool>> starts) {
  auto begin = std::chrono::steady_clock::now();
  auto finish = [&](RematSolution s) {
    s.peak = p.peak(s.kept);
    s.cost = p.cost(s.kept);
    s.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count();
    return s;
  };
  std::vector<bool> all = p.keepAll();
  // The least peak: its own MILP (recomputing everything is not it: every
  // copy would be made when the backward starts). It bounds the search
  // and names the least budget; a few seconds of CBC improve on the
  // greedy order's best prefix.
  std::vector<bool> leastKept;
  if (least < 0) {
    leastKept = greedyLeast(p);
    for (const std::vector<bool> &start : starts)
      if (p.peak(start) < p.peak(leastKept))
        leastKept = start;
    Milp leastMilp(p, -1);
    if (leastMilp.build(kMaxColumns)) {
      bool leastProven = false, timedOut = false;
      auto kept = leastMilp.solve(std::min(timeLimit, 5.0), leastKept,
                                  leastProven, timedOut);
      if (kept && p.peak(*kept) <= p.peak(leastKept))
        leastKept = std::move(*kept);
    }
    least = p.peak(leastKept);
  }
  if (p.peak(all) <= budget) {
    RematSolution s;
    s.kept = all;
    s.method = "keep-all";
    s.optimal = true;
    return finish(std::move(s));
  }
  if (budget < least)
    return failure();
  // The heuristic: the cheapest choice that fits among the greedy one, the
  // starts and the least peak's, then kept again where the budget allows.
  RematSolution fallback = greedy(p, budget);
  auto consider = [&](const std::vector<bool> &kept) {
    if (p.peak(kept) > budget)
      return;
    if (p.peak(fallback.kept) > budget || p.cost(kept) < p.cost(fallback.kept))
      fallback.kept = kept;
  };
  for (const std::vector<bool> &start : starts)
    consider(start);
  if (p.peak(fallback.kept) > budget) {
    if (leastKept.empty())
      leastKept = greedyLeast(p);
    consider(leastKept);
  }
  if (p.peak(fallback.kept) <= budget)
    keepWhileFits(p, fallback.kept, budget);
  Milp milp(p, budget);
  if (!milp.build(kMaxColumns)) {
    fallback.note = "the MILP has " + std::to_string(milp.columns()) +
                    " columns, over the limit of " +
                    std::to_string(kMaxColumns);
    return finish(std::move(fallback));
  }
  bool optimal = false, timedOut = false;
  auto kept = milp.solve(timeLimit, fallback.kept, optimal, timedOut);
  if (!kept || p.peak(*kept) > budget ||
      (p.peak(fallback.kept) <= budget &&
       p.cost(*kept) > p.cost(fallback.kept))) {
    fallback.note = timedOut ? "CBC found nothing better within the time limit"
                             : "CBC found no solution";
    return finish(std::move(fallback));
  }
  RematSolution s;
  s.kept = std::move(*kept);
  s.method = "milp";
  s.optimal = optimal;
  if (!optimal)
    s.note = timedOut ? "time limit reached before optimality was proven"
                      : "optimality not proven";
  return finish(std::move(s));
}
