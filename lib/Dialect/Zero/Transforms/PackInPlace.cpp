//===- PackInPlace.cpp - results written straight into buckets --*- C++ -*-===//
//
// A 16-bit gradient is rounded from its f32 sums into a buffer of its own,
// which its bucket's pack then copies into the staging buffer: the
// rounding can write the staging buffer's slot itself, and into a one-row
// bucket so can any op that writes the buffer (a weight gradient's GEMM).
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/Buckets.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPACKINPLACE
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
/// A contiguous buffer of at least one dimension: rows can view it.
bool contiguous(Value v) {
  return isContiguousBuffer(v) && cast<MemRefType>(v.getType()).getRank() > 0;
}

/// An op that computes each element of its one output from the same
/// element of its inputs, on contiguous buffers: it can run over any
/// reshaping of them.
bool elementwise(linalg::GenericOp op) {
  return op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         !op.hasIndexSemantics() &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) &&
         llvm::all_of(op->getOperands(), contiguous);
}

/// Whether `op` may write its one output through a strided view of the
/// staging buffer: linalg ops and 16-bit GEMMs take any layout.
bool writesAnyLayout(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureBufferSemantics() && linalgOp.getNumDpsInits() == 1;
  return isa<RoundedMatmulOp>(op);
}

/// The op that alone writes the buffer a pack copies, which nothing else
/// reads: the buffer, its reshapes, the zero fills before a GEMM writing
/// it, and whether the op runs again over the pack's rows (elementwise, no
/// fills) or writes the slot viewed as the buffer (a one-row bucket).
struct SoleWriter {
  Operation *op = nullptr;
  memref::AllocOp alloc;
  SmallVector<Operation *> views;
  SmallVector<linalg::FillOp> fills;
  bool overRows = false;
};

/// The sole writer of what `pack` copies; its `op` null when there is
/// none. Over several rows it must be elementwise; into a one-row
/// (all-reduce) bucket any op writing the buffer itself will do.
SoleWriter soleWriter(BucketPackOp pack) {
  SoleWriter w;
  Value v = pack.getSource();
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def) ||
        !contiguous(def->getOperand(0)))
      break;
    v = def->getOperand(0);
  }
  w.alloc = v.getDefiningOp<memref::AllocOp>();
  if (!w.alloc || !contiguous(w.alloc) ||
      w.alloc->getBlock() != pack->getBlock())
    return {};
  Operation *writer = nullptr;
  bool inPlace = false;
  SmallVector<OpOperand *> uses = usesThroughReshapes(w.alloc, w.views);
  // Rows cannot view a view of no dimension.
  if (llvm::any_of(w.views, [](Operation *view) {
        return !contiguous(view->getResult(0));
      }))
    return {};
  for (OpOperand *use : uses) {
    Operation *user = use->getOwner();
    if (user == pack)
      continue;
    bool onBuffer = use->get() == w.alloc.getResult();
    // A GEMM's zero fill: it writes the slot too.
    if (auto fill = dyn_cast<linalg::FillOp>(user);
        fill && pack.getRows() == 1 && onBuffer &&
        fill.hasPureBufferSemantics() && fill->getBlock() == pack->getBlock()) {
      w.fills.push_back(fill);
      continue;
    }
    auto dps = dyn_cast<DestinationStyleOpInterface>(user);
    if (writer || !dps || dps.getNumDpsInits() != 1 ||
        dps.getDpsInitOperand(0) != use ||
        user->getBlock() != pack->getBlock() || !user->isBeforeInBlock(pack))
      return {};
    auto g = dyn_cast<linalg::GenericOp>(user);
    w.overRows = g && elementwise(g);
    inPlace = pack.getRows() == 1 && onBuffer && writesAnyLayout(user);
    if (!w.overRows && !inPlace)
      return {};
    writer = user;
  }
  // Fills only before an op that writes the buffer where it lies.
  if (!w.fills.empty()) {
    if (!writer || !inPlace || llvm::any_of(w.fills, [&](linalg::FillOp f) {
          return !f->isBeforeInBlock(writer);
        }))
      return {};
    w.overRows = false;
  }
  w.op = writer;
  return w;
}

/// `g` again over `pack`'s rows (one row: flat), writing its slot. Erases
/// `g`.
void writeRows(OpBuilder &b, Location loc, linalg::GenericOp g,
               BucketPackOp pack) {
  int64_t rows = pack.getRows();
  int64_t cols =
      cast<MemRefType>(pack.getSource().getType()).getNumElements() / rows;
  Value slot =
      bucketSlotView(b, loc, pack.getStaging(), rows, pack.getOffset(), cols);
  SmallVector<Value> ins;
  for (Value in : g.getDpsInputs())
    ins.push_back(bucketMemberView(b, loc, in, rows));
  unsigned rank = rows == 1 ? 1 : 2;
  SmallVector<AffineMap> maps(ins.size() + 1, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto rowsOp = linalg::GenericOp::create(b, loc, TypeRange{}, ins,
                                          ValueRange{slot}, maps, iters);
  rowsOp.getRegion().takeBody(g.getRegion());
  g->erase();
}

/// `writer` writes its output, `alloc`, at its slot of a one-row bucket
/// instead: the slot is contiguous, viewed in the buffer's shape.
void writeSlot(OpBuilder &b, Location loc, Operation *writer,
               ArrayRef<linalg::FillOp> fills, memref::AllocOp alloc,
               BucketPackOp pack) {
  MemRefType t = alloc.getType();
  Value slot = bucketSlotView(b, loc, pack.getStaging(), /*rows=*/1,
                              pack.getOffset(), t.getNumElements());
  if (t.getRank() > 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
    slot = memref::ExpandShapeOp::create(b, loc, t.getShape(), slot,
                                         ArrayRef<ReassociationIndices>{all});
  }
  cast<DestinationStyleOpInterface>(writer).getDpsInitsMutable()[0].set(slot);
  for (linalg::FillOp fill : fills)
    fill.getOutputsMutable()[0].set(slot);
}

struct ZeroPackInPlacePass
    : zero::impl::ZeroPackInPlaceBase<ZeroPackInPlacePass> {
  void runOnOperation() override {
    SmallVector<BucketPackOp> packs;
    getOperation().walk([&](BucketPackOp op) { packs.push_back(op); });
    for (BucketPackOp pack : packs) {
      SoleWriter w = soleWriter(pack);
      auto stageAlloc = pack.getStaging().getDefiningOp<memref::AllocOp>();
      if (!w.op || !stageAlloc || stageAlloc->getBlock() != w.op->getBlock())
        continue;
      // The slot is written from the first of them on.
      Operation *first = w.op;
      for (linalg::FillOp fill : w.fills)
        if (fill->isBeforeInBlock(first))
          first = fill;
      if (first->isBeforeInBlock(stageAlloc))
        stageAlloc->moveBefore(first);
      OpBuilder b(first);
      Location loc = w.op->getLoc();
      if (w.overRows)
        writeRows(b, loc, cast<linalg::GenericOp>(w.op), pack);
      else
        writeSlot(b, loc, w.op, w.fills, w.alloc, pack);
      pack->erase();
      for (Operation *view : llvm::reverse(w.views))
        if (view->use_empty())
          view->erase();
      if (w.alloc->use_empty())
        w.alloc->erase();
    }
  }
};
} // namespace
