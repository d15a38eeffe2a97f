//===- PackInPlace.cpp - results written straight into buckets --*- C++ -*-===//
//
// A 16-bit gradient is rounded from its f32 sums into a buffer of its own,
// which its bucket's pack then copies into the staging buffer: the
// rounding can write the staging buffer's slot itself, and into a one-row
// bucket so can any op that writes the buffer (a weight gradient's GEMM).
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

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
bool contiguous(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() && t.getLayout().isIdentity() &&
         t.getRank() > 0;
}

bool isReshape(Operation *op) {
  return isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(op);
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

/// The op that alone writes the buffer `pack` copies, which nothing else
/// reads, with the buffer and its reshapes; null otherwise. Over several
/// rows it must be elementwise (it then runs over the rows); into a
/// one-row (all-reduce) bucket any op writing the buffer itself will do.
Operation *soleWriter(BucketPackOp pack, memref::AllocOp &alloc,
                      SmallVector<Operation *> &views,
                      SmallVector<linalg::FillOp> &fills) {
  Value v = pack.getSource();
  while (Operation *def = v.getDefiningOp()) {
    if (!isReshape(def) || !contiguous(def->getOperand(0)))
      break;
    v = def->getOperand(0);
  }
  alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc || !contiguous(alloc) || alloc->getBlock() != pack->getBlock())
    return nullptr;
  Operation *writer = nullptr;
  bool writerInPlace = false;
  SmallVector<Value> work{alloc};
  while (!work.empty()) {
    Value b = work.pop_back_val();
    for (OpOperand &use : b.getUses()) {
      Operation *user = use.getOwner();
      if (user == pack)
        continue;
      if (isReshape(user) && contiguous(user->getResult(0))) {
        views.push_back(user);
        work.push_back(user->getResult(0));
        continue;
      }
      // A GEMM's zero fill: it writes the slot too.
      if (auto fill = dyn_cast<linalg::FillOp>(user);
          fill && pack.getRows() == 1 && b == alloc.getResult() &&
          fill.hasPureBufferSemantics() &&
          fill->getBlock() == pack->getBlock()) {
        fills.push_back(fill);
        continue;
      }
      auto dps = dyn_cast<DestinationStyleOpInterface>(user);
      if (writer || !dps || dps.getNumDpsInits() != 1 ||
          dps.getDpsInitOperand(0) != &use ||
          user->getBlock() != pack->getBlock() || !user->isBeforeInBlock(pack))
        return nullptr;
      auto g = dyn_cast<linalg::GenericOp>(user);
      bool overRows = g && elementwise(g);
      bool inPlace = pack.getRows() == 1 && b == alloc.getResult() &&
                     writesAnyLayout(user);
      if (!overRows && !inPlace)
        return nullptr;
      writer = user;
      writerInPlace = inPlace;
    }
  }
  // Fills only before an op that writes the buffer where it lies.
  if (writer && !fills.empty() &&
      (!writerInPlace || llvm::any_of(fills, [&](linalg::FillOp f) {
        return !f->isBeforeInBlock(writer);
      })))
    return nullptr;
  return writer;
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
      memref::AllocOp alloc;
      SmallVector<Operation *> views;
      SmallVector<linalg::FillOp> fills;
      Operation *writer = soleWriter(pack, alloc, views, fills);
      auto stageAlloc = pack.getStaging().getDefiningOp<memref::AllocOp>();
      if (!writer || !stageAlloc ||
          stageAlloc->getBlock() != writer->getBlock())
        continue;
      // The slot is written from the first of them on.
      Operation *first = writer;
      for (linalg::FillOp fill : fills)
        if (fill->isBeforeInBlock(first))
          first = fill;
      if (first->isBeforeInBlock(stageAlloc))
        stageAlloc->moveBefore(first);
      OpBuilder b(first);
      Location loc = writer->getLoc();
      if (auto g = dyn_cast<linalg::GenericOp>(writer);
          g && elementwise(g) && fills.empty())
        writeRows(b, loc, g, pack);
      else
        writeSlot(b, loc, writer, fills, alloc, pack);
      pack->erase();
      for (Operation *view : llvm::reverse(views))
        if (view->use_empty())
          view->erase();
      if (alloc->use_empty())
        alloc->erase();
    }
  }
};
} // namespace
