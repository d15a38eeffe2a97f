//===- BucketCollectives.cpp - flat buckets of collectives -----*- C++ -*-===//
//
// Small collectives pay their latency each; a bucket pays it once. On the
// bufferized step, consecutive reduce-scatters (or all-reduces, or
// all-gathers) are packed into one flat staging buffer as their
// inputs become ready, run as one collective where the bucket's last input
// is ready, and unpacked right before each result is first touched.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "CollectiveUtils.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUBUCKETCOLLECTIVES
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;
using namespace mlir::zero;

namespace {
enum Kind { AllReduce, ReduceScatter, AllGather, NumKinds };

struct Member {
  Operation *op;
  Value in, out;
  int64_t count; ///< elements of the per-rank part (see Bucket)
  DenseSet<Value> outViews;
};

/// Collectives of one kind packed side by side: reduce-scatter and
/// all-gather stage the whole buffer as N rows of the per-rank parts
/// (rank r's row holds every member's r-th shard), all-reduce as one row.
struct Bucket {
  Kind kind;
  int64_t worldSize = 0;
  int64_t elements = 0;      ///< per rank
  int64_t wholeElements = 0; ///< of the members' whole tensors
  SmallVector<Member> members;
  /// Copies of a member's result into another buffer (a gathered parameter
  /// written back to its replica) that wait until the bucket has run, and
  /// the buffers they write.
  SmallVector<memref::CopyOp> deferred;
  DenseSet<Value> deferredTargets;
};

/// Whether `v` can be staged: a static f32 buffer, contiguous. Viewed as
/// several rows it must have the identity layout; as one row a unit-stride
/// vector (a slice of a flat buffer) will do.
bool flatCandidate(Value v, bool severalRows) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || !t.hasStaticShape() || !t.getElementType().isF32() ||
      t.getNumElements() == 0)
    return false;
  if (t.getLayout().isIdentity())
    return true;
  if (severalRows || t.getRank() != 1)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(t.getStridesAndOffset(strides, offset)) && strides[0] == 1;
}

/// `v` as a 1-D memref (identity layout, so a collapse is a view).
Value flatten(OpBuilder &b, Location loc, Value v) {
  auto t = cast<MemRefType>(v.getType());
  if (t.getRank() == 1)
    return v;
  ReassociationIndices all;
  for (int64_t i = 0; i < t.getRank(); ++i)
    all.push_back(i);
  return memref::CollapseShapeOp::create(b, loc, v,
                                         ArrayRef<ReassociationIndices>{all});
}

/// Rows x cols view of a flat buffer.
Value rows(OpBuilder &b, Location loc, Value flat, int64_t n, int64_t cols) {
  auto t = MemRefType::get({n, cols}, b.getF32Type());
  return memref::ExpandShapeOp::create(b, loc, t, flat,
                                       ArrayRef<ReassociationIndices>{{0, 1}});
}

/// A member's buffer as `n` rows of `cols` (one row: the buffer, flat).
Value memberView(OpBuilder &b, Location loc, Value v, int64_t n, int64_t cols) {
  Value flat = flatten(b, loc, v);
  return n == 1 ? flat : rows(b, loc, flat, n, cols);
}

/// Columns [offset, offset + cols) of a staging buffer of `n` rows of
/// `total`.
Value stageView(OpBuilder &b, Location loc, Value stage, int64_t n,
                int64_t total, int64_t offset, int64_t cols) {
  auto idx = [&](int64_t i) -> OpFoldResult { return b.getIndexAttr(i); };
  if (n == 1)
    return memref::SubViewOp::create(
        b, loc, stage, ArrayRef<OpFoldResult>{idx(offset)},
        ArrayRef<OpFoldResult>{idx(cols)}, ArrayRef<OpFoldResult>{idx(1)});
  return memref::SubViewOp::create(b, loc, rows(b, loc, stage, n, total),
                                   ArrayRef<OpFoldResult>{idx(0), idx(offset)},
                                   ArrayRef<OpFoldResult>{idx(n), idx(cols)},
                                   ArrayRef<OpFoldResult>{idx(1), idx(1)});
}

Location staged(MLIRContext *ctx, Location loc) {
  return FusedLoc::get(
      ctx, {loc},
      BufferClassAttr::get(ctx, MemoryCategory::buffers, Phase::backward));
}

/// Replaces the members of `bucket` by one collective on staging buffers.
void emit(Bucket &bucket) {
  if (bucket.members.size() < 2)
    return;
  MLIRContext *ctx = bucket.members.front().op->getContext();
  int64_t n = bucket.worldSize, total = bucket.elements;
  Kind kind = bucket.kind;
  Operation *first = bucket.members.front().op;
  Operation *last = bucket.members.back().op;
  Location loc = staged(ctx, last->getLoc());
  OpBuilder b(first);
  auto f32 = b.getF32Type();
  // Reduce-scatter and all-gather stage N rows; all-reduce one.
  int64_t inRows = kind == ReduceScatter ? n : 1;
  int64_t outRows = kind == AllGather ? n : 1;
  Value stageIn =
      memref::AllocOp::create(b, loc, MemRefType::get({inRows * total}, f32));
  Value stageOut = kind == AllReduce
                       ? stageIn
                       : memref::AllocOp::create(
                             b, loc, MemRefType::get({outRows * total}, f32))
                             .getResult();
  // Pack each input where its collective was: it is ready there.
  int64_t offset = 0;
  SmallVector<int64_t> offsets;
  for (Member &m : bucket.members) {
    offsets.push_back(offset);
    OpBuilder mb(m.op);
    Location mloc = m.op->getLoc();
    Value src = memberView(mb, mloc, m.in, inRows, m.count);
    Value dst = stageView(mb, mloc, stageIn, inRows, total, offset, m.count);
    memref::CopyOp::create(mb, mloc, src, dst);
    offset += m.count;
  }
  // One collective where the last input is ready.
  OpBuilder lb(last);
  Operation *op;
  auto ws = lb.getI64IntegerAttr(n);
  if (kind == AllReduce)
    op = AllReduceOp::create(lb, loc, TypeRange{}, stageIn, stageOut, ws);
  else if (kind == ReduceScatter)
    op = ReduceScatterOp::create(lb, loc, TypeRange{}, stageIn, stageOut, ws);
  else
    op = AllGatherOp::create(lb, loc, TypeRange{}, stageIn, stageOut, ws);
  // Deferred copies read the results: after the collective, in order.
  Operation *point = op;
  for (memref::CopyOp c : bucket.deferred) {
    if (!c->isBeforeInBlock(op))
      continue; // after the last member: already in place
    c->moveAfter(point);
    point = c;
  }
  // Unpack each result right before it is first touched.
  Block *blk = last->getBlock();
  for (auto [m, off] : llvm::zip(bucket.members, offsets)) {
    Operation *use = op->getNextNode();
    while (use && !use->hasTrait<OpTrait::IsTerminator>() &&
           !(use != m.op && zero::cpu::touchesViews(use, m.outViews)))
      use = use->getNextNode();
    if (!use)
      use = blk->getTerminator();
    OpBuilder ub(use);
    Location uloc = m.op->getLoc();
    Value src = stageView(ub, uloc, stageOut, outRows, total, off, m.count);
    Value dst = memberView(ub, uloc, m.out, outRows, m.count);
    memref::CopyOp::create(ub, uloc, src, dst);
  }
  for (Member &m : bucket.members)
    m.op->erase();
}

struct ZeroCPUBucketCollectivesPass
    : zero::cpu::impl::ZeroCPUBucketCollectivesBase<
          ZeroCPUBucketCollectivesPass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      auto limit = [&](StringRef name) {
        auto a = fn->getAttrOfType<IntegerAttr>(name);
        return a ? a.getInt() / 4 : int64_t(0);
      };
      int64_t reduceLimit = limit("zero.reduce_bucket_bytes");
      int64_t gatherLimit = limit("zero.allgather_bucket_bytes");
      for (Block &blk : fn.getBody())
        runOnBlock(blk, reduceLimit, gatherLimit);
    });
  }

  void runOnBlock(Block &blk, int64_t reduceLimit, int64_t gatherLimit) {
    std::array<Bucket, NumKinds> open;
    for (int k = 0; k < NumKinds; ++k)
      open[k].kind = Kind(k);
    SmallVector<Bucket> done;
    auto close = [&](Bucket &bk) {
      if (bk.members.size() >= 2)
        done.push_back(std::move(bk));
      Kind k = bk.kind;
      bk = Bucket{};
      bk.kind = k;
    };
    for (Operation &op : llvm::make_early_inc_range(blk)) {
      // A result may not be touched before its bucket has run, except by
      // a copy into a buffer nothing touches until then.
      for (Bucket &bk : open) {
        if (zero::cpu::touchesViews(&op, bk.deferredTargets)) {
          close(bk);
          continue;
        }
        bool readsResult = llvm::any_of(bk.members, [&](const Member &m) {
          return zero::cpu::touchesViews(&op, m.outViews);
        });
        if (!readsResult)
          continue;
        auto copy = dyn_cast<memref::CopyOp>(&op);
        if (copy && llvm::none_of(bk.members, [&](const Member &m) {
              return m.outViews.contains(copy.getTarget());
            })) {
          bk.deferred.push_back(copy);
          zero::cpu::collectViews(zero::cpu::rootBuffer(copy.getTarget()),
                                  bk.deferredTargets);
          continue;
        }
        close(bk);
      }
      Kind kind;
      if (isa<AllReduceOp>(op))
        kind = AllReduce;
      else if (isa<ReduceScatterOp>(op))
        kind = ReduceScatter;
      else if (isa<AllGatherOp>(op))
        kind = AllGather;
      else
        continue;
      Value in = op.getOperand(0), out = op.getOperand(1);
      auto ws = op.getAttrOfType<IntegerAttr>("world_size");
      int64_t limit = kind == AllGather ? gatherLimit : reduceLimit;
      if (!ws || !flatCandidate(in, kind == ReduceScatter) ||
          !flatCandidate(out, kind == AllGather) || op.getNumResults() ||
          limit <= 0)
        continue;
      int64_t n = ws.getInt();
      // Elements per rank: the gathered shard, the scattered shard, or
      // the reduced buffer.
      int64_t count =
          cast<MemRefType>(kind == ReduceScatter ? out.getType() : in.getType())
              .getNumElements();
      // The limit counts whole tensors (DeepSpeed's bucket sizes count the
      // gradient or parameter elements a bucket holds), N parts each.
      int64_t whole = kind == AllReduce ? count : count * n;
      Bucket &bk = open[kind];
      if (!bk.members.empty() &&
          (bk.worldSize != n || bk.wholeElements + whole > limit))
        close(bk);
      if (whole > limit)
        continue;
      Member m{&op, in, out, count, {}};
      zero::cpu::collectViews(zero::cpu::rootBuffer(out), m.outViews);
      bk.worldSize = n;
      bk.elements += count;
      bk.wholeElements += whole;
      bk.members.push_back(std::move(m));
    }
    for (Bucket &bk : open)
      close(bk);
    for (Bucket &bk : done)
      emit(bk);
  }
};
} // namespace
