//===- PartitionUtils.cpp - building blocks of the partitioning -*- C++ -*-===//
#include "PartitionUtils.h"

using namespace mlir;
using namespace mlir::zero;
using namespace mlir::zero::partition;

Value partition::Builder::flatPadded(Value v, int64_t total) {
  int64_t n = typeOf(v).getNumElements();
  return pad(reshape(v, {n}), {0}, {total - n});
}

Value partition::Builder::unpad(Value flat, ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return reshape(slice(flat, {0}, {n}), shape);
}

Value partition::Builder::rankSlice(Value flat, int64_t s) {
  Value rank = RankOp::create(b, loc, b.getIndexType());
  Value off = arith::MulIOp::create(b, loc, rank,
                                    arith::ConstantIndexOp::create(b, loc, s));
  SmallVector<OpFoldResult> offs = {off}, sizes = {b.getIndexAttr(s)},
                            strides = {b.getIndexAttr(1)};
  return tensor::ExtractSliceOp::create(b, loc, typeOf(flat).clone({s}), flat,
                                        offs, sizes, strides);
}

Value partition::Builder::empty(RankedTensorType t) {
  return tensor::EmptyOp::create(b, loc, t.getShape(), t.getElementType());
}

Value partition::Builder::allReduce(Value v, int64_t n) {
  return AllReduceOp::create(b, loc, TypeRange{v.getType()}, v,
                             empty(typeOf(v)), b.getI64IntegerAttr(n))
      .getResult()[0];
}

Value partition::Builder::reduceScatter(Value flat, int64_t n) {
  auto t = typeOf(flat).clone({typeOf(flat).getNumElements() / n});
  return ReduceScatterOp::create(b, loc, TypeRange{t}, flat, empty(t),
                                 b.getI64IntegerAttr(n))
      .getResult()[0];
}

Value partition::Builder::allGather(Value shard, int64_t n) {
  auto t = typeOf(shard).clone({typeOf(shard).getNumElements() * n});
  return AllGatherOp::create(b, loc, TypeRange{t}, shard, empty(t),
                             b.getI64IntegerAttr(n))
      .getResult()[0];
}

int64_t partition::worldSizeOf(func::FuncOp fn) {
  auto a = fn->getAttrOfType<IntegerAttr>(kWorldSizeAttr);
  return a ? a.getInt() : 0;
}

static constexpr uint64_t kStride = uint64_t(1) << 32;

void partition::BlockOrder::moveAfter(Operation *op, Operation *after) {
  op->moveAfter(after);
  Operation *next = op->getNextNode();
  uint64_t lo = position(after);
  uint64_t hi = next ? position(next) : lo + 2 * kStride;
  if (hi - lo < 2)
    block = nullptr;
  else
    positions[op] = lo + (hi - lo) / 2;
}

uint64_t partition::BlockOrder::position(Operation *op) {
  auto it = positions.find(op);
  if (op->getBlock() != block || it == positions.end()) {
    block = op->getBlock();
    positions.clear();
    uint64_t next = 0;
    for (Operation &o : *block)
      positions[&o] = next += kStride;
    it = positions.find(op);
  }
  return it->second;
}

void partition::hoistAfter(Operation *op, Operation *point, BlockOrder &order) {
  Block *block = point->getBlock();
  for (Value v : op->getOperands()) {
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == block && order.isBefore(point, def))
      hoistAfter(def, point, order);
  }
  Operation *after = point;
  // Keep the moved ops in dependency order: after the last one moved.
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp();
        def && def->getBlock() == block && order.isBefore(after, def))
      after = def;
  order.moveAfter(op, after);
}
