//===- PackInPlace.cpp - elementwise results straight into buckets --------===//
//
// A 16-bit gradient is rounded from its f32 sums into a buffer of its own,
// which its bucket's pack then copies into the staging buffer: the
// rounding can write the staging buffer's slot itself.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

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

/// The elementwise op that alone writes the buffer `pack` copies, which
/// nothing else reads, with the buffer and its reshapes; null otherwise.
linalg::GenericOp soleWriter(BucketPackOp pack, memref::AllocOp &alloc,
                             SmallVector<Operation *> &views) {
  Value v = pack.getSource();
  while (Operation *def = v.getDefiningOp()) {
    if (!isReshape(def) || !contiguous(def->getOperand(0)))
      break;
    v = def->getOperand(0);
  }
  alloc = v.getDefiningOp<memref::AllocOp>();
  if (!alloc || !contiguous(alloc) || alloc->getBlock() != pack->getBlock())
    return nullptr;
  linalg::GenericOp writer;
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
      auto g = dyn_cast<linalg::GenericOp>(user);
      if (writer || !g || !elementwise(g) ||
          g->getBlock() != pack->getBlock() || g.getDpsInitOperand(0) != &use ||
          !g->isBeforeInBlock(pack))
        return nullptr;
      writer = g;
    }
  }
  return writer;
}

/// `v` (contiguous) as `rows` rows of `cols` elements.
Value asRows(OpBuilder &b, Location loc, Value v, int64_t rows, int64_t cols) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() > 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
    v = memref::CollapseShapeOp::create(b, loc, v,
                                        ArrayRef<ReassociationIndices>{all});
  }
  return memref::ExpandShapeOp::create(
      b, loc, MemRefType::get({rows, cols}, t.getElementType()), v,
      ArrayRef<ReassociationIndices>{{0, 1}});
}

struct ZeroPackInPlacePass
    : zero::impl::ZeroPackInPlaceBase<ZeroPackInPlacePass> {
  void runOnOperation() override {
    SmallVector<BucketPackOp> packs;
    getOperation().walk([&](BucketPackOp op) { packs.push_back(op); });
    for (BucketPackOp pack : packs) {
      memref::AllocOp alloc;
      SmallVector<Operation *> views;
      linalg::GenericOp writer = soleWriter(pack, alloc, views);
      auto stageAlloc = pack.getStaging().getDefiningOp<memref::AllocOp>();
      if (!writer || !stageAlloc ||
          stageAlloc->getBlock() != writer->getBlock())
        continue;
      if (writer->isBeforeInBlock(stageAlloc))
        stageAlloc->moveBefore(writer);
      auto stageTy = cast<MemRefType>(pack.getStaging().getType());
      auto srcTy = cast<MemRefType>(pack.getSource().getType());
      int64_t rows = pack.getRows();
      int64_t cols = srcTy.getNumElements() / rows;
      int64_t width = stageTy.getNumElements() / rows;
      OpBuilder b(writer);
      Location loc = writer.getLoc();
      // The slot: columns [offset, offset + cols) of every staging row.
      Value grid = memref::ExpandShapeOp::create(
          b, loc, MemRefType::get({rows, width}, stageTy.getElementType()),
          pack.getStaging(), ArrayRef<ReassociationIndices>{{0, 1}});
      Value slot = memref::SubViewOp::create(
          b, loc, grid, ArrayRef<int64_t>{0, int64_t(pack.getOffset())},
          ArrayRef<int64_t>{rows, cols}, ArrayRef<int64_t>{1, 1});
      SmallVector<Value> ins;
      for (Value in : writer.getDpsInputs())
        ins.push_back(asRows(b, loc, in, rows, cols));
      AffineMap id = b.getMultiDimIdentityMap(2);
      SmallVector<AffineMap> maps(ins.size() + 1, id);
      SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
      auto rowsOp = linalg::GenericOp::create(b, loc, TypeRange{}, ins,
                                              ValueRange{slot}, maps, iters);
      rowsOp.getRegion().takeBody(writer.getRegion());
      writer->erase();
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
