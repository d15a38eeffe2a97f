//===- Buckets.cpp - views of a bucket's members and slots ------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Utils/Buckets.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

Value zero::bucketMemberView(OpBuilder &b, Location loc, Value v,
                             int64_t rows) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() == 0) {
    // A scalar (a loss) is one element.
    v = memref::ExpandShapeOp::create(b, loc,
                                      MemRefType::get({1}, t.getElementType()),
                                      v, ArrayRef<ReassociationIndices>{});
  } else if (t.getRank() != 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
    v = memref::CollapseShapeOp::create(b, loc, v,
                                        ArrayRef<ReassociationIndices>{all});
  }
  if (rows == 1)
    return v;
  int64_t n = t.getNumElements();
  return memref::ExpandShapeOp::create(
      b, loc, MemRefType::get({rows, n / rows}, t.getElementType()), v,
      ArrayRef<ReassociationIndices>{{0, 1}});
}

Value zero::bucketSlotView(OpBuilder &b, Location loc, Value stage,
                           int64_t rows, int64_t offset, int64_t cols) {
  auto t = cast<MemRefType>(stage.getType());
  auto idx = [&](int64_t i) -> OpFoldResult { return b.getIndexAttr(i); };
  if (rows == 1)
    return memref::SubViewOp::create(
        b, loc, stage, ArrayRef<OpFoldResult>{idx(offset)},
        ArrayRef<OpFoldResult>{idx(cols)}, ArrayRef<OpFoldResult>{idx(1)});
  int64_t width = t.getNumElements() / rows;
  Value grid = memref::ExpandShapeOp::create(
      b, loc, MemRefType::get({rows, width}, t.getElementType()), stage,
      ArrayRef<ReassociationIndices>{{0, 1}});
  return memref::SubViewOp::create(b, loc, grid,
                                   ArrayRef<OpFoldResult>{idx(0), idx(offset)},
                                   ArrayRef<OpFoldResult>{idx(rows), idx(cols)},
                                   ArrayRef<OpFoldResult>{idx(1), idx(1)});
}
