//===- Rematerialize.cpp - recompute activations in the backward -*- C++
//-*-===//
//
// ZeRO shards model states across ranks; activations do not shrink with
// the ranks. Here the backward pass recomputes the activations of each
// forward segment from the segment's inputs instead of keeping them alive
// from the forward pass: the forward's values die inside their segment,
// and only the checkpoints live until the backward.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Schedule/RematSolver.h"
#include "zero-opt/Dialect/Zero/Schedule/Timeline.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <map>

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROREMATERIALIZE
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

/// The repeated block a node name belongs to: the path up to its first
/// component that ends in `.<digits>` (`/blocks.3/attn/MatMul` ->
/// `/blocks.3`), split into that path without the index and the index.
static std::optional<std::pair<StringRef, StringRef>> blockOf(StringRef name) {
  size_t pos = 0;
  while (pos < name.size()) {
    size_t end = name.find('/', pos + 1);
    if (end == StringRef::npos)
      return std::nullopt; // The last component is the node itself.
    StringRef component = name.slice(pos, end);
    size_t dot = component.rfind('.');
    if (dot != StringRef::npos && dot + 1 < component.size() &&
        llvm::all_of(component.drop_front(dot + 1), llvm::isDigit))
      return std::make_pair(name.take_front(pos + dot), name.take_front(end));
    pos = end;
  }
  return std::nullopt;
}

/// The op of `block` that holds `user` when it is a backward op, else null.
static Operation *backwardAncestor(Block &block, Operation *user) {
  Operation *top = block.findAncestorOpInBlock(*user);
  return top && top->hasAttr(kBackwardAttr) ? top : nullptr;
}

/// The forward's values computed from parameters and constants alone (a
/// weight's transpose): not activations. Stage 3 remakes such views from a
/// fresh gather in the backward, and a transpose folds into its matmul.
static llvm::DenseSet<Value> weightDerived(Block &block,
                                           ArrayRef<Operation *> forward) {
  llvm::DenseSet<Value> weights;
  auto fn = dyn_cast<FunctionOpInterface>(block.getParentOp());
  auto isWeight = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (!fn || arg.getOwner() != &block)
        return false;
      auto role = fn.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), kRoleAttr);
      return role && role.getValue() == Role::parameter;
    }
    Operation *def = v.getDefiningOp();
    return weights.contains(v) ||
           (def && def->hasTrait<OpTrait::ConstantLike>());
  };
  for (Operation *op : forward)
    if (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
        llvm::all_of(op->getOperands(), isWeight))
      weights.insert(op->result_begin(), op->result_end());
  return weights;
}

namespace {
/// What one segment recomputes: the values the backward reads, and the
/// first backward op that reads one of them.
struct Recomputation {
  llvm::SetVector<Value> values;
  Operation *first = nullptr;
};

struct ZeroRematerializePass
    : zero::impl::ZeroRematerializeBase<ZeroRematerializePass> {
  using Base::Base;

  /// What the report adds up over the step's blocks.
  int64_t bytesBefore = 0, bytesAfter = 0;
  llvm::SetVector<StringRef> saved;
  SmallVector<NamedAttribute> solver;
  std::optional<HardwareModel> machine;

  void runOnOperation() override {
    if (policy == RematPolicy::none)
      return;
    if (policy == RematPolicy::budget) {
      if (budget < 0) {
        getOperation().emitError("zero-rematerialize: policy budget needs "
                                 "budget=BYTES");
        return signalPassFailure();
      }
      if (!hardware.empty()) {
        auto hw = HardwareModel::load(hardware);
        if (!hw) {
          getOperation().emitError(llvm::toString(hw.takeError()));
          return signalPassFailure();
        }
        if (!hw->peakFlops.count(matmulPrecision)) {
          getOperation().emitError()
              << "zero-rematerialize: " << hw->name
              << " gives no peak_flops for " << matmulPrecision
              << " (matmul-precision)";
          return signalPassFailure();
        }
        machine = std::move(*hw);
      }
    }
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) {
      if (llvm::any_of(*block,
                       [](Operation &op) { return op.hasAttr(kBackwardAttr); }))
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      if (failed(rematerialize(*block)))
        return signalPassFailure();
    if (!blocks.empty())
      report();
  }

  /// The FLOPs an op costs, and its cost for the budget: its time on the
  /// machine when one is given.
  OpEstimate estimate(Operation *op) {
    if (machine)
      return estimateOp(op, *machine, matmulPrecision, gpu);
    // A machine on which a FLOP takes a second and bytes are free.
    static const HardwareModel flops = [] {
      HardwareModel hw;
      hw.peakFlops["fp32"] = 1;
      hw.loopFlops = 1;
      hw.memoryBandwidth = 1e300;
      hw.transcendentalFlops["default"] = 1;
      return hw;
    }();
    return estimateOp(op, flops, "fp32");
  }

  /// The buffers the backward reads from the forward: what the step holds
  /// from one pass to the other. Views count as their source; arguments
  /// and weight-derived values are not activations.
  static llvm::SetVector<Value>
  heldValues(Block &block, ArrayRef<Operation *> forward,
             const llvm::DenseSet<Value> &weights) {
    llvm::SetVector<Value> held;
    for (Operation *op : forward)
      for (Value result : op->getResults()) {
        Value storage = rootBuffer(result);
        if (isa<RankedTensorType>(result.getType()) &&
            storage.getDefiningOp() && !weights.contains(storage) &&
            !storage.getDefiningOp()->hasTrait<OpTrait::ConstantLike>() &&
            llvm::any_of(result.getUsers(), [&](Operation *user) {
              return backwardAncestor(block, user);
            }))
          held.insert(storage);
      }
    return held;
  }

  /// `zero.remat` on the function: bytes held before and after, the
  /// recompute's and the step's FLOPs, the saved values.
  void report() {
    func::FuncOp fn = getOperation();
    double recompute = 0, step = 0;
    for (Block &block : fn.getBody())
      for (Operation &op : block) {
        double f = estimate(&op).flops;
        step += f;
        if (op.hasAttr(kRecomputeAttr))
          recompute += f;
      }
    Builder b(fn.getContext());
    SmallVector<Attribute> names;
    for (StringRef name : saved)
      names.push_back(b.getStringAttr(name));
    SmallVector<NamedAttribute> entries = {
        b.getNamedAttr("policy", b.getStringAttr(stringifyRematPolicy(policy))),
        b.getNamedAttr("activation_bytes_before",
                       b.getI64IntegerAttr(bytesBefore)),
        b.getNamedAttr("activation_bytes_after",
                       b.getI64IntegerAttr(bytesAfter)),
        b.getNamedAttr("recompute_flops", b.getF64FloatAttr(recompute)),
        b.getNamedAttr("step_flops", b.getF64FloatAttr(step)),
        b.getNamedAttr("saved", b.getArrayAttr(names))};
    if (!solver.empty())
      entries.push_back(b.getNamedAttr("solver", b.getDictionaryAttr(solver)));
    fn->setAttr("zero.remat", b.getDictionaryAttr(entries));
  }

  /// Whether `op` reduces. Reductions are kept, not recomputed: their
  /// results (row statistics) are a fraction of their inputs.
  static bool isReduction(Operation *op) {
    if (isa<tosa::ReduceSumOp, tosa::ReduceMaxOp, tosa::ReduceMinOp,
            tosa::ReduceProductOp, tosa::ReduceAllOp, tosa::ReduceAnyOp,
            tosa::ArgMaxOp>(op))
      return true;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    return linalgOp && linalgOp.getNumReductionLoops() > 0 &&
           !linalg::isaContractionOpInterface(linalgOp);
  }

  /// Ops whose results a recomputation may copy: no memory effects (a
  /// running-statistics update is done once), not constants (read in
  /// place), not a barrier, and not reductions: their results (row
  /// statistics, a fraction of their input's size) are kept, so that every
  /// recomputed value is bitwise the forward's.
  static bool isRecomputable(Operation *op) {
    return !op->hasTrait<OpTrait::ConstantLike>() && !isa<RematBarrierOp>(op) &&
           isMemoryEffectFree(op) && op->getNumResults() > 0 &&
           !isReduction(op);
  }

  /// The segment of each forward op (-1: none, its results are kept).
  static DenseMap<Operation *, int64_t>
  segmentsOf(ArrayRef<Operation *> forward, RematPolicy policy,
             int64_t segments) {
    DenseMap<Operation *, int64_t> segment;
    if (policy == RematPolicy::blocks) {
      // Blocks count where at least two indices share a prefix.
      llvm::StringMap<llvm::StringSet<llvm::MallocAllocator>> indices;
      for (Operation *op : forward)
        if (auto b = blockOf(nodeName(op->getLoc())))
          indices[b->first].insert(b->second);
      llvm::StringMap<int64_t> ids;
      for (Operation *op : forward) {
        auto b = blockOf(nodeName(op->getLoc()));
        if (!b || indices[b->first].size() < 2)
          continue;
        auto it = ids.try_emplace(b->second, ids.size()).first;
        segment[op] = it->second;
      }
      return segment;
    }
    SmallVector<Operation *> computing;
    for (Operation *op : forward)
      if (isRecomputable(op))
        computing.push_back(op);
    int64_t n = computing.size();
    int64_t count =
        segments > 0 ? int64_t(segments)
                     : std::max<int64_t>(1, std::llround(std::sqrt(double(n))));
    for (auto [i, op] : llvm::enumerate(computing))
      segment[op] = int64_t(i) * count / std::max<int64_t>(n, 1);
    return segment;
  }

  LogicalResult rematerialize(Block &block) {
    // The forward: the ops before the first backward op (constants, which
    // canonicalization gathers at the top, are neither).
    SmallVector<Operation *> forward;
    for (Operation &op : block) {
      if (op.hasTrait<OpTrait::ConstantLike>())
        continue;
      if (op.hasAttr(kBackwardAttr))
        break;
      forward.push_back(&op);
    }
    // The forward's ops stay as they are: what they compute from weights
    // alone is the same before and after.
    llvm::DenseSet<Value> weights = weightDerived(block, forward);
    for (Value v : heldValues(block, forward, weights))
      bytesBefore += shapedBytes(cast<ShapedType>(v.getType()));
    if (policy == RematPolicy::budget) {
      if (failed(rematerializeToBudget(block, forward, weights)))
        return failure();
    } else {
      rematerializeSegments(block, forward, weights);
    }
    for (Value v : heldValues(block, forward, weights)) {
      bytesAfter += shapedBytes(cast<ShapedType>(v.getType()));
      StringRef name = nodeName(v.getDefiningOp()->getLoc());
      if (!name.empty())
        saved.insert(name);
    }
    return success();
  }

  /// A cut of the forward into segments and the values each keeps.
  struct Segmentation {
    Block *block;
    DenseMap<Operation *, int64_t> segment;
    /// Checkpoints: values read by another segment, or by an op outside
    /// every segment in the forward.
    llvm::DenseSet<Value> kept;

    /// The segment of a recomputable value (-1: none, it is kept).
    int64_t segmentOf(Value v) const {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != block || !isRecomputable(def))
        return -1;
      auto it = segment.find(def);
      return it == segment.end() ? -1 : it->second;
    }
    /// Whether the segments recompute `v` rather than keep it.
    bool recomputes(Value v) const {
      return segmentOf(v) >= 0 && !kept.contains(v);
    }
  };

  static Segmentation segmentation(Block &block, ArrayRef<Operation *> forward,
                                   RematPolicy policy, int64_t segments) {
    Segmentation cut{&block, segmentsOf(forward, policy, segments), {}};
    for (Operation *op : forward) {
      auto it = cut.segment.find(op);
      int64_t mine = it == cut.segment.end() ? -1 : it->second;
      op->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands()) {
          int64_t theirs = cut.segmentOf(operand);
          if (theirs >= 0 && theirs != mine)
            cut.kept.insert(operand);
        }
      });
    }
    return cut;
  }

  void rematerializeSegments(Block &block, ArrayRef<Operation *> forward,
                             const llvm::DenseSet<Value> &weights) {
    Segmentation cut = segmentation(block, forward, policy, segments);
    // Per segment, the values the backward reads that are recomputed.
    std::map<int64_t, Recomputation> recomputed;
    for (Operation *op : forward)
      for (Value result : op->getResults()) {
        if (!cut.recomputes(result))
          continue;
        int64_t s = cut.segmentOf(result);
        for (Operation *user : result.getUsers())
          if (Operation *top = backwardAncestor(block, user)) {
            Recomputation &r = recomputed[s];
            r.values.insert(result);
            if (!r.first || top->isBeforeInBlock(r.first))
              r.first = top;
          }
      }

    for (auto &entry : recomputed) {
      int64_t s = entry.first;
      recomputeSegment(block, entry.second, weights, [&](Value v) {
        return cut.segmentOf(v) == s && cut.recomputes(v);
      });
    }
  }

  /// The budget policy: the problem from the step's op order, solved,
  /// and each recomputed op copied where the solution says.
  LogicalResult rematerializeToBudget(Block &block,
                                      ArrayRef<Operation *> forward,
                                      const llvm::DenseSet<Value> &weights) {
    DenseMap<Operation *, int64_t> position;
    SmallVector<Operation *> ops;
    for (Operation &op : block) {
      position[&op] = ops.size();
      ops.push_back(&op);
    }
    // One node per buffer: an op with the views of its results, which are
    // kept or recomputed with it. Weight-derived values and views of
    // arguments are not activations.
    RematProblem problem;
    DenseMap<Operation *, int> index;
    SmallVector<SmallVector<Operation *, 2>> nodeOps;
    for (Operation *op : forward) {
      if (!isRecomputable(op))
        continue;
      if (isReshape(op)) {
        Operation *owner = rootBuffer(op->getResult(0)).getDefiningOp();
        // The owner's node, read before inserting: that may rehash `index`.
        auto it = owner ? index.find(owner) : index.end();
        if (it != index.end()) {
          int node = it->second;
          index[op] = node;
          nodeOps[node].push_back(op);
        }
        continue;
      }
      if (llvm::all_of(op->getResults(),
                       [&](Value r) { return weights.contains(r); }))
        continue;
      index[op] = problem.nodes.size();
      nodeOps.push_back({op});
      RematProblem::Node node;
      node.name = nodeName(op->getLoc()).str();
      node.def = node.lastForward = position[op];
      problem.nodes.push_back(std::move(node));
    }
    for (int i = 0, e = nodeOps.size(); i < e; ++i) {
      RematProblem::Node &node = problem.nodes[i];
      ArrayRef<Operation *> group = nodeOps[i];
      llvm::SmallPtrSet<Value, 4> read;
      for (Operation *op : group) {
        node.cost += estimate(op).seconds;
        for (Value result : op->getResults())
          for (Operation *user : result.getUsers()) {
            Operation *top = block.findAncestorOpInBlock(*user);
            if (!top)
              continue;
            int64_t at = position[top];
            if (top->hasAttr(kBackwardAttr)) {
              read.insert(rootBuffer(result));
              node.firstBackward = std::min(node.firstBackward, at);
              node.last = std::max(node.last, at);
            } else {
              node.lastForward = std::max(node.lastForward, at);
            }
          }
        op->walk([&](Operation *inner) {
          for (Value operand : inner->getOperands())
            if (Operation *def = operand.getDefiningOp()) {
              auto it = index.find(def);
              if (it != index.end() && it->second != i &&
                  !llvm::is_contained(node.producers, it->second)) {
                node.producers.push_back(it->second);
                problem.nodes[it->second].consumers.push_back(i);
              }
            }
        });
      }
      for (Value v : read)
        if (isa<RankedTensorType>(v.getType()))
          node.bytes += shapedBytes(cast<ShapedType>(v.getType()));
    }

    // Beyond the MILP, the heuristic may also keep the repeated blocks'
    // boundary values, which the backward does not read (a residual
    // stream): without them a recomputed block would be recomputed from
    // the start of the step.
    Segmentation blocksCut =
        segmentation(block, forward, RematPolicy::blocks, 0);
    if (!blocksCut.segment.empty() && !withinMilpLimit(problem))
      offerCheckpoints(problem, nodeOps, blocksCut);

    // Cuts into segments the solver starts from, as blocks and sqrt would
    // choose (so that it does no worse where the MILP is out of reach): the
    // repeated blocks of the node names, and runs of a few lengths.
    std::vector<std::vector<bool>> starts;
    auto addCut = [&](const Segmentation &cut) {
      if (cut.segment.empty())
        return;
      std::vector<bool> kept = problem.keepAll();
      for (auto [i, group] : llvm::enumerate(nodeOps))
        if (kept[i])
          kept[i] = !llvm::all_of(group, [&](Operation *op) {
            return llvm::all_of(op->getResults(),
                                [&](Value r) { return cut.recomputes(r); });
          });
      starts.push_back(std::move(kept));
    };
    addCut(blocksCut);
    double root = std::sqrt(double(llvm::count_if(forward, isRecomputable)));
    for (double f : {0.5, 1.0, 2.0, 4.0})
      addCut(segmentation(block, forward, RematPolicy::sqrt,
                          std::max<int64_t>(1, std::llround(f * root))));

    int64_t least = leastPeak;
    FailureOr<RematSolution> solution =
        solveRemat(problem, budget, timeLimit, least, starts);
    if (failed(solution))
      return getOperation().emitError()
             << "zero-rematerialize: no choice of recomputed activations "
                "fits "
             << int64_t(budget) << " bytes; the least peak of any choice is "
             << least;
    recordSolution(problem, *solution, least, problem.peak(problem.keepAll()));

    // Copies, grouped by the backward op they are made before.
    std::vector<int64_t> at = problem.recomputeTimes(solution->kept);
    std::map<int64_t, SmallVector<Operation *>> groups;
    for (auto [i, t] : llvm::enumerate(at))
      if (t != RematProblem::kNever)
        groups[t].append(nodeOps[i].begin(), nodeOps[i].end());
    // Copies are made in program order.
    for (auto &[t, group] : groups)
      llvm::sort(group, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
    SmallVector<Operation *> recomputed;
    for (auto &[t, group] : groups)
      recomputed.append(group.begin(), group.end());
    llvm::SmallPtrSet<Operation *, 32> isRecomputed(recomputed.begin(),
                                                    recomputed.end());
    IRMapping copies;
    for (auto &[t, group] : groups)
      copyBefore(
          ops[t], group, weights,
          [&](Value v) {
            Operation *def = v.getDefiningOp();
            return def && isRecomputed.contains(def);
          },
          copies);
    readCopies(block, recomputed, copies);
    return success();
  }

  /// Makes the nodes holding `cut`'s checkpoints candidates, kept until
  /// the last backward reader of what reads them.
  static void offerCheckpoints(RematProblem &problem,
                               ArrayRef<SmallVector<Operation *, 2>> nodeOps,
                               const Segmentation &cut) {
    size_t n = problem.nodes.size();
    std::vector<int64_t> first(n), last(n);
    for (int i = int(n) - 1; i >= 0; --i) {
      const RematProblem::Node &node = problem.nodes[i];
      first[i] = node.firstBackward;
      last[i] = node.last;
      for (int c : node.consumers) {
        first[i] = std::min(first[i], first[c]);
        last[i] = std::max(last[i], last[c]);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      RematProblem::Node &node = problem.nodes[i];
      if (node.candidate() || first[i] == RematProblem::kNever)
        continue;
      llvm::SmallPtrSet<Value, 4> storages;
      for (Operation *op : nodeOps[i])
        for (Value r : op->getResults())
          if (cut.kept.contains(r) && isa<RankedTensorType>(r.getType()))
            storages.insert(rootBuffer(r));
      if (storages.empty())
        continue;
      for (Value v : storages)
        node.bytes += shapedBytes(cast<ShapedType>(v.getType()));
      node.read = false;
      node.firstBackward = first[i];
      node.last = last[i];
    }
  }

  /// The solver's figures and its problem, for the report.
  void recordSolution(const RematProblem &problem, const RematSolution &s,
                      int64_t least, int64_t keepAll) {
    Builder b(&getContext());
    SmallVector<Attribute> nodes;
    for (auto [i, n] : llvm::enumerate(problem.nodes)) {
      SmallVector<Attribute> producers;
      for (int p : n.producers)
        producers.push_back(b.getI64IntegerAttr(p));
      SmallVector<NamedAttribute> e = {
          b.getNamedAttr("name", b.getStringAttr(n.name)),
          b.getNamedAttr("bytes", b.getI64IntegerAttr(n.bytes)),
          b.getNamedAttr("cost", b.getF64FloatAttr(n.cost)),
          b.getNamedAttr("def", b.getI64IntegerAttr(n.def)),
          b.getNamedAttr("last_forward", b.getI64IntegerAttr(n.lastForward)),
          b.getNamedAttr("producers", b.getArrayAttr(producers))};
      if (n.candidate()) {
        e.push_back(b.getNamedAttr("first_backward",
                                   b.getI64IntegerAttr(n.firstBackward)));
        e.push_back(b.getNamedAttr("last", b.getI64IntegerAttr(n.last)));
        e.push_back(b.getNamedAttr("kept", b.getBoolAttr(s.kept[i])));
        if (!n.read)
          e.push_back(b.getNamedAttr("read", b.getBoolAttr(false)));
      }
      nodes.push_back(b.getDictionaryAttr(e));
    }
    solver = {b.getNamedAttr("budget", b.getI64IntegerAttr(budget)),
              b.getNamedAttr("method", b.getStringAttr(s.method)),
              b.getNamedAttr("optimal", b.getBoolAttr(s.optimal)),
              b.getNamedAttr("seconds", b.getF64FloatAttr(s.seconds)),
              b.getNamedAttr("peak", b.getI64IntegerAttr(s.peak)),
              b.getNamedAttr("keep_all_peak", b.getI64IntegerAttr(keepAll)),
              b.getNamedAttr("least_peak", b.getI64IntegerAttr(least)),
              b.getNamedAttr("cost", b.getF64FloatAttr(s.cost)),
              b.getNamedAttr("cost_unit",
                             b.getStringAttr(machine ? "seconds" : "flops")),
              b.getNamedAttr("nodes", b.getArrayAttr(nodes))};
    if (!s.note.empty())
      solver.push_back(b.getNamedAttr("note", b.getStringAttr(s.note)));
  }

  /// Copies the ops that compute `r.values` from their segment's inputs
  /// right before `r.first`, and points the backward's uses at the copies.
  /// `own` says which values the copies compute themselves rather than
  /// read.
  void recomputeSegment(Block &block, const Recomputation &r,
                        const llvm::DenseSet<Value> &weights,
                        llvm::function_ref<bool(Value)> own) {
    // The ops to copy: the values' producers and, transitively, the
    // producers of the segment's own values they read.
    llvm::SmallPtrSet<Operation *, 32> cone;
    SmallVector<Operation *> work;
    for (Value v : r.values)
      work.push_back(v.getDefiningOp());
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!cone.insert(op).second)
        continue;
      op->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && !op->isAncestor(def) && own(operand))
            work.push_back(def);
      });
    }
    SmallVector<Operation *> ordered;
    for (Operation &op : block) {
      if (&op == r.first)
        break;
      if (cone.contains(&op))
        ordered.push_back(&op);
    }
    IRMapping map;
    copyBefore(r.first, ordered, weights, own, map);
    readCopies(block, ordered, map);
  }

  /// Copies `ops` (in program order) before `before`, marked as recomputed
  /// backward ops, into `map`. Operands that `computed` says are made by
  /// copies read them from `map`; values computed from weights alone are
  /// remade from the weights; the others (but constants) pass through one
  /// barrier, so that CSE cannot merge a copy with its original.
  static void copyBefore(Operation *before, ArrayRef<Operation *> ops,
                         const llvm::DenseSet<Value> &weights,
                         llvm::function_ref<bool(Value)> computed,
                         IRMapping &map) {
    llvm::SetVector<Value> inputs;
    for (Operation *op : ops)
      op->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (def &&
              (op->isAncestor(def) || def->hasTrait<OpTrait::ConstantLike>()))
            continue;
          if (!computed(operand) && isa<RankedTensorType>(operand.getType()))
            inputs.insert(operand);
        }
      });
    // A weight's transpose held from the forward to the backward would be
    // an activation-sized buffer that no matmul can read as a view: its
    // ops are copied too, and the barrier passes the weights.
    llvm::SetVector<Value> held;
    llvm::SetVector<Operation *> remade;
    std::function<void(Value)> hold = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        return;
      if (!def || !weights.contains(v)) {
        held.insert(v);
        return;
      }
      if (remade.contains(def))
        return;
      for (Value operand : def->getOperands())
        hold(operand);
      remade.insert(def);
    };
    for (Value v : inputs)
      hold(v);
    OpBuilder b(before);
    IRMapping local = map;
    if (!held.empty()) {
      auto barrier = RematBarrierOp::create(
          b, before->getLoc(), ValueRange(held.getArrayRef()).getTypes(),
          held.getArrayRef());
      barrier->setAttr(kBackwardAttr, b.getUnitAttr());
      local.map(held.getArrayRef(), barrier.getResults());
    }
    SmallVector<Operation *> copied(remade.begin(), remade.end());
    llvm::append_range(copied, ops);
    for (Operation *op : copied) {
      Operation *copy = b.clone(*op, local);
      copy->walk([&](Operation *inner) {
        inner->setAttr(kBackwardAttr, b.getUnitAttr());
        inner->setAttr(kRecomputeAttr, b.getUnitAttr());
        inner->setLoc(recomputeLoc(inner->getLoc()));
      });
      map.map(op->getResults(), copy->getResults());
    }
  }

  /// Points the backward's reads of `ops`' results at their copies.
  static void readCopies(Block &block, ArrayRef<Operation *> ops,
                         IRMapping &map) {
    for (Operation *op : ops)
      for (Value result : op->getResults())
        result.replaceUsesWithIf(map.lookup(result), [&](OpOperand &use) {
          Operation *top = backwardAncestor(block, use.getOwner());
          return top && !top->hasAttr(kRecomputeAttr) &&
                 !isa<RematBarrierOp>(top);
        });
  }
};
} // namespace
