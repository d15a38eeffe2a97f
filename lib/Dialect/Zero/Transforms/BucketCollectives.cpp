//===- BucketCollectives.cpp - flat buckets of collectives -----*- C++ -*-===//
//
// Small collectives pay their latency each; a bucket pays it once. On the
// bufferized step, consecutive reduce-scatters (or all-reduces, or
// all-gathers) are packed (zero.bucket_pack) into one flat staging buffer
// as their inputs become ready, run as one collective where the bucket's
// last input is ready, and unpacked (zero.bucket_unpack) right before each
// result is first touched.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROBUCKETCOLLECTIVES
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

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
  Type elementType;
  int64_t elements = 0;      ///< per rank
  int64_t wholeElements = 0; ///< of the members' whole tensors
  SmallVector<Member> members;
  /// Every member's outViews: what an op must not touch before the bucket
  /// has run, looked up once per op instead of per member.
  DenseSet<Value> outViews;
  /// Ops that read a member's result and wait until the bucket has run: a
  /// copy into another buffer (a gathered parameter written back to its
  /// replica), elementwise work on it (a gradient's 1/N average); the
  /// buffers they write, which nothing may touch before they run, and the
  /// others they read, which nothing may write.
  SmallVector<Operation *> deferred;
  DenseSet<Value> deferredTargets, deferredSources;
};

/// Whether `op` may write one of `views`: a linalg op its outputs, a copy
/// its target; anything else whatever it touches.
bool mayWrite(Operation *op, const DenseSet<Value> &views) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    if (linalgOp.hasPureBufferSemantics())
      return llvm::any_of(linalgOp.getDpsInits(),
                          [&](Value v) { return views.contains(v); });
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return views.contains(copy.getTarget());
  return touchesViews(op, views);
}

/// The buffers `op` writes and reads when it can wait for a bucket: a copy,
/// or, after reductions, elementwise work on buffers (a gradient's
/// average, its rounding to 16 bits), whose outputs are none of the
/// members'. Work on gathered parameters keeps its place: deferring it
/// would gather ahead of compute, which prefetching decides.
bool deferrable(Operation *op, const Bucket &bk, SmallVector<Value> &writes,
                SmallVector<Value> &reads) {
  auto isMemberOut = [&](Value v) { return bk.outViews.contains(v); };
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    writes = {copy.getTarget()};
    reads = {copy.getSource()};
  } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
             linalgOp && bk.kind != AllGather &&
             linalgOp.hasPureBufferSemantics() &&
             linalgOp.getNumLoops() == linalgOp.getNumParallelLoops()) {
    writes = linalgOp.getDpsInits();
    for (OpOperand *in : linalgOp.getDpsInputOperands())
      if (isa<MemRefType>(in->get().getType()))
        reads.push_back(in->get());
  } else {
    return false;
  }
  return llvm::none_of(writes, isMemberOut) &&
         llvm::all_of(writes, [](Value v) { return bool(rootBuffer(v)); });
}

/// Whether `v` can be staged: a static floating-point buffer, contiguous.
/// Viewed as several rows it must have the identity layout; as one row a
/// unit-stride vector (a slice of a flat buffer) will do.
bool flatCandidate(Value v, bool severalRows) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || !t.hasStaticShape() || !isa<FloatType>(t.getElementType()) ||
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

/// Whether `op` writes only buffers that gathers of its block take as
/// inputs (the rounding of a master weight into what is gathered), or
/// nothing.
bool preparesOnly(Operation *op, const DenseSet<Value> &gatherInputs) {
  if (isMemoryEffectFree(op))
    return true;
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface)
    return false;
  SmallVector<MemoryEffects::EffectInstance> effects;
  iface.getEffects(effects);
  return llvm::all_of(effects, [&](const MemoryEffects::EffectInstance &e) {
    if (!isa<MemoryEffects::Write>(e.getEffect()))
      return true;
    Value root = e.getValue() ? rootBuffer(e.getValue()) : Value();
    return root && gatherInputs.contains(root);
  });
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
  Type elt = bucket.elementType;
  // Reduce-scatter and all-gather stage N rows; all-reduce one.
  int64_t inRows = kind == ReduceScatter ? n : 1;
  int64_t outRows = kind == AllGather ? n : 1;
  Value stageIn =
      memref::AllocOp::create(b, loc, MemRefType::get({inRows * total}, elt));
  Value stageOut = kind == AllReduce
                       ? stageIn
                       : memref::AllocOp::create(
                             b, loc, MemRefType::get({outRows * total}, elt))
                             .getResult();
  // Pack each input where its collective was: it is ready there.
  int64_t offset = 0;
  SmallVector<int64_t> offsets;
  for (Member &m : bucket.members) {
    offsets.push_back(offset);
    OpBuilder mb(m.op);
    BucketPackOp::create(mb, m.op->getLoc(), m.in, stageIn, offset, inRows);
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
  // Deferred ops read the results: after the collective, in order.
  Operation *point = op;
  for (Operation *c : bucket.deferred) {
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
           !(use != m.op && touchesViews(use, m.outViews)))
      use = use->getNextNode();
    if (!use)
      use = blk->getTerminator();
    OpBuilder ub(use);
    BucketUnpackOp::create(ub, m.op->getLoc(), stageOut, m.out, off, outRows);
  }
  for (Member &m : bucket.members)
    m.op->erase();
}

struct ZeroBucketCollectivesPass
    : zero::impl::ZeroBucketCollectivesBase<ZeroBucketCollectivesPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp fn) {
      for (Block &blk : fn.getBody())
        runOnBlock(blk, reduceBucketSize, allgatherBucketSize);
    });
  }

  void runOnBlock(Block &blk, int64_t reduceLimit, int64_t gatherLimit) {
    std::array<Bucket, NumKinds> open;
    for (int k = 0; k < NumKinds; ++k)
      open[k].kind = Kind(k);
    SmallVector<Bucket> done;
    // The gathers that open the block, with nothing before them but what
    // prepares their inputs and nothing using what they gather (a step's
    // parameters gathered ahead of its forward): their buckets run one
    // after another and the first is waited for at once, so the k-th holds
    // at most 2^k times the first gather's elements (within the limit),
    // and the first wait is for a small bucket only.
    DenseSet<Value> gatherInputs;
    for (auto g : blk.getOps<AllGatherOp>())
      if (Value root = rootBuffer(g.getInput()))
        gatherInputs.insert(root);
    bool leadingGathers = true;
    int64_t firstGather = 0, gatherBuckets = 0;
    auto close = [&](Bucket &bk) {
      if (bk.members.size() >= 2)
        done.push_back(std::move(bk));
      Kind k = bk.kind;
      bk = Bucket{};
      bk.kind = k;
    };
    for (Operation &op : llvm::make_early_inc_range(blk)) {
      bool waits = false;
      // A result may not be touched before its bucket has run, except by
      // a copy or a linalg op whose outputs nothing touches, and whose
      // other inputs nothing writes, until then: it runs after the bucket.
      for (Bucket &bk : open) {
        if (touchesViews(&op, bk.deferredTargets) ||
            mayWrite(&op, bk.deferredSources)) {
          leadingGathers &= bk.kind != AllGather || bk.members.empty();
          close(bk);
          continue;
        }
        if (!touchesViews(&op, bk.outViews))
          continue;
        SmallVector<Value> writes, reads;
        if (deferrable(&op, bk, writes, reads)) {
          waits = true;
          bk.deferred.push_back(&op);
          for (Value w : writes)
            collectViews(rootBuffer(w), bk.deferredTargets);
          for (Value r : reads)
            if (Value root = rootBuffer(r))
              collectViews(root, bk.deferredSources);
          continue;
        }
        leadingGathers &= bk.kind != AllGather;
        close(bk);
      }
      Kind kind;
      if (isa<AllReduceOp>(op))
        kind = AllReduce;
      else if (isa<ReduceScatterOp>(op))
        kind = ReduceScatter;
      else if (isa<AllGatherOp>(op))
        kind = AllGather;
      else {
        if (leadingGathers && !waits)
          leadingGathers = preparesOnly(&op, gatherInputs);
        continue;
      }
      Value in = op.getOperand(0), out = op.getOperand(1);
      auto ws = op.getAttrOfType<IntegerAttr>("world_size");
      int64_t limit = kind == AllGather ? gatherLimit : reduceLimit;
      if (!ws || !flatCandidate(in, kind == ReduceScatter) ||
          !flatCandidate(out, kind == AllGather) || op.getNumResults() ||
          limit <= 0)
        continue;
      int64_t n = ws.getInt();
      Type elt = cast<MemRefType>(in.getType()).getElementType();
      // Elements per rank: the gathered shard, the scattered shard, or
      // the reduced buffer.
      int64_t count = cast<CollectiveOpInterface>(op).getCountPerRank();
      // The limit counts whole tensors (DeepSpeed's bucket sizes count the
      // gradient or parameter elements a bucket holds), N parts each; a
      // bucket holds one element type, so its bytes are the limit times
      // that type's size.
      int64_t whole = kind == AllReduce ? count : count * n;
      Bucket &bk = open[kind];
      bool ramp = kind == AllGather && leadingGathers;
      if (ramp && !firstGather)
        firstGather = whole;
      int64_t cap = limit;
      if (ramp)
        cap =
            std::min(cap, firstGather << std::min<int64_t>(gatherBuckets, 20));
      if (!bk.members.empty() && (bk.worldSize != n || bk.elementType != elt ||
                                  bk.wholeElements + whole > cap)) {
        gatherBuckets += ramp;
        close(bk);
      }
      if (whole > limit)
        continue;
      Member m{&op, in, out, count, {}};
      collectViews(rootBuffer(out), m.outViews);
      bk.outViews.insert(m.outViews.begin(), m.outViews.end());
      bk.worldSize = n;
      bk.elementType = elt;
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
