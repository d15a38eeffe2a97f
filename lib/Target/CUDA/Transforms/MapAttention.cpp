//===- MapAttention.cpp - attention as one tensor-core kernel --*- C++ -*-===//
//
// zero.attention on buffers becomes one launch that never writes the
// scores: a block per 64 query rows of one (batch, head), a warp per 16 of
// them. A warp keeps its queries' fragments in registers and walks the
// keys 64 at a time (up to its diagonal when causal): the block's scores
// are tensor-core products (nvgpu.mma.sync m16n8k16), each row keeps its
// running maximum and sum (the row's values lie in the four lanes of a
// quad, which two shuffles combine), and the block's probabilities, left
// in the scores' registers, are the A operand of their product with the
// values, added to accumulators rescaled whenever the maximum moves. Only
// the output and each row's log-sum-exp reach memory.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUMAPATTENTION
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// Query rows a block takes, a warp, and keys a step of the walk.
constexpr int64_t kBlockRows = 64, kWarpRows = 16, kKeyBlock = 64;
constexpr int64_t kWarps = kBlockRows / kWarpRows;

/// The (batch, head) pairs of `t` (`[..., rows, depth]`).
int64_t pairsOf(ShapedType t) {
  int64_t pairs = 1;
  for (int64_t d : t.getShape().drop_back(2))
    pairs *= d;
  return pairs;
}

/// Why `op` has no kernel here, or empty.
std::string unsupported(zero::AttentionOp op) {
  auto q = dyn_cast<MemRefType>(op.getQuery().getType());
  if (!q)
    return "it is on tensors (bufferize first)";
  Type elem = q.getElementType();
  if (!elem.isBF16() && !elem.isF16())
    return "its element type is not bf16 or f16 (tensor-core products)";
  int64_t rank = q.getRank();
  int64_t depth = q.getShape().back();
  int64_t rows = q.getShape()[rank - 2];
  int64_t keys = cast<MemRefType>(op.getKey().getType()).getShape()[rank - 2];
  if (depth % 16 || depth > 128)
    return "its depth " + std::to_string(depth) +
           " is not a multiple of 16 up to 128";
  if (rows % kBlockRows || keys % kKeyBlock)
    return "its " + std::to_string(rows) + " queries and " +
           std::to_string(keys) + " keys are not multiples of 64";
  int64_t batch = pairsOf(q);
  if (batch > 65535)
    return std::to_string(batch) + " (batch, head) pairs are more than a "
                                   "grid's y holds";
  for (Value v : op->getOperands()) {
    auto t = cast<MemRefType>(v.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(t.getStridesAndOffset(strides, offset)) || strides.back() != 1)
      return "an operand's last dimension is not contiguous";
  }
  return "";
}

/// Builds the kernel of one zero.attention in place of it.
struct Builder {
  OpBuilder &b;
  Location loc;
  Type elem, f32 = b.getF32Type(), i32 = b.getI32Type();

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value f32c(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value addIndex(Value x, int64_t c) { return c ? add(x, index(c)) : x; }
  VectorType vec(ArrayRef<int64_t> shape, Type t) {
    return VectorType::get(shape, t);
  }
  /// The maximum or sum of row `r` (g or g + 8) over `tiles`: the
  /// thread's pairs, then its quad's four lanes (4g .. 4g + 3).
  Value rowReduce(ArrayRef<Value> tiles, int64_t r, bool max) {
    auto combine = [&](Value x, Value y) -> Value {
      if (max)
        return arith::MaximumFOp::create(b, loc, x, y);
      return arith::AddFOp::create(b, loc, x, y);
    };
    Value x;
    for (Value tile : tiles) {
      Value pair = vector::ReductionOp::create(
          b, loc,
          max ? vector::CombiningKind::MAXIMUMF : vector::CombiningKind::ADD,
          rows(tile, r));
      x = x ? combine(x, pair) : pair;
    }
    Value width = arith::ConstantIntOp::create(b, loc, i32, 32);
    for (int64_t offset : {1, 2}) {
      Value o = arith::ConstantIntOp::create(b, loc, i32, offset);
      auto s =
          gpu::ShuffleOp::create(b, loc, x, o, width, gpu::ShuffleMode::XOR);
      x = combine(x, s.getShuffleResult());
    }
    return x;
  }
  /// A value per row of a tile (g, g + 8) spread over its 2x2 layout.
  Value perRow(Value r0, Value r1) {
    SmallVector<Value> elems{r0, r0, r1, r1};
    return vector::FromElementsOp::create(b, loc, vec({2, 2}, f32), elems);
  }
  /// Row `r` (g or g + 8) of a tile: the thread's pair in it.
  Value rows(Value x, int64_t r) {
    return vector::ExtractOp::create(b, loc, x, r);
  }
};

void lower(zero::AttentionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto qTy = cast<MemRefType>(op.getQuery().getType());
  Builder k{b, loc, qTy.getElementType()};
  int64_t rank = qTy.getRank();
  ArrayRef<int64_t> lead = qTy.getShape().drop_back(2);
  int64_t rows = qTy.getShape()[rank - 2], depth = qTy.getShape().back();
  int64_t keys = cast<MemRefType>(op.getKey().getType()).getShape()[rank - 2];
  int64_t batch = pairsOf(qTy);
  int64_t kSteps = depth / 16, nTiles = depth / 8;
  MLIRContext *ctx = b.getContext();
  Type f32 = k.f32, elem = k.elem;

  auto blocks = scf::ForallOp::create(
      b, loc,
      SmallVector<OpFoldResult>{b.getIndexAttr(rows / kBlockRows),
                                b.getIndexAttr(batch)},
      ValueRange{},
      b.getArrayAttr(
          {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
           gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY)}));
  b.setInsertionPoint(blocks.getBody()->getTerminator());
  Value qBlock = blocks.getInductionVar(0), pair = blocks.getInductionVar(1);
  auto threads = scf::ForallOp::create(
      b, loc, SmallVector<OpFoldResult>{b.getIndexAttr(kWarps * 32)},
      ValueRange{},
      b.getArrayAttr(
          {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
  b.setInsertionPoint(threads.getBody()->getTerminator());
  Value tid = threads.getInductionVar(0);

  // Where this thread is: its warp's rows, its quad (g) and place in it (t).
  Value warp = arith::DivUIOp::create(b, loc, tid, k.index(32));
  Value lane = arith::RemUIOp::create(b, loc, tid, k.index(32));
  Value g = arith::DivUIOp::create(b, loc, lane, k.index(4));
  Value t = arith::RemUIOp::create(b, loc, lane, k.index(4));
  Value t2 = k.mul(t, k.index(2));
  Value row0 = k.add(k.add(k.mul(qBlock, k.index(kBlockRows)),
                           k.mul(warp, k.index(kWarpRows))),
                     g);
  Value row1 = k.addIndex(row0, 8);
  SmallVector<Value> at; // the leading dimensions' indices
  if (!lead.empty()) {
    if (lead.size() == 1) {
      at.push_back(pair);
    } else {
      auto split = affine::AffineDelinearizeIndexOp::create(b, loc, pair, lead);
      llvm::append_range(at, split.getResults());
    }
  }
  auto point = [&](Value r, Value c) {
    SmallVector<Value> idx(at);
    idx.push_back(r);
    if (c)
      idx.push_back(c);
    return idx;
  };
  auto pairAt = [&](Value buffer, Value r, Value c) -> Value {
    return vector::LoadOp::create(b, loc, k.vec({2}, elem), buffer,
                                  point(r, c));
  };
  auto fragment = [&](ArrayRef<Value> regs, Type t) -> Value {
    Value f = ub::PoisonOp::create(b, loc, k.vec({int64_t(regs.size()), 2}, t));
    for (auto [i, r] : llvm::enumerate(regs))
      f = vector::InsertOp::create(b, loc, r, f, int64_t(i));
    return f;
  };

  // The warp's queries as A fragments, one per 16 of the depth: register
  // r holds row g + 8 (r % 2), columns 2t + 8 (r / 2) and the next.
  SmallVector<Value> qFrags;
  for (int64_t s = 0; s < kSteps; ++s) {
    Value c0 = k.addIndex(t2, 16 * s), c1 = k.addIndex(c0, 8);
    qFrags.push_back(fragment(
        {pairAt(op.getQuery(), row0, c0), pairAt(op.getQuery(), row1, c0),
         pairAt(op.getQuery(), row0, c1), pairAt(op.getQuery(), row1, c1)},
        elem));
  }

  Value lowest = k.f32c(-std::numeric_limits<double>::infinity());
  Value zero = k.f32c(0.0);
  Value zeroTile = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(k.vec({2, 2}, f32), 0.0f));
  SmallVector<Value> inits{lowest, lowest, zero, zero};
  inits.append(nTiles, zeroTile);
  Value steps =
      op.getCausal() ? k.addIndex(qBlock, 1) : k.index(keys / kKeyBlock);
  Value scale = k.f32c(op.getScale().convertToDouble());
  auto walk = scf::ForOp::create(b, loc, k.index(0), steps, k.index(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(walk.getBody());
    Value kb = walk.getInductionVar();
    ValueRange carried = walk.getRegionIterArgs();
    Value first = k.mul(kb, k.index(kKeyBlock));

    // Scores of 8 tiles of 8 keys: tile j's B fragment for depth step s is
    // key first + 8j + g, depth 16s + 2t + 8r (register r) and the next.
    Value scales =
        vector::BroadcastOp::create(b, loc, zeroTile.getType(), scale);
    SmallVector<Value> tiles;
    for (int64_t j = 0; j < kKeyBlock / 8; ++j) {
      Value key = k.add(k.addIndex(first, 8 * j), g);
      Value acc = zeroTile;
      for (int64_t s = 0; s < kSteps; ++s) {
        Value c0 = k.addIndex(t2, 16 * s);
        Value bFrag = fragment({pairAt(op.getKey(), key, c0),
                                pairAt(op.getKey(), key, k.addIndex(c0, 8))},
                               elem);
        acc = nvgpu::MmaSyncOp::create(b, loc, qFrags[s], bFrag, acc,
                                       ArrayRef<int64_t>{16, 8, 16});
      }
      acc = arith::MulFOp::create(b, loc, acc, scales);
      if (op.getCausal()) {
        // Element (r, h) is row g + 8r, key first + 8j + 2t + h.
        Value keyBase = k.add(k.addIndex(first, 8 * j), t2);
        SmallVector<Value> elems;
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t h = 0; h < 2; ++h) {
            Value s =
                vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{r, h});
            Value past =
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                      k.addIndex(keyBase, h), r ? row1 : row0);
            elems.push_back(arith::SelectOp::create(b, loc, past, lowest, s));
          }
        acc = vector::FromElementsOp::create(b, loc, acc.getType(), elems);
      }
      tiles.push_back(acc);
    }

    // Each row's new maximum (the quad's), the factor the old sums and
    // accumulators take, the probabilities and the new sum.
    SmallVector<Value> alphas, rowMax, rowBase;
    for (int64_t r = 0; r < 2; ++r) {
      Value m = k.rowReduce(tiles, r, /*max=*/true);
      Value mNew = arith::MaximumFOp::create(b, loc, carried[r], m);
      // A row with nothing kept yet subtracts 0, not -inf (no NaN).
      Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         mNew, lowest);
      Value base = arith::SelectOp::create(b, loc, none, zero, mNew);
      alphas.push_back(math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, carried[r], base)));
      rowMax.push_back(mNew);
      rowBase.push_back(base);
    }
    Value bases = k.perRow(rowBase[0], rowBase[1]);
    SmallVector<Value> probs;
    for (Value tile : tiles)
      probs.push_back(math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, tile, bases)));
    SmallVector<Value> next{rowMax[0], rowMax[1]};
    for (int64_t r = 0; r < 2; ++r) {
      Value sum = k.rowReduce(probs, r, /*max=*/false);
      next.push_back(arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, carried[2 + r], alphas[r]),
          sum));
    }

    // Accumulators rescaled, then the probabilities times the values: for
    // 16 keys at a time, the A fragment is two score tiles' registers as
    // they lie (rows g, g + 8; keys 2t, 2t + 1 and 8 on), rounded; value
    // tile n's B fragment is keys 2t + 8r and the next, column 8n + g.
    Value scaleBy = k.perRow(alphas[0], alphas[1]);
    SmallVector<Value> acc;
    for (int64_t n = 0; n < nTiles; ++n)
      acc.push_back(arith::MulFOp::create(b, loc, carried[4 + n], scaleBy));
    for (int64_t kk = 0; kk < kKeyBlock / 16; ++kk) {
      Value lo = probs[2 * kk], hi = probs[2 * kk + 1];
      Value aFrag = arith::TruncFOp::create(
          b, loc, k.vec({4, 2}, elem),
          fragment({k.rows(lo, 0), k.rows(lo, 1), k.rows(hi, 0), k.rows(hi, 1)},
                   f32));
      Value key = k.add(k.addIndex(first, 16 * kk), t2);
      for (int64_t n = 0; n < nTiles; ++n) {
        Value col = k.addIndex(g, 8 * n);
        SmallVector<Value> vs;
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t h = 0; h < 2; ++h)
            vs.push_back(memref::LoadOp::create(
                b, loc, op.getValue(), point(k.addIndex(key, 8 * r + h), col)));
        Value bFrag =
            vector::FromElementsOp::create(b, loc, k.vec({2, 2}, elem), vs);
        acc[n] = nvgpu::MmaSyncOp::create(b, loc, aFrag, bFrag, acc[n],
                                          ArrayRef<int64_t>{16, 8, 16});
      }
    }
    next.append(acc.begin(), acc.end());
    scf::YieldOp::create(b, loc, next);
  }

  // Each accumulator over its row's sum, rounded; each row's log-sum-exp
  // from the quad's first lane.
  ValueRange done = walk.getResults();
  Value inv0 = arith::DivFOp::create(b, loc, k.f32c(1.0), done[2]);
  Value inv1 = arith::DivFOp::create(b, loc, k.f32c(1.0), done[3]);
  Value norm = k.perRow(inv0, inv1);
  for (int64_t n = 0; n < nTiles; ++n) {
    Value out = arith::TruncFOp::create(
        b, loc, k.vec({2, 2}, elem),
        arith::MulFOp::create(b, loc, done[4 + n], norm));
    Value col = k.addIndex(t2, 8 * n);
    for (int64_t r = 0; r < 2; ++r)
      vector::StoreOp::create(b, loc, k.rows(out, r), op.getOut(),
                              point(r ? row1 : row0, col));
  }
  Value lead0 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t, k.index(0));
  auto ifLead = scf::IfOp::create(b, loc, lead0);
  b.setInsertionPoint(ifLead.thenBlock()->getTerminator());
  for (int64_t r = 0; r < 2; ++r) {
    Value lse = arith::AddFOp::create(b, loc, done[r],
                                      math::LogOp::create(b, loc, done[2 + r]));
    memref::StoreOp::create(b, loc, lse, op.getLse(),
                            point(r ? row1 : row0, Value()));
  }
  op.erase();
}

struct ZeroGPUMapAttentionPass
    : zero::cuda::impl::ZeroGPUMapAttentionBase<ZeroGPUMapAttentionPass> {
  void runOnOperation() override {
    SmallVector<zero::AttentionOp> ops;
    getOperation().walk([&](zero::AttentionOp op) { ops.push_back(op); });
    for (zero::AttentionOp op : ops) {
      auto kernel = dyn_cast<func::FuncOp>(op->getParentOp());
      if (!kernel || !kernel->hasAttr(zero::kKernelAttr)) {
        op.emitError("zero.attention is not in a kernel function's body "
                     "(zero-form-kernels makes them)");
        return signalPassFailure();
      }
      if (std::string why = unsupported(op); !why.empty()) {
        op.emitError("zero.attention has no CUDA kernel: ") << why;
        return signalPassFailure();
      }
      lower(op);
    }
  }
};

} // namespace
