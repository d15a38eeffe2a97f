//===- ElideDestinationCopies.cpp - results written where they are copied -===//
//
// Bufferization gives a destination-style op that writes several results
// a fresh buffer each, and a concatenation of them (the Q, K and V
// gradients joined for the QKV projection's GEMMs) copies each into its
// slice: one-shot analysis cannot tell that three slices of one tensor,
// written by one op, are disjoint. On buffers it is plain: the op writes
// the slice, and the copy and the buffer go.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROELIDEDESTINATIONCOPIES
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

/// Ops that write each destination whole, read none of it, and take any
/// strided destination whose last dimension is contiguous.
bool writesStridedDestinations(Operation *op) {
  return isa<AttentionOp, AttentionGradOp>(op);
}

/// How a copy can go: `writer` writes `init` (the whole of `alloc`, a
/// fresh buffer nothing else uses) and the copy moves it, seen through
/// `reshapes` (from `alloc` on), into `target`, a static view of
/// `targetRoot`, an allocation of the same block; `inverse` are the types
/// of the target seen through the reshapes undone, the last nearest
/// `alloc`.
struct Elision {
  Operation *writer;
  OpOperand *init;
  memref::AllocOp alloc;
  SmallVector<Operation *> reshapes;
  SmallVector<MemRefType> inverse;
  /// The views from `targetRoot` to the copy's target, the first nearest
  /// the root.
  SmallVector<Operation *> targetViews;
  memref::AllocOp targetRoot;
};

/// The types of a buffer of `type` seen through the inverse of `reshapes`
/// (from the writer's destination to the copy's source), when each is a
/// view and the last's last dimension is contiguous (the kernels write no
/// other).
std::optional<SmallVector<MemRefType>>
inverseTypes(MemRefType type, ArrayRef<Operation *> reshapes) {
  SmallVector<MemRefType> types;
  for (Operation *r : llvm::reverse(reshapes)) {
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(r)) {
      FailureOr<MemRefType> expanded =
          memref::ExpandShapeOp::computeExpandedType(
              type, collapse.getSrcType().getShape(),
              collapse.getReassociationIndices());
      if (failed(expanded))
        return std::nullopt;
      type = *expanded;
    } else {
      auto expand = cast<memref::ExpandShapeOp>(r);
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(
              type, expand.getReassociationIndices()))
        return std::nullopt;
      type = memref::CollapseShapeOp::computeCollapsedType(
          type, expand.getReassociationIndices());
    }
    types.push_back(type);
  }
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() ||
      strides.back() != 1)
    return std::nullopt;
  return types;
}

/// The view ops from an allocation to `v` (each static, with no operand
/// but its source), or nothing when `v` is not such a view.
std::optional<std::pair<memref::AllocOp, SmallVector<Operation *>>>
staticViewsOf(Value v) {
  SmallVector<Operation *> views;
  while (Operation *def = v.getDefiningOp()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(def)) {
      if (!alloc.getType().hasStaticShape() || !alloc.getOperands().empty())
        return std::nullopt;
      std::reverse(views.begin(), views.end());
      return std::make_pair(alloc, views);
    }
    if (!isa<memref::SubViewOp, memref::ExpandShapeOp, memref::CollapseShapeOp>(
            def) ||
        def->getNumOperands() != 1)
      return std::nullopt;
    views.push_back(def);
    v = def->getOperand(0);
  }
  return std::nullopt;
}

std::optional<Elision> match(memref::CopyOp copy) {
  Elision e{nullptr, nullptr, {}, {}, {}, {}, {}};
  // The source: an allocation, whole, through reshapes.
  Value src = copy.getSource();
  while (isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(
      src.getDefiningOp())) {
    e.reshapes.push_back(src.getDefiningOp());
    src = src.getDefiningOp()->getOperand(0);
  }
  std::reverse(e.reshapes.begin(), e.reshapes.end());
  e.alloc = src.getDefiningOp<memref::AllocOp>();
  Block *block = copy->getBlock();
  if (!e.alloc || e.alloc->getBlock() != block ||
      !e.alloc.getType().hasStaticShape())
    return std::nullopt;
  // Its uses: the reshapes (each used by the next), the copy and one
  // writer of the whole buffer.
  for (Operation *r : e.reshapes)
    if (!r->hasOneUse())
      return std::nullopt;
  for (OpOperand &use : e.alloc->getUses()) {
    Operation *user = use.getOwner();
    if (!e.reshapes.empty() && user == e.reshapes.front())
      continue;
    if (e.reshapes.empty() && user == copy)
      continue;
    auto dps = dyn_cast<DestinationStyleOpInterface>(user);
    if (e.writer || !writesStridedDestinations(user) || !dps.isDpsInit(&use) ||
        user->getBlock() != block || !user->isBeforeInBlock(copy))
      return std::nullopt;
    e.writer = user;
    e.init = &use;
  }
  if (!e.writer)
    return std::nullopt;

  // The target: a static view of an allocation of this block.
  auto target = staticViewsOf(copy.getTarget());
  if (!target || target->first->getBlock() != block)
    return std::nullopt;
  e.targetRoot = target->first;
  e.targetViews = target->second;
  BufferSpan span = bufferSpan(copy.getTarget());
  std::optional<SmallVector<MemRefType>> inverse =
      inverseTypes(cast<MemRefType>(copy.getTarget().getType()), e.reshapes);
  if (!span.range || !inverse)
    return std::nullopt;
  e.inverse = std::move(*inverse);

  // Nothing from the writer to the copy touches the target's bytes, and
  // the writer reads none of them nor writes them through another
  // destination.
  auto touches = [&](Operation *op) {
    if (isa<ViewLikeOpInterface>(op))
      return false;
    bool hit = false;
    op->walk([&](Operation *inner) {
      for (OpOperand &o : inner->getOpOperands())
        if (&o != e.init && isa<BaseMemRefType>(o.get().getType()) &&
            mayOverlap(bufferSpan(o.get()), span))
          hit = true;
    });
    return hit;
  };
  for (Operation *op = e.writer; op != copy; op = op->getNextNode())
    if (touches(op))
      return std::nullopt;
  return e;
}

/// `dest` seen through the inverse of `reshapes` (from the writer's
/// destination to the copy's source), built where `b` is once `types` (the
/// views' types, `inverseTypes`) are known.
Value throughInverse(OpBuilder &b, Location loc, Value dest,
                     ArrayRef<Operation *> reshapes,
                     ArrayRef<MemRefType> types) {
  for (auto [r, type] : llvm::zip(llvm::reverse(reshapes), types)) {
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(r))
      dest = memref::ExpandShapeOp::create(b, loc, type, dest,
                                           collapse.getReassociationIndices());
    else
      dest = memref::CollapseShapeOp::create(
          b, loc, type, dest,
          cast<memref::ExpandShapeOp>(r).getReassociationIndices());
  }
  return dest;
}

struct ZeroElideDestinationCopiesPass
    : zero::impl::ZeroElideDestinationCopiesBase<
          ZeroElideDestinationCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp c) { copies.push_back(c); });
    for (memref::CopyOp copy : copies) {
      std::optional<Elision> e = match(copy);
      if (!e)
        continue;
      // The target's allocation and views before the writer, the writer
      // on the target seen as its destination.
      OpBuilder b(e->writer);
      if (e->writer->isBeforeInBlock(e->targetRoot))
        e->targetRoot->moveBefore(e->writer);
      IRMapping map;
      Value target = e->targetRoot.getResult();
      for (Operation *view : e->targetViews) {
        map.map(view->getOperand(0), target);
        target = b.clone(*view, map)->getResult(0);
      }
      e->init->set(
          throughInverse(b, copy.getLoc(), target, e->reshapes, e->inverse));
      copy.erase();
      for (Operation *r : llvm::reverse(e->reshapes))
        r->erase();
      e->alloc.erase();
    }
  }
};

} // namespace
