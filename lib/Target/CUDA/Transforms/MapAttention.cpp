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
#include "zero-opt/Dialect/Zero/Utils/Philox.h"

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

/// The sizes of an attention over `query` (`[..., rows, depth]`, the rows
/// at `rowsDim`) and `key` (`[..., keys, depth]`) buffers; `lead` are the
/// other dimensions (batch, heads).
struct Sizes {
  Type elem;
  SmallVector<int64_t> lead;
  int64_t rows, keys, depth, rowsDim;
};
Sizes sizesOf(Operation *op) {
  auto q = cast<MemRefType>(op->getOperand(0).getType());
  int64_t rowsDim = zero::attentionRowsDim(op);
  SmallVector<int64_t> lead(q.getShape().drop_back());
  lead.erase(lead.begin() + rowsDim);
  return {q.getElementType(),
          lead,
          q.getShape()[rowsDim],
          cast<MemRefType>(op->getOperand(1).getType()).getShape()[rowsDim],
          q.getShape().back(),
          rowsDim};
}

/// Why `op` (zero.attention or its gradient) has no kernel here, or empty.
std::string unsupported(Operation *op) {
  if (!isa<MemRefType>(op->getOperand(0).getType()))
    return "it is on tensors (bufferize first)";
  auto [elem, lead, rows, keys, depth, rowsDim] = sizesOf(op);
  if (!elem.isBF16() && !elem.isF16())
    return "its element type is not bf16 or f16 (tensor-core products)";
  if (depth % 16 || depth > 128)
    return "its depth " + std::to_string(depth) +
           " is not a multiple of 16 up to 128";
  if (rows % kBlockRows || keys % kKeyBlock)
    return "its " + std::to_string(rows) + " queries and " +
           std::to_string(keys) + " keys are not multiples of 64";
  int64_t batch = 1;
  for (int64_t d : lead)
    batch *= d;
  if (batch > 65535)
    return std::to_string(batch) + " (batch, head) pairs are more than a "
                                   "grid's y holds";
  for (Value v : op->getOperands()) {
    // The dropout's step and micro-batch are scalars.
    auto t = dyn_cast<MemRefType>(v.getType());
    if (!t)
      continue;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(t.getStridesAndOffset(strides, offset)) || strides.back() != 1)
      return "an operand's last dimension is not contiguous";
  }
  return "";
}

/// One thread of a kernel of four warps over m16n8k16 tensor-core products
/// (nvgpu.mma.sync), and what the attention kernels build from. A product's
/// rows are a warp's 16: the thread holds rows g and g + 8 (g = lane / 4),
/// and its place in its quad, t (lane % 4), picks the column pairs 2t and
/// 2t + 8. A tile is a [2, 2] f32 accumulator: rows g and g + 8, columns
/// 2t and 2t + 1 of 8.
struct Kernel {
  OpBuilder &b;
  Location loc;
  Type elem;
  int64_t depth, rowsDim;
  Type f32 = b.getF32Type(), i32 = b.getI32Type();
  /// The block's x and the (batch, head) pair; the thread's warp, g, t, 2t.
  Value blockX, pair, warp, g, t, t2;
  /// The other dimensions' indices of the pair.
  SmallVector<Value> at;

  /// Opens a grid of `blocksX` x (pairs of `sizes.lead`) blocks of 128
  /// threads before `op` and leaves the builder in the thread's body.
  Kernel(OpBuilder &b, Operation *op, const Sizes &sizes, int64_t blocksX)
      : b(b), loc(op->getLoc()), elem(sizes.elem), depth(sizes.depth),
        rowsDim(sizes.rowsDim) {
    ArrayRef<int64_t> lead = sizes.lead;
    MLIRContext *ctx = b.getContext();
    int64_t pairs = 1;
    for (int64_t d : lead)
      pairs *= d;
    auto blocks = scf::ForallOp::create(
        b, loc,
        SmallVector<OpFoldResult>{b.getIndexAttr(blocksX),
                                  b.getIndexAttr(pairs)},
        ValueRange{},
        b.getArrayAttr(
            {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
             gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY)}));
    b.setInsertionPoint(blocks.getBody()->getTerminator());
    blockX = blocks.getInductionVar(0);
    pair = blocks.getInductionVar(1);
    auto threads = scf::ForallOp::create(
        b, loc, SmallVector<OpFoldResult>{b.getIndexAttr(kWarps * 32)},
        ValueRange{},
        b.getArrayAttr(
            {gpu::GPUThreadMappingAttr::get(ctx, gpu::MappingId::DimX)}));
    b.setInsertionPoint(threads.getBody()->getTerminator());
    Value tid = threads.getInductionVar(0);
    warp = arith::DivUIOp::create(b, loc, tid, index(32));
    Value lane = arith::RemUIOp::create(b, loc, tid, index(32));
    g = arith::DivUIOp::create(b, loc, lane, index(4));
    t = arith::RemUIOp::create(b, loc, lane, index(4));
    t2 = mul(t, index(2));
    if (lead.size() == 1) {
      at.push_back(pair);
    } else if (lead.size() > 1) {
      auto split = affine::AffineDelinearizeIndexOp::create(b, loc, pair, lead);
      llvm::append_range(at, split.getResults());
    }
  }

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
  Value zeroTile() {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vec({2, 2}, f32), 0.0f));
  }
  /// The first of this thread's rows of the warp's 16 in a block of 64
  /// starting at row `block` * 64.
  Value firstRow(Value block) {
    return add(add(mul(block, index(kBlockRows)), mul(warp, index(kWarpRows))),
               g);
  }

  /// Indices of row `r` and column `c` (none for a row value) of the pair.
  SmallVector<Value> point(Value r, Value c) {
    SmallVector<Value> idx(at);
    idx.insert(idx.begin() + rowsDim, r);
    if (c)
      idx.push_back(c);
    return idx;
  }
  /// Elements `c` and `c + 1` of row `r`.
  Value pairAt(Value buffer, Value r, Value c) {
    Type t = cast<MemRefType>(buffer.getType()).getElementType();
    return vector::LoadOp::create(b, loc, vec({2}, t), buffer, point(r, c));
  }
  Value fragment(ArrayRef<Value> regs, Type t) {
    Value f = ub::PoisonOp::create(b, loc, vec({int64_t(regs.size()), 2}, t));
    for (auto [i, r] : llvm::enumerate(regs))
      f = vector::InsertOp::create(b, loc, r, f, int64_t(i));
    return f;
  }

  /// The A fragments of 16 rows of `buffer` from `row0` (g of them), one
  /// per 16 of the depth: register r holds row g + 8 (r % 2), columns
  /// 2t + 8 (r / 2) and the next.
  SmallVector<Value> aFragments(Value buffer, Value row0) {
    Value row1 = addIndex(row0, 8);
    SmallVector<Value> frags;
    for (int64_t s = 0; s < depth / 16; ++s) {
      Value c0 = addIndex(t2, 16 * s), c1 = addIndex(c0, 8);
      frags.push_back(
          fragment({pairAt(buffer, row0, c0), pairAt(buffer, row1, c0),
                    pairAt(buffer, row0, c1), pairAt(buffer, row1, c1)},
                   elem));
    }
    return frags;
  }

  /// 8 tiles of the products of 16 rows (`a`, their A fragments) with
  /// rows `first` .. `first` + 63 of `buffer` over the depth: tile j's B
  /// fragment for depth step s is row first + 8j + g, depth 16s + 2t + 8r
  /// (register r) and the next.
  SmallVector<Value> products(ArrayRef<Value> a, Value buffer, Value first) {
    SmallVector<Value> tiles;
    for (int64_t j = 0; j < kKeyBlock / 8; ++j) {
      Value row = add(addIndex(first, 8 * j), g);
      Value acc = zeroTile();
      for (int64_t s = 0; s < depth / 16; ++s) {
        Value c0 = addIndex(t2, 16 * s);
        Value bFrag = fragment(
            {pairAt(buffer, row, c0), pairAt(buffer, row, addIndex(c0, 8))},
            elem);
        acc = nvgpu::MmaSyncOp::create(b, loc, a[s], bFrag, acc,
                                       ArrayRef<int64_t>{16, 8, 16});
      }
      tiles.push_back(acc);
    }
    return tiles;
  }

  /// `acc` (depth / 8 tiles) plus the 8 tiles `x` (16 rows by 64),
  /// rounded, times rows `first` .. `first` + 63 of `buffer`: for 16 of
  /// the 64 at a time, the A fragment is two of x's tiles' registers as
  /// they lie (rows g, g + 8; columns 2t, 2t + 1 and 8 on); output tile
  /// n's B fragment is rows 2t + 8r and the next, column 8n + g.
  void accumulate(MutableArrayRef<Value> acc, ArrayRef<Value> x, Value buffer,
                  Value first) {
    for (int64_t kk = 0; kk < kKeyBlock / 16; ++kk) {
      Value lo = x[2 * kk], hi = x[2 * kk + 1];
      Value aFrag = arith::TruncFOp::create(
          b, loc, vec({4, 2}, elem),
          fragment({rows(lo, 0), rows(lo, 1), rows(hi, 0), rows(hi, 1)}, f32));
      Value row = add(addIndex(first, 16 * kk), t2);
      for (int64_t n = 0; n < int64_t(acc.size()); ++n) {
        Value col = addIndex(g, 8 * n);
        SmallVector<Value> vs;
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t h = 0; h < 2; ++h)
            vs.push_back(memref::LoadOp::create(
                b, loc, buffer, point(addIndex(row, 8 * r + h), col)));
        Value bFrag =
            vector::FromElementsOp::create(b, loc, vec({2, 2}, elem), vs);
        acc[n] = nvgpu::MmaSyncOp::create(b, loc, aFrag, bFrag, acc[n],
                                          ArrayRef<int64_t>{16, 8, 16});
      }
    }
  }

  /// Stores tiles `acc` (depth / 8 of them) times `factor` (if any),
  /// rounded, as rows `row0` and `row0` + 8 of `buffer`.
  void store(ArrayRef<Value> acc, Value factor, Value buffer, Value row0) {
    for (auto [n, tile] : llvm::enumerate(acc)) {
      Value x = factor ? arith::MulFOp::create(b, loc, tile, factor) : tile;
      Value out = arith::TruncFOp::create(b, loc, vec({2, 2}, elem), x);
      Value col = addIndex(t2, 8 * int64_t(n));
      for (int64_t r = 0; r < 2; ++r)
        vector::StoreOp::create(b, loc, rows(out, r), buffer,
                                point(addIndex(row0, 8 * r), col));
    }
  }

  /// The first of this thread's columns of tile j of the 8 from row or
  /// column `first`: first + 8j + 2t.
  Value tileColumn(Value first, int64_t j) {
    return add(addIndex(first, 8 * j), t2);
  }

  /// `tile` with `replacement` where column (`col` + h) `pred` row
  /// (`row0` + 8r) holds.
  Value mask(Value tile, Value row0, Value col, arith::CmpIPredicate pred,
             Value replacement) {
    SmallVector<Value> elems;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t h = 0; h < 2; ++h) {
        Value x =
            vector::ExtractOp::create(b, loc, tile, ArrayRef<int64_t>{r, h});
        Value hit = arith::CmpIOp::create(b, loc, pred, addIndex(col, h),
                                          addIndex(row0, 8 * r));
        elems.push_back(arith::SelectOp::create(b, loc, hit, replacement, x));
      }
    return vector::FromElementsOp::create(b, loc, tile.getType(), elems);
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
  /// The values of a row vector (`[..., rows]`) at rows `row0`, `row0` + 8
  /// spread over a tile.
  Value rowValues(Value buffer, Value row0) {
    return perRow(memref::LoadOp::create(b, loc, buffer, point(row0, Value())),
                  memref::LoadOp::create(b, loc, buffer,
                                         point(addIndex(row0, 8), Value())));
  }
  /// A row vector's values at columns `col` and `col` + 1 spread over a
  /// tile (the same for both rows).
  Value columnValues(Value buffer, Value col) {
    Value c0, c1;
    // Adjacent rows are adjacent in memory only where the rows come last.
    if (rowsDim == int64_t(at.size())) {
      Value pair = pairAt(buffer, col, Value());
      c0 = vector::ExtractOp::create(b, loc, pair, int64_t(0));
      c1 = vector::ExtractOp::create(b, loc, pair, int64_t(1));
    } else {
      c0 = memref::LoadOp::create(b, loc, buffer, point(col, Value()));
      c1 = memref::LoadOp::create(b, loc, buffer,
                                  point(addIndex(col, 1), Value()));
    }
    SmallVector<Value> elems{c0, c1, c0, c1};
    return vector::FromElementsOp::create(b, loc, vec({2, 2}, f32), elems);
  }
  /// Row `r` (g or g + 8) of a tile: the thread's pair in it.
  Value rows(Value x, int64_t r) {
    return vector::ExtractOp::create(b, loc, x, r);
  }

  /// A dropout's mask in the pair: the draw, the kept values' factor as a
  /// tile, the pair's row of the global batch and the step (i32), its
  /// first element over the rows (the other dimensions' offset times the
  /// queries), and the keys a row.
  struct Draw {
    zero::DropoutMaskAttr mask;
    Value factor, row, step, base;
    int64_t keys;
  };
  /// The pair's draw of `dropout` over `queries` x `keys` scores: the first
  /// other dimension counts the mask's rows, the rest (with the queries
  /// and keys) its elements, as the importer's mask of that shape does.
  Draw draw(const zero::AttentionDropout &dropout, ArrayRef<int64_t> lead,
            int64_t queries, int64_t keys) {
    Type i64 = b.getI64Type();
    Value step = arith::TruncIOp::create(b, loc, i32, dropout.step);
    Value rowBase = arith::MulIOp::create(
        b, loc, dropout.microBatch,
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(lead[0])));
    Value row = arith::TruncIOp::create(
        b, loc, i32,
        arith::AddIOp::create(b, loc, rowBase,
                              arith::IndexCastOp::create(b, loc, i64, at[0])));
    Value base = lead.size() > 1 ? at[1] : index(0);
    for (size_t d = 2; d < lead.size(); ++d)
      base = add(mul(base, index(lead[d])), at[d]);
    base = mul(base, index(queries));
    Value factor = vector::BroadcastOp::create(b, loc, vec({2, 2}, f32),
                                               f32c(dropout.scale));
    return {dropout.mask, factor, row, step, base, keys};
  }
  /// The keep flags of a tile whose rows are queries `row0`, `row0` + 8
  /// and whose columns are keys `col`, `col` + 1 (`transposed`: rows of
  /// keys, columns of queries).
  Value kept(const Draw &d, Value row0, Value col, bool transposed) {
    SmallVector<Value> elems;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t h = 0; h < 2; ++h) {
        Value i = addIndex(row0, 8 * r), j = addIndex(col, h);
        if (transposed)
          std::swap(i, j);
        Value e = add(mul(add(d.base, i), index(d.keys)), j);
        elems.push_back(arith::IndexCastOp::create(b, loc, i32, e));
      }
    VectorType words = vec({2, 2}, i32);
    Value elem = vector::FromElementsOp::create(b, loc, words, elems);
    Value row = vector::BroadcastOp::create(b, loc, words, d.row);
    Value step = vector::BroadcastOp::create(b, loc, words, d.step);
    return zero::buildDropoutKeep(b, loc, elem, row, step, d.mask.getSeed(),
                                  d.mask.getStream(), d.mask.getKeep());
  }
  /// `tile` dropped out by `keep`: times the factor where kept, else 0.
  Value dropped(const Draw &d, Value tile, Value keep) {
    return arith::SelectOp::create(
        b, loc, keep, arith::MulFOp::create(b, loc, tile, d.factor),
        zeroTile());
  }
};

void lower(zero::AttentionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Sizes sizes = sizesOf(op);
  auto [elem, lead, rows, keys, depth, rowsDim] = sizes;
  Kernel k(b, op, sizes, rows / kBlockRows);
  std::optional<Kernel::Draw> draw;
  if (std::optional<zero::AttentionDropout> d = zero::attentionDropout(op))
    draw = k.draw(*d, lead, rows, keys);
  Value qBlock = k.blockX;
  Value row0 = k.firstRow(qBlock), row1 = k.addIndex(row0, 8);
  SmallVector<Value> qFrags = k.aFragments(op.getQuery(), row0);

  Value lowest = k.f32c(-std::numeric_limits<double>::infinity());
  Value zero = k.f32c(0.0);
  Value zeroTile = k.zeroTile();
  SmallVector<Value> inits{lowest, lowest, zero, zero};
  inits.append(depth / 8, zeroTile);
  Value steps =
      op.getCausal() ? k.addIndex(qBlock, 1) : k.index(keys / kKeyBlock);
  Value scales = vector::BroadcastOp::create(
      b, loc, zeroTile.getType(), k.f32c(op.getScale().convertToDouble()));
  auto walk = scf::ForOp::create(b, loc, k.index(0), steps, k.index(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(walk.getBody());
    ValueRange carried = walk.getRegionIterArgs();
    Value first = k.mul(walk.getInductionVar(), k.index(kKeyBlock));

    // Scores of 8 tiles of 8 keys, scaled, keys past the row masked.
    SmallVector<Value> tiles = k.products(qFrags, op.getKey(), first);
    for (int64_t j = 0; j < int64_t(tiles.size()); ++j) {
      tiles[j] = arith::MulFOp::create(b, loc, tiles[j], scales);
      if (op.getCausal())
        tiles[j] = k.mask(tiles[j], row0, k.tileColumn(first, j),
                          arith::CmpIPredicate::ugt, lowest);
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

    // Accumulators rescaled, then the probabilities (dropped out: the
    // sums above are the softmax's) times the values.
    Value scaleBy = k.perRow(alphas[0], alphas[1]);
    SmallVector<Value> acc;
    for (Value tile : carried.drop_front(4))
      acc.push_back(arith::MulFOp::create(b, loc, tile, scaleBy));
    if (draw)
      for (int64_t j = 0; j < int64_t(probs.size()); ++j)
        probs[j] = k.dropped(*draw, probs[j],
                             k.kept(*draw, row0, k.tileColumn(first, j),
                                    /*transposed=*/false));
    k.accumulate(acc, probs, op.getValue(), first);
    next.append(acc.begin(), acc.end());
    scf::YieldOp::create(b, loc, next);
  }

  // Each accumulator over its row's sum, rounded; each row's log-sum-exp
  // from the quad's first lane.
  ValueRange done = walk.getResults();
  Value inv0 = arith::DivFOp::create(b, loc, k.f32c(1.0), done[2]);
  Value inv1 = arith::DivFOp::create(b, loc, k.f32c(1.0), done[3]);
  k.store(SmallVector<Value>(done.drop_front(4)), k.perRow(inv0, inv1),
          op.getOut(), row0);
  Value lead0 =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, k.t, k.index(0));
  auto ifLead = scf::IfOp::create(b, loc, lead0);
  b.setInsertionPoint(ifLead.thenBlock()->getTerminator());
  for (int64_t r = 0; r < 2; ++r) {
    Value lse = arith::AddFOp::create(b, loc, done[r],
                                      math::LogOp::create(b, loc, done[2 + r]));
    memref::StoreOp::create(b, loc, lse, op.getLse(),
                            k.point(r ? row1 : row0, Value()));
  }
  op.erase();
}

/// The backward kernel: blocks 0 .. keys / 64 - 1 of the grid's x each
/// take 64 keys (a warp 16 of them) and walk the queries that see them,
/// 64 at a time, summing the keys' and values' gradients; the rest each
/// take 64 queries and walk the keys they see, summing the queries'
/// gradient. Both recompute the probabilities from the scores and the
/// log-sum-exp; neither writes what another block reads, so no block
/// waits for another and no sum depends on their order.
void lower(zero::AttentionGradOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Sizes sizes = sizesOf(op);
  auto [elem, lead, rows, keys, depth, rowsDim] = sizes;
  int64_t keyBlocks = keys / kKeyBlock;
  Kernel k(b, op, sizes, keyBlocks + rows / kBlockRows);
  std::optional<Kernel::Draw> draw;
  if (std::optional<zero::AttentionDropout> d = zero::attentionDropout(op))
    draw = k.draw(*d, lead, rows, keys);
  Value zero = k.f32c(0.0), zeroTile = k.zeroTile();
  Value scale = k.f32c(op.getScale().convertToDouble());
  Value scales = vector::BroadcastOp::create(b, loc, zeroTile.getType(), scale);
  SmallVector<Value> zeros(depth / 8, zeroTile);
  Value isKeys = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       k.blockX, k.index(keyBlocks));
  auto branch = scf::IfOp::create(b, loc, isKeys, /*withElseRegion=*/true);

  // The probabilities of the 8 tiles `scores` (dropped out, for the
  // values' gradient) and the scores' gradients, given the log-sum-exp and
  // delta as tiles (`lse(j)`, `delta(j)` for tile j), with `hidden(tile,
  // j)` masking what causal attention does not see and `keep(j)` the
  // dropout's flags of tile j: the gradient of the dropped-out
  // probabilities `dps` is dropped out before `ds`.
  auto probabilities = [&](ArrayRef<Value> scores, ArrayRef<Value> dps,
                           function_ref<Value(int64_t)> lse,
                           function_ref<Value(int64_t)> delta,
                           function_ref<Value(Value, int64_t)> hidden,
                           function_ref<Value(int64_t)> keep) {
    SmallVector<Value> p, ds;
    for (auto [j, s] : llvm::enumerate(scores)) {
      Value x = arith::SubFOp::create(
          b, loc, arith::MulFOp::create(b, loc, s, scales), lse(j));
      Value pj = math::ExpOp::create(b, loc, x);
      if (op.getCausal())
        pj = hidden(pj, j);
      Value dp = dps[j];
      if (draw) {
        Value flags = keep(j);
        p.push_back(k.dropped(*draw, pj, flags));
        dp = k.dropped(*draw, dp, flags);
      } else {
        p.push_back(pj);
      }
      ds.push_back(arith::MulFOp::create(
          b, loc, pj, arith::SubFOp::create(b, loc, dp, delta(j))));
    }
    return std::make_pair(p, ds);
  };

  // Keys: this warp's 16 keys and values as A fragments; per query block
  // (from the diagonal when causal) the transposed scores K Q^T and
  // probability gradients V dO^T (tile j: queries first + 8j + 2t, + 1),
  // then dV += P^T dO and dK += dS^T Q.
  b.setInsertionPointToStart(branch.thenBlock());
  {
    Value key0 = k.firstRow(k.blockX);
    SmallVector<Value> kFrags = k.aFragments(op.getKey(), key0);
    SmallVector<Value> vFrags = k.aFragments(op.getValue(), key0);
    SmallVector<Value> inits(zeros);
    inits.append(zeros);
    Value from = op.getCausal() ? k.blockX : k.index(0);
    auto walk = scf::ForOp::create(b, loc, from, k.index(rows / kBlockRows),
                                   k.index(1), inits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(walk.getBody());
      Value first = k.mul(walk.getInductionVar(), k.index(kBlockRows));
      auto col = [&](int64_t j) { return k.tileColumn(first, j); };
      SmallVector<Value> sT = k.products(kFrags, op.getQuery(), first);
      SmallVector<Value> dpT = k.products(vFrags, op.getDout(), first);
      auto [pT, dsT] = probabilities(
          sT, dpT,
          [&](int64_t j) { return k.columnValues(op.getLse(), col(j)); },
          [&](int64_t j) { return k.columnValues(op.getDelta(), col(j)); },
          [&](Value x, int64_t j) {
            return k.mask(x, key0, col(j), arith::CmpIPredicate::ult, zero);
          },
          [&](int64_t j) {
            return k.kept(*draw, key0, col(j), /*transposed=*/true);
          });
      SmallVector<Value> dv(walk.getRegionIterArgs().take_front(depth / 8));
      SmallVector<Value> dk(walk.getRegionIterArgs().drop_front(depth / 8));
      k.accumulate(dv, pT, op.getDout(), first);
      k.accumulate(dk, dsT, op.getQuery(), first);
      dv.append(dk);
      scf::YieldOp::create(b, loc, dv);
    }
    ValueRange sums = walk.getResults();
    k.store(SmallVector<Value>(sums.take_front(depth / 8)), Value(),
            op.getDvalue(), key0);
    k.store(SmallVector<Value>(sums.drop_front(depth / 8)), scales,
            op.getDkey(), key0);
  }

  // Queries: this warp's 16 queries and output gradients as A fragments;
  // per key block (to the diagonal when causal) the scores Q K^T and the
  // probability gradients dO V^T, then dQ += dS K.
  b.setInsertionPointToStart(branch.elseBlock());
  {
    Value qBlock = arith::SubIOp::create(b, loc, k.blockX, k.index(keyBlocks));
    Value row0 = k.firstRow(qBlock);
    SmallVector<Value> qFrags = k.aFragments(op.getQuery(), row0);
    SmallVector<Value> doFrags = k.aFragments(op.getDout(), row0);
    Value lse = k.rowValues(op.getLse(), row0);
    Value delta = k.rowValues(op.getDelta(), row0);
    Value steps = op.getCausal() ? k.addIndex(qBlock, 1) : k.index(keyBlocks);
    auto walk =
        scf::ForOp::create(b, loc, k.index(0), steps, k.index(1), zeros);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(walk.getBody());
      Value first = k.mul(walk.getInductionVar(), k.index(kKeyBlock));
      SmallVector<Value> s = k.products(qFrags, op.getKey(), first);
      SmallVector<Value> dp = k.products(doFrags, op.getValue(), first);
      auto [p, ds] = probabilities(
          s, dp, [&](int64_t) { return lse; }, [&](int64_t) { return delta; },
          [&](Value x, int64_t j) {
            return k.mask(x, row0, k.tileColumn(first, j),
                          arith::CmpIPredicate::ugt, zero);
          },
          [&](int64_t j) {
            return k.kept(*draw, row0, k.tileColumn(first, j),
                          /*transposed=*/false);
          });
      SmallVector<Value> dq(walk.getRegionIterArgs());
      k.accumulate(dq, ds, op.getKey(), first);
      scf::YieldOp::create(b, loc, dq);
    }
    k.store(SmallVector<Value>(walk.getResults()), scales, op.getDquery(),
            row0);
  }
  op.erase();
}

struct ZeroGPUMapAttentionPass
    : zero::cuda::impl::ZeroGPUMapAttentionBase<ZeroGPUMapAttentionPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<zero::AttentionOp, zero::AttentionGradOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      auto kernel = dyn_cast<func::FuncOp>(op->getParentOp());
      if (!kernel || !kernel->hasAttr(zero::kKernelAttr)) {
        op->emitError() << op->getName()
                        << " is not in a kernel function's body "
                           "(zero-form-kernels makes them)";
        return signalPassFailure();
      }
      if (std::string why = unsupported(op); !why.empty()) {
        op->emitError() << op->getName() << " has no CUDA kernel: " << why;
        return signalPassFailure();
      }
      if (auto fwd = dyn_cast<zero::AttentionOp>(op))
        lower(fwd);
      else
        lower(cast<zero::AttentionGradOp>(op));
    }
  }
};

} // namespace
