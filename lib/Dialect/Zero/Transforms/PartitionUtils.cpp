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
