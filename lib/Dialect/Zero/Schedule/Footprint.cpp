//===- Footprint.cpp - buffers a collective touches ------------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::zero;

bool zero::isReshape(Operation *op) {
  return isa<tosa::ReshapeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp,
             tensor::ReshapeOp>(op);
}

Value zero::rootBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (isReshape(def))
      v = def->getOperand(0);
    else
      break;
  }
  return v;
}

namespace {
/// (period, run) in elements when `shape` with `strides` is rows of one
/// contiguous run each, a period apart: the innermost dimensions are
/// row-major contiguous (the run), and the others of more than one element
/// index one row each (each one's stride the next inner one's extent),
/// the innermost of them a period at least the run apart.
std::optional<std::pair<int64_t, int64_t>>
periodicRows(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides) {
  int64_t run = 1;
  size_t inner = shape.size();
  while (inner > 0 && (shape[inner - 1] == 1 || strides[inner - 1] == run))
    run *= shape[--inner];
  std::optional<int64_t> period;
  int64_t next = 0;
  for (size_t d = inner; d-- > 0;) {
    if (shape[d] == 1)
      continue;
    if (period && strides[d] != next)
      return std::nullopt;
    if (!period)
      period = strides[d], next = strides[d];
    next *= shape[d];
  }
  if (!period || *period < run)
    return std::nullopt;
  return std::make_pair(*period, run);
}
} // namespace

/// The kind of a root buffer (`RootKind`).
static RootKind rootKind(Value root) {
  if (Operation *def = root.getDefiningOp())
    return isa<memref::AllocOp, memref::AllocaOp>(def) ||
                   def->hasAttr(kArenaAttr)
               ? RootKind::Allocated
               : RootKind::Unknown;
  auto arg = cast<BlockArgument>(root);
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return arg.getOwner()->isEntryBlock() && fn &&
                 fn->hasAttr(kDisjointArgumentsAttr)
             ? RootKind::DisjointArgument
             : RootKind::Unknown;
}

BufferSpan zero::bufferSpan(Value v) {
  // Views other than memref.view keep their source's base pointer, so the
  // layout of `v` places its elements from that base; memref.view moves
  // the base by its byte shift.
  // A cast only forgets what the source's type knows (a kernel argument's
  // dynamic offset).
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  std::optional<std::pair<int64_t, int64_t>> range, periodic;
  auto type = dyn_cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type && type.hasStaticShape() && type.getElementType().isIntOrFloat() &&
      succeeded(type.getStridesAndOffset(strides, offset)) &&
      !ShapedType::isDynamic(offset) &&
      llvm::none_of(strides, ShapedType::isDynamic)) {
    int64_t bytes =
        shapedBytes(RankedTensorType::get({}, type.getElementType()));
    int64_t last = offset;
    for (auto [size, stride] : llvm::zip(type.getShape(), strides))
      last += (size - 1) * stride;
    if (type.getNumElements() > 0)
      range = {offset * bytes, (last + 1) * bytes};
    if (auto rows = periodicRows(type.getShape(), strides))
      periodic = {rows->first * bytes, rows->second * bytes};
  }
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      if (!shift)
        range.reset();
      else if (range)
        range = {range->first + *shift, range->second + *shift};
      v = view.getSource();
    } else if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
    } else {
      break;
    }
  }
  return {v, rootKind(v), range, periodic};
}

bool zero::mayOverlap(const BufferSpan &x, const BufferSpan &y) {
  if (x.root != y.root) {
    if (x.kind == RootKind::Allocated || y.kind == RootKind::Allocated)
      return false;
    // Two arguments of one step whose calls pass disjoint buffers.
    return x.kind != RootKind::DisjointArgument ||
           y.kind != RootKind::DisjointArgument ||
           cast<BlockArgument>(x.root).getOwner() !=
               cast<BlockArgument>(y.root).getOwner();
  }
  if (!x.range || !y.range)
    return true;
  if (x.range->first >= y.range->second || y.range->first >= x.range->second)
    return false;
  // Rows a period apart: apart when their runs' places in a period are.
  if (x.periodic && y.periodic && x.periodic->first == y.periodic->first) {
    int64_t period = x.periodic->first;
    int64_t a = x.range->first % period, b = y.range->first % period;
    int64_t ab = ((b - a) % period + period) % period;
    int64_t ba = ((a - b) % period + period) % period;
    return ab < x.periodic->second || ba < y.periodic->second;
  }
  return true;
}

bool zero::mayOverlap(Value a, Value b) {
  return mayOverlap(bufferSpan(a), bufferSpan(b));
}

SmallVector<bool> zero::noAliasArguments(func::FuncOp fn,
                                         SymbolUserMap &users) {
  unsigned n = fn.getNumArguments();
  SmallVector<bool> noAlias(n, false);
  ArrayRef<Operation *> calls = users.getUsers(fn);
  if (calls.empty() ||
      llvm::any_of(calls, [](Operation *u) { return !isa<func::CallOp>(u); }))
    return noAlias;
  for (unsigned i = 0; i < n; ++i)
    noAlias[i] = isa<MemRefType>(fn.getArgument(i).getType());
  for (Operation *call : calls) {
    // A buffer passed as anything but a ranked memref (unranked, a raw
    // pointer) may be any of the others.
    if (llvm::any_of(call->getOperandTypes(), [](Type t) {
          return !isa<MemRefType, IndexType, IntegerType, FloatType>(t);
        }))
      return SmallVector<bool>(n, false);
    SmallVector<std::optional<BufferSpan>> spans;
    for (Value operand : call->getOperands())
      spans.push_back(isa<MemRefType>(operand.getType())
                          ? std::optional(bufferSpan(operand))
                          : std::nullopt);
    for (unsigned i = 0; i < n; ++i)
      for (unsigned j = 0; j < n && noAlias[i]; ++j)
        if (i != j && spans[j] && mayOverlap(*spans[i], *spans[j]))
          noAlias[i] = false;
  }
  return noAlias;
}

void zero::collectViews(Value root, DenseSet<Value> &views) {
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!views.insert(v).second)
      continue;
    for (Operation *user : v.getUsers())
      if (auto view = dyn_cast<ViewLikeOpInterface>(user))
        if (view.getViewSource() == v)
          llvm::append_range(work, user->getResults());
  }
}

bool zero::isContiguousBuffer(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getLayout().isIdentity();
}

SmallVector<OpOperand *>
zero::usesThroughReshapes(Value root, SmallVectorImpl<Operation *> &views) {
  SmallVector<OpOperand *> uses;
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user) &&
          isContiguousBuffer(user->getResult(0))) {
        views.push_back(user);
        work.push_back(user->getResult(0));
      } else {
        uses.push_back(&use);
      }
    }
  }
  return uses;
}

bool zero::touchesViews(Operation *op, const DenseSet<Value> &views,
                        const DenseSet<Operation *> *ignore) {
  if (isa<ViewLikeOpInterface>(op) && op->getNumRegions() == 0)
    return false;
  bool hit = false;
  op->walk([&](Operation *inner) {
    if (!ignore || !ignore->contains(inner))
      hit = llvm::any_of(inner->getOperands(),
                         [&](Value v) { return views.contains(v); });
    return hit ? WalkResult::interrupt() : WalkResult::advance();
  });
  return hit;
}

CollectiveFootprint::CollectiveFootprint(CollectiveOpInterface op) {
  collectViews(rootBuffer(op.getSendBuffer()), views);
  recv = rootBuffer(op.getRecvBuffer());
  collectViews(recv, views);
}

LogicalResult zero::startEarlier(Operation *start, Operation *after,
                                 const CollectiveFootprint &fp) {
  // What the start needs from between `after` and itself moves with it;
  // only pure ops and the receive buffer's allocation can.
  Block *block = start->getBlock();
  SetVector<Operation *> closure;
  SmallVector<Value> work(start->getOperands());
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != block || def->isBeforeInBlock(after) ||
        def == after || closure.contains(def))
      continue;
    if (!isPure(def) && !isa<memref::AllocOp>(def))
      return failure();
    closure.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  // Nothing in between may touch the buffers (a write to the shard).
  for (Operation *op = after->getNextNode(); op != start;
       op = op->getNextNode())
    if (!closure.contains(op) && fp.touches(op))
      return failure();
  SmallVector<Operation *> ordered(closure.begin(), closure.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *point = after;
  for (Operation *op : ordered) {
    op->moveAfter(point);
    point = op;
  }
  start->moveAfter(point);
  return success();
}

int64_t zero::shapedBytes(ShapedType t) {
  unsigned bits = t.getElementType().isInteger(1)
                      ? 8
                      : t.getElementType().getIntOrFloatBitWidth();
  return t.hasStaticShape() ? t.getNumElements() * ((bits + 7) / 8) : 0;
}

MemoryCategory zero::allocCategory(Operation *alloc) {
  auto cls = getBufferClass(alloc->getLoc());
  return cls ? cls.getCategory() : MemoryCategory::other;
}

StringRef zero::nodeName(Location loc) {
  StringRef name;
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().getValue();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}
