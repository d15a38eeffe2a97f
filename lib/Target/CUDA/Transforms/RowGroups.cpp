//===- RowGroups.cpp - a row reduction and its users as one launch -*- C++ -*-//
//
// A softmax is three launches over its rows: partial statistics, their
// combination, and the normalization, which reads the rows from memory a
// second time. Launched as one, each block taking some rows through all
// three in turn, the second read finds the rows in the cache, and the
// statistics never leave it.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"
#include "zero-opt/Target/CUDA/Mapping.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallVectorExtras.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUROWGROUPS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// Where a view puts its rows: the buffer it views, its offset, the
/// strides of its row dimensions (0 for unit ones) and its element type.
struct RowPlace {
  Value root;
  int64_t offset;
  SmallVector<int64_t> strides;
  Type element;
  bool operator==(const RowPlace &o) const {
    return root == o.root && offset == o.offset && strides == o.strides &&
           element == o.element;
  }
};

/// Where `v`'s first `rows` dimensions put its rows, if each row lies in a
/// slab of its own: the rest of a row spans at most the innermost row
/// stride, and each row dimension's stride spans the dimensions inside it.
std::optional<RowPlace> rowPlace(Value v, int64_t rows) {
  auto t = cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!t.hasStaticShape() || failed(t.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic))
    return std::nullopt;
  ArrayRef<int64_t> shape = t.getShape();
  int64_t span = 1;
  for (int64_t d = rows; d < t.getRank(); ++d)
    span += (shape[d] - 1) * std::abs(strides[d]);
  for (int64_t d = rows - 1; d >= 0; --d) {
    if (shape[d] == 1) {
      strides[d] = 0;
      continue;
    }
    if (strides[d] < span)
      return std::nullopt;
    span += (shape[d] - 1) * strides[d];
  }
  strides.resize(rows);
  return RowPlace{zero::rootBuffer(v), offset, std::move(strides),
                  t.getElementType()};
}

/// A buffer an op uses: written (an output) or read, and whether the op
/// indexes it by the rows alone at its leading dimensions (and then where
/// those rows lie, if known).
struct Use {
  Value buffer;
  bool written, byRow;
  std::optional<RowPlace> place;
};

/// Whether `map` indexes loops [0, rows) as its first results, in order.
bool leadingRows(AffineMap map, int64_t rows) {
  if (map.getNumResults() < rows)
    return false;
  for (int64_t d = 0; d < rows; ++d)
    if (map.getResult(d) != getAffineDimExpr(d, map.getContext()))
      return false;
  return true;
}

/// A kernel root a group can hold: a linalg op on statically shaped
/// buffers (no GEMM: cuBLAS runs those) that writes only its outputs, over
/// `rows` (the group's row extents) as its first loops, sliceable by row.
bool isMember(Operation *op, ArrayRef<int64_t> rows) {
  return zero::rowGroupMemberError(op, rows).empty() &&
         zero::isKernelRoot(op) &&
         !zero::getGemmLoops(cast<linalg::LinalgOp>(op)) &&
         zero::writesOnlyOutputs(op);
}

/// What `op` uses: its operands, and buffers its body reads (a gather's
/// table), which are indexed by no row.
SmallVector<Use> usesOf(linalg::LinalgOp op, int64_t rows) {
  SmallVector<Use> uses;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType()))
      continue;
    bool byRow = leadingRows(op.getMatchingIndexingMap(&operand), rows);
    uses.push_back({operand.get(), op.isDpsInit(&operand), byRow,
                    byRow ? rowPlace(operand.get(), rows) : std::nullopt});
  }
  op->walk([&](Operation *nested) {
    if (nested == op.getOperation())
      return;
    for (Value v : nested->getOperands())
      if (isa<BaseMemRefType>(v.getType()))
        uses.push_back({v, false, false, std::nullopt});
  });
  return uses;
}

/// Whether a block that takes some rows through `a` then `b` (or `b` then
/// `a`) computes what the two launches did: every buffer one writes and
/// the other uses is indexed by the rows alone, and is the same value to
/// both or views of one buffer that put each row in the same place (a
/// layer norm's backward writes a [1, B, 1, T, E, 1] buffer that the next
/// sum reads as [B, T, E / 32, 32]).
bool rowLocal(ArrayRef<Use> a, ArrayRef<Use> b) {
  for (const Use &x : a)
    for (const Use &y : b) {
      if ((!x.written && !y.written) || !zero::mayOverlap(x.buffer, y.buffer))
        continue;
      if (!x.byRow || !y.byRow)
        return false;
      if (x.buffer != y.buffer &&
          (!x.place || !y.place || !(*x.place == *y.place)))
        return false;
    }
  return true;
}

/// `op` without its unit loops (upstream's `dropUnitDims`, through
/// rank-reducing subviews) where that makes `rows` its first loops; null
/// otherwise (an elementwise op of a layer norm's backward over
/// [1, B, 1, T, E, 1] becomes one over [B, T, E]).
Operation *withoutUnitLoops(Operation *op, ArrayRef<int64_t> rows) {
  auto g = dyn_cast<linalg::GenericOp>(op);
  if (!g || !g.hasPureBufferSemantics() || g.hasDynamicShape())
    return nullptr;
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  SmallVector<int64_t> kept =
      llvm::filter_to_vector(ranges, [](int64_t r) { return r != 1; });
  if (kept.size() == ranges.size() || kept.size() < rows.size() ||
      ArrayRef(kept).take_front(rows.size()) != rows)
    return nullptr;
  IRRewriter rewriter(op->getContext());
  rewriter.setInsertionPoint(op);
  linalg::ControlDropUnitDims control;
  control.rankReductionStrategy =
      linalg::ControlDropUnitDims::RankReductionStrategy::ExtractInsertSlice;
  FailureOr<linalg::DropUnitDimsResult> dropped =
      linalg::dropUnitDims(rewriter, g, control);
  if (failed(dropped))
    return nullptr;
  rewriter.eraseOp(g);
  return dropped->resultOp;
}

/// Whether `b` reads or writes what `a` writes.
bool dependsOn(ArrayRef<Use> b, ArrayRef<Use> a) {
  for (const Use &x : a)
    for (const Use &y : b)
      if (x.written && zero::mayOverlap(x.buffer, y.buffer))
        return true;
  return false;
}

struct ZeroGPURowGroupsPass
    : zero::cuda::impl::ZeroGPURowGroupsBase<ZeroGPURowGroupsPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  void groupFrom(Operation *start);
  int64_t groups = 0, grouped = 0;
};

/// Groups `start` (a row reduction) with the ops after it over its rows.
void ZeroGPURowGroupsPass::groupFrom(Operation *start) {
  auto reduction = cast<linalg::LinalgOp>(start);
  SmallVector<utils::IteratorType> iterators =
      reduction.getIteratorTypesArray();
  int64_t rows = std::distance(
      iterators.begin(), llvm::find(iterators, utils::IteratorType::reduction));
  if (rows == 0)
    return;
  SmallVector<int64_t> extents = reduction.getStaticLoopRanges();
  extents.resize(rows);
  // A warp a row (the split's interleaved partials), and rows enough for
  // the device: a block's rows go through every op on its warps alone.
  int64_t count = 1;
  for (int64_t e : extents)
    count *= e;
  if (!isMember(start, extents) || !zero::cuda::rowLane(reduction, rows) ||
      count * zero::cuda::kRowLanes < minThreads)
    return;

  // Members (fills with the op they initialize), and the uses of each.
  SmallVector<Operation *> members;
  SmallVector<SmallVector<Use>> uses;
  auto admit = [&](Operation *op) {
    SmallVector<Use> u = usesOf(cast<linalg::LinalgOp>(op), rows);
    for (ArrayRef<Use> earlier : uses)
      if (!rowLocal(earlier, u))
        return false;
    members.push_back(op);
    uses.push_back(std::move(u));
    return true;
  };
  if (Operation *fill = zero::initializingFill(start))
    if (!isMember(fill, extents) || !admit(fill))
      return;
  if (!admit(start))
    return;
  // Between members: views and constants (they stay, before the group),
  // allocations (stay) and deallocations (move after the group: those
  // before the last member, the first `moved`).
  SmallVector<memref::DeallocOp> deallocs;
  size_t moved = 0;
  bool dependent = false;
  for (Operation *op = start->getNextNode(); op; op = op->getNextNode()) {
    if (isa<memref::AllocOp>(op) ||
        (op->getNumRegions() == 0 && (isa<ViewLikeOpInterface>(op) ||
                                      op->hasTrait<OpTrait::ConstantLike>())))
      continue;
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      deallocs.push_back(dealloc);
      continue;
    }
    // A fill joins with the op it initializes, or not at all.
    Operation *next = op;
    Operation *fill = nullptr;
    if (isa<linalg::FillOp>(op)) {
      fill = op;
      next = op->getNextNode();
      while (next && next->getNumRegions() == 0 &&
             (isa<ViewLikeOpInterface>(next) ||
              next->hasTrait<OpTrait::ConstantLike>()))
        next = next->getNextNode();
      if (!next || zero::initializingFill(next) != fill)
        break;
    }
    if (!fill && !isMember(next, extents))
      if (Operation *reshaped = withoutUnitLoops(next, extents))
        next = reshaped;
    if (!isMember(next, extents) || (fill && !isMember(fill, extents)))
      break;
    size_t before = members.size();
    if ((fill && !admit(fill)) || !admit(next)) {
      members.resize(before);
      uses.resize(before);
      break;
    }
    for (size_t i = 0; i < before; ++i)
      dependent |= dependsOn(uses.back(), uses[i]);
    moved = deallocs.size();
    op = next;
  }
  if (!dependent)
    return;
  // Deallocations past the last member stay where they are (counted, not
  // compared by position: ops moved into earlier groups left the block's
  // order to be numbered again).
  Operation *last = members.back();
  deallocs.resize(moved);

  // Named after the reduction it grows from (the last member may be a
  // gradient's sum that no ONNX node names).
  OpBuilder b(last);
  auto group = zero::RowGroupOp::create(b, start->getLoc(), rows);
  Block *body = &group.getBody().emplaceBlock();
  for (Operation *op : members)
    op->moveBefore(body, body->end());
  for (memref::DeallocOp d : llvm::reverse(deallocs))
    d->moveAfter(group);
  ++groups;
  grouped += llvm::count_if(
      members, [](Operation *op) { return !isa<linalg::FillOp>(op); });
}

void ZeroGPURowGroupsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (minThreads < 0) {
    module.emitError() << "zero-gpu-row-groups: min-threads "
                       << static_cast<int64_t>(minThreads)
                       << " must be at least 0";
    return signalPassFailure();
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal() || fn->hasAttr(zero::kKernelAttr))
      continue;
    SmallVector<Operation *> starts;
    fn.walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::FillOp>(op) && op.getNumReductionLoops() > 0 &&
          isa<func::FuncOp>(op->getParentOp()))
        starts.push_back(op);
    });
    for (Operation *start : starts)
      if (isa<func::FuncOp>(start->getParentOp()))
        groupFrom(start);
  }
  zero::setKernelCounts(module,
                        {{"row_groups", groups}, {"row_grouped", grouped}});
}

} // namespace
