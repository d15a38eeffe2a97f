//===- Footprint.h - buffers a collective touches ---------------*- C++ -*-===//
//
// What the schedule needs to know about buffers: the allocation a view
// comes from, whether an op touches a buffer, its bytes and its memory
// category. Everything works on the zero dialect's collectives through
// CollectiveOpInterface, whatever target the step is for.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_SCHEDULE_FOOTPRINT_H
#define ZERO_OPT_DIALECT_ZERO_SCHEDULE_FOOTPRINT_H

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

namespace mlir::zero {

/// Ops that only reshape a tensor: once bufferized, views of their
/// operand's buffer.
bool isReshape(Operation *op);
/// The buffer `v` views, through view-like ops and, before bufferization,
/// reshapes; `v` itself when it is no view.
Value rootBuffer(Value v);
/// Whether two buffers may share a byte: views of one buffer whose byte
/// ranges meet or are not static, or two buffers neither of which is
/// allocated in the function (arguments a caller may pass twice; the
/// device arena, `kArenaAttr`, counts as allocated), unless they are two
/// arguments of a step whose calls pass disjoint buffers
/// (`kDisjointArgumentsAttr`).
bool mayOverlap(Value a, Value b);

/// Which roots a root may share bytes with: none but itself (allocated in
/// the function, or the device arena), none but itself and `Unknown` ones
/// (an argument of a step whose calls pass disjoint buffers; a function
/// body sees no other function's arguments), or any that is not allocated.
enum class RootKind { Allocated, DisjointArgument, Unknown };

/// Where a buffer's bytes lie in its root (the buffer its views and casts
/// come from), and the root's kind: their byte range from the root's base,
/// none when an offset, a size or a stride is not static; and for rows of
/// one contiguous run each, a period apart (a bucket member's slot in every
/// rank's part of the staging buffer), the period and run in bytes. Passes
/// that compare many buffers pairwise compute each span once.
struct BufferSpan {
  Value root;
  RootKind kind;
  std::optional<std::pair<int64_t, int64_t>> range;
  std::optional<std::pair<int64_t, int64_t>> periodic;
};
BufferSpan bufferSpan(Value v);
/// `mayOverlap` on spans.
bool mayOverlap(const BufferSpan &a, const BufferSpan &b);
/// For each argument of `fn`: whether it is a buffer that overlaps no other
/// argument at any of `fn`'s calls (none is when `fn` has no call or a use
/// that is no call).
SmallVector<bool> noAliasArguments(func::FuncOp fn, SymbolUserMap &users);
/// Adds `root` and every view of it to `views`.
void collectViews(Value root, DenseSet<Value> &views);
/// Whether `v` is a statically shaped buffer with the identity layout.
bool isContiguousBuffer(Value v);
/// The uses of buffer `root` and of its reshapes that keep it contiguous
/// (memref expand/collapse_shape, whose elements keep their order), but
/// for those reshapes, which go to `views` (nearest `root` first).
SmallVector<OpOperand *>
usesThroughReshapes(Value root, SmallVectorImpl<Operation *> &views);
/// Whether `op` (or an op nested in it) uses one of `views`, leaving out
/// ops in `ignore`. Making a view reads nothing: its uses are checked.
bool touchesViews(Operation *op, const DenseSet<Value> &views,
                  const DenseSet<Operation *> *ignore = nullptr);

/// The buffers a collective reads and writes (with their views), and the
/// test for an op that touches them.
struct CollectiveFootprint {
  DenseSet<Value> views;
  Value recv; ///< the receive buffer's root

  explicit CollectiveFootprint(CollectiveOpInterface op);
  bool touches(Operation *op) const { return touchesViews(op, views); }
};

/// Moves `start` to just after `after`, with the pure ops and the receive
/// buffer's allocation it needs from between them. Fails, changing
/// nothing, when something in between touches its buffers or another op
/// it needs cannot move.
LogicalResult startEarlier(Operation *start, Operation *after,
                           const CollectiveFootprint &fp);

/// Bytes of a statically shaped buffer or tensor (i1 takes a byte; 0 when
/// the shape is dynamic).
int64_t shapedBytes(ShapedType t);
inline int64_t bufferBytes(MemRefType t) { return shapedBytes(t); }
/// The memory category of an allocation, from its location.
MemoryCategory allocCategory(Operation *alloc);
/// The ONNX node (or other name) a location carries; empty without one.
StringRef nodeName(Location loc);

} // namespace mlir::zero

#endif
