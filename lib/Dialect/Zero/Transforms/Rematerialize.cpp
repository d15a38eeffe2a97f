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
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

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

  void runOnOperation() override {
    if (policy == RematPolicy::none)
      return;
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) {
      if (llvm::any_of(*block,
                       [](Operation &op) { return op.hasAttr(kBackwardAttr); }))
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      rematerialize(*block);
  }

  /// Whether `op` reduces: its summation order follows the kernel it is
  /// fused into (reductions vectorize reassociated), so a copy of it in
  /// another kernel may round differently.
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
  DenseMap<Operation *, int64_t> segmentsOf(ArrayRef<Operation *> forward) {
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

  void rematerialize(Block &block) {
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
    DenseMap<Operation *, int64_t> segment = segmentsOf(forward);
    auto segmentOf = [&](Value v) -> int64_t {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != &block || !isRecomputable(def))
        return -1;
      auto it = segment.find(def);
      return it == segment.end() ? -1 : it->second;
    };
    // A value is recomputed when its segment's ops may read it from the
    // segment itself: it is not a checkpoint (read by another segment, or
    // by an op outside every segment in the forward).
    llvm::DenseSet<Value> kept;
    for (Operation *op : forward) {
      auto it = segment.find(op);
      int64_t mine = it == segment.end() ? -1 : it->second;
      op->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands()) {
          int64_t theirs = segmentOf(operand);
          if (theirs >= 0 && theirs != mine)
            kept.insert(operand);
        }
      });
    }

    // Per segment, the values the backward reads that are recomputed.
    std::map<int64_t, Recomputation> recomputed;
    for (Operation *op : forward)
      for (Value result : op->getResults()) {
        int64_t s = segmentOf(result);
        if (s < 0 || kept.contains(result))
          continue;
        for (Operation *user : result.getUsers())
          if (Operation *top = backwardAncestor(block, user)) {
            Recomputation &r = recomputed[s];
            r.values.insert(result);
            if (!r.first || top->isBeforeInBlock(r.first))
              r.first = top;
          }
      }

    for (auto &[s, r] : recomputed)
      recomputeSegment(block, r, [&](Value v) {
        return segmentOf(v) == s && !kept.contains(v);
      });
  }

  /// Copies the ops that compute `r.values` from their segment's inputs
  /// right before `r.first`, and points the backward's uses at the copies.
  /// `own` says which values the copies compute themselves rather than
  /// read.
  void recomputeSegment(Block &block, const Recomputation &r,
                        llvm::function_ref<bool(Value)> own) {
    // The ops to copy: the values' producers and, transitively, the
    // producers of the segment's own values they read.
    llvm::SmallPtrSet<Operation *, 32> cone;
    llvm::SetVector<Value> inputs;
    SmallVector<Operation *> work;
    for (Value v : r.values)
      work.push_back(v.getDefiningOp());
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (!cone.insert(op).second)
        continue;
      op->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (def && op->isAncestor(def))
            continue; // Defined inside `op`: copied with it.
          if (own(operand))
            work.push_back(def);
          else if (isa<RankedTensorType>(operand.getType()) &&
                   !(def && def->hasTrait<OpTrait::ConstantLike>()))
            inputs.insert(operand);
        }
      });
    }

    // The inputs through one barrier (in the order the walk met them).
    OpBuilder b(r.first);
    IRMapping map;
    if (!inputs.empty()) {
      auto barrier = RematBarrierOp::create(
          b, r.first->getLoc(), ValueRange(inputs.getArrayRef()).getTypes(),
          inputs.getArrayRef());
      barrier->setAttr(kBackwardAttr, b.getUnitAttr());
      map.map(inputs.getArrayRef(), barrier.getResults());
    }
    for (Operation &op : block) {
      if (&op == r.first)
        break;
      if (!cone.contains(&op))
        continue;
      Operation *copy = b.clone(op, map);
      copy->walk([&](Operation *inner) {
        inner->setAttr(kBackwardAttr, b.getUnitAttr());
        inner->setAttr(kRecomputeAttr, b.getUnitAttr());
      });
    }
    // The backward reads the copies.
    for (Operation *op : cone)
      for (Value result : op->getResults())
        result.replaceUsesWithIf(map.lookup(result), [&](OpOperand &use) {
          Operation *top = backwardAncestor(block, use.getOwner());
          return top && !top->hasAttr(kRecomputeAttr) &&
                 !isa<RematBarrierOp>(top);
        });
  }
};
} // namespace
