//===- SplitMaskedMatmuls.cpp - GEMMs skip what a mask hides ----*- C++ -*-===//
//
// A causal attention's score GEMMs write or read whole [T, T] matrices of
// which the constant mask hides half: the scores and their gradient are
// read only where the mask keeps them, the probabilities and theirs are
// zero where it hides. Each such GEMM becomes blocks of rows (or columns),
// each over the range of the other loop that the mask leaves.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Utils/Masks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROSPLITMASKEDMATMULS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// A GEMM on tensors: A, B, their and C's maps, the loops' extents, its
/// row (M), column (N) and reduction (K) loop, and, for a linalg
/// contraction, the value its destination is filled with (a
/// `zero.rounded_matmul` does not read its destination).
struct Gemm {
  Operation *op = nullptr;
  Value a, b;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> ranges;
  int64_t m = -1, n = -1, k = -1;
  Value fill;
};

std::optional<Gemm> matchGemm(Operation *op) {
  Gemm g;
  g.op = op;
  if (auto r = dyn_cast<zero::RoundedMatmulOp>(op)) {
    if (r->getNumResults() != 1 || r.getAccumulate())
      return std::nullopt;
    g.a = r.getA();
    g.b = r.getB();
    g.maps = r.getIndexingMapsArray();
    g.ranges = r.getStaticLoopRanges();
  } else if (auto l = dyn_cast<linalg::LinalgOp>(op)) {
    if (!linalg::isaContractionOpInterface(l) || !l.hasPureTensorSemantics() ||
        l.getNumDpsInputs() != 2 || l.getNumDpsInits() != 1 ||
        op->getNumResults() != 1)
      return std::nullopt;
    auto fill = l.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    if (!fill || !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      return std::nullopt;
    g.fill = fill.getInputs()[0];
    g.a = l.getDpsInputs()[0];
    g.b = l.getDpsInputs()[1];
    g.maps = l.getIndexingMapsArray();
    g.ranges = l.getStaticLoopRanges();
  } else {
    return std::nullopt;
  }
  if (g.maps.size() != 3 || llvm::any_of(g.ranges, ShapedType::isDynamic) ||
      llvm::any_of(g.maps, [](AffineMap m) {
        return !m.isProjectedPermutation(/*allowZeroInResults=*/false);
      }))
    return std::nullopt;
  for (int64_t loop = 0, e = g.ranges.size(); loop < e; ++loop) {
    bool inA = g.maps[0].isFunctionOfDim(loop);
    bool inB = g.maps[1].isFunctionOfDim(loop);
    bool inC = g.maps[2].isFunctionOfDim(loop);
    int64_t *role = inA && inC && !inB   ? &g.m
                    : inB && inC && !inA ? &g.n
                    : inA && inB && !inC ? &g.k
                                         : nullptr;
    if (role) {
      if (*role >= 0)
        return std::nullopt;
      *role = loop;
    } else if (!(inA && inB && inC)) {
      return std::nullopt;
    }
  }
  if (g.m < 0 || g.n < 0 || g.k < 0)
    return std::nullopt;
  return g;
}

/// Per row of a `rows` x `cols` matrix over two loops of a GEMM, the
/// columns some mask element keeps, as their hull [lo, hi) (none where
/// lo >= hi): a block's range is the hull of its rows' anyway.
struct Coverage {
  int64_t rows, cols;
  std::vector<std::pair<int64_t, int64_t>> hull;
  Coverage(int64_t rows, int64_t cols)
      : rows(rows), cols(cols), hull(rows, {cols, 0}) {}
  void add(int64_t x, int64_t lo, int64_t hi) {
    hull[x].first = std::min(hull[x].first, lo);
    hull[x].second = std::max(hull[x].second, hi);
  }
};

/// The hull, per index along mask dimension `dp` (one row if none), of
/// the indices along `dq` (0 if none) of the elements equal to `value`.
/// Kept: every layer asks about the same mask.
class MaskHulls {
public:
  ArrayRef<std::pair<int64_t, int64_t>> get(DenseElementsAttr mask, int64_t dp,
                                            int64_t dq, bool value) {
    auto [it, inserted] =
        hulls.try_emplace({mask, dp, dq, unsigned(value)}, HullRows{});
    if (inserted)
      it->second = compute(mask, dp, dq, value);
    return it->second;
  }

private:
  using HullRows = std::vector<std::pair<int64_t, int64_t>>;
  static HullRows compute(DenseElementsAttr mask, int64_t dp, int64_t dq,
                          bool value) {
    ArrayRef<int64_t> shape = cast<ShapedType>(mask.getType()).getShape();
    int64_t hr = dp >= 0 ? shape[dp] : 1, hc = dq >= 0 ? shape[dq] : 1;
    HullRows rows(hr, {hc, 0});
    if (mask.isSplat()) {
      if (mask.getSplatValue<bool>() == value)
        rows.assign(hr, {0, hc});
      return rows;
    }
    SmallVector<int64_t> strides(shape.size(), 1);
    for (int64_t d = int64_t(shape.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    int64_t index = 0;
    for (bool bit : mask.getValues<bool>()) {
      if (bit == value) {
        int64_t x = dp >= 0 ? index / strides[dp] % shape[dp] : 0;
        int64_t y = dq >= 0 ? index / strides[dq] % shape[dq] : 0;
        rows[x].first = std::min(rows[x].first, y);
        rows[x].second = std::max(rows[x].second, y + 1);
      }
      ++index;
    }
    return rows;
  }

  DenseMap<std::tuple<Attribute, int64_t, int64_t, unsigned>, HullRows> hulls;
};

/// Marks in `c` (over GEMM loops `p`, `q`) where an element of `mask`
/// equals `value`; `dimLoops[d]` is the GEMM loop that mask dimension `d`
/// follows (-1: none, any place along it). False when the mask's extents
/// do not match the loops'.
bool markMask(MaskHulls &hulls, DenseElementsAttr mask,
              ArrayRef<int64_t> dimLoops, bool value, int64_t p, int64_t q,
              Coverage &c) {
  ArrayRef<int64_t> shape = cast<ShapedType>(mask.getType()).getShape();
  int64_t dp = -1, dq = -1;
  for (auto [d, loop] : llvm::enumerate(dimLoops)) {
    if (loop == p)
      dp = d;
    if (loop == q)
      dq = d;
  }
  if ((dp >= 0 && shape[dp] != c.rows) || (dq >= 0 && shape[dq] != c.cols))
    return false;
  ArrayRef<std::pair<int64_t, int64_t>> rows = hulls.get(mask, dp, dq, value);
  for (int64_t x = 0; x < c.rows; ++x) {
    auto [lo, hi] = rows[dp >= 0 ? x : 0];
    if (lo < hi)
      c.add(x, dq >= 0 ? lo : 0, dq >= 0 ? hi : c.cols);
  }
  return true;
}

/// The mask operand of `g` that decides a select's condition `cond` (the
/// element itself, or its `xori` with true), and whether it is negated.
OpOperand *maskOperandOf(linalg::GenericOp g, Value cond, bool &negated) {
  cond = zero::withoutNegation(cond, negated);
  auto arg = dyn_cast<BlockArgument>(cond);
  if (!arg || arg.getOwner() != g.getBody())
    return nullptr;
  OpOperand *operand = g.getMatchingOpOperand(arg);
  DenseElementsAttr bits;
  if (!g.isDpsInput(operand) ||
      !matchPattern(operand->get(), m_Constant(&bits)) ||
      !bits.getElementType().isInteger(1))
    return nullptr;
  return operand;
}

/// Marks in `c` (over loops `p`, `q` of the op whose result `use` reads,
/// `resultMap` its loops to the result's dimensions) where `use`'s consumer
/// keeps that result: its body takes the element, through pure elementwise
/// ops, only into one side of selects on constant masks. False when some
/// use of it escapes a select.
bool markKeptByUse(MaskHulls &hulls, AffineMap resultMap, OpOperand &use,
                   int64_t p, int64_t q, Coverage &c) {
  auto g = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!g || !g.hasPureTensorSemantics() || !g.isDpsInput(&use))
    return false;
  AffineMap read = g.getMatchingIndexingMap(&use);
  if (!read.isProjectedPermutation())
    return false;
  SmallVector<Value> work{g.getMatchingBlockArgument(&use)};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &u : v.getUses()) {
      Operation *o = u.getOwner();
      if (auto select = dyn_cast<arith::SelectOp>(o)) {
        bool negated;
        OpOperand *mask =
            u.getOperandNumber() == 0
                ? nullptr
                : maskOperandOf(g, select.getCondition(), negated);
        if (!mask)
          return false;
        bool trueSide = u.getOperandNumber() == 1;
        // The loop each mask dimension follows, through the loop of the
        // consumer that reads that dimension of the result.
        AffineMap maskMap = g.getMatchingIndexingMap(mask);
        SmallVector<int64_t> dimLoops;
        for (AffineExpr e : maskMap.getResults()) {
          int64_t loop = -1;
          if (auto d = dyn_cast<AffineDimExpr>(e))
            if (std::optional<unsigned> j = read.getResultPosition(d))
              loop = resultMap.getDimPosition(*j);
          dimLoops.push_back(loop);
        }
        DenseElementsAttr bits;
        (void)matchPattern(mask->get(), m_Constant(&bits));
        if (!markMask(hulls, bits, dimLoops, trueSide != negated, p, q, c))
          return false;
        continue;
      }
      if (o->getBlock() != g.getBody() || o->getNumRegions() != 0 ||
          isa<linalg::YieldOp>(o) || !isPure(o))
        return false;
      for (Value r : o->getResults())
        work.push_back(r);
    }
  }
  return true;
}

/// How a GEMM is split: blocks of loop `split`, each over part of loop
/// `bounded` ([lo, hi); empty where nothing is kept).
struct Split {
  int64_t split, bounded;
  struct Block {
    int64_t begin, end, lo, hi;
  };
  SmallVector<Block> blocks;
  double share = 1;
};

std::optional<Split> blocksOf(const Coverage &c, int64_t split, int64_t bounded,
                              int64_t minRows, int64_t maxBlocks) {
  int64_t count =
      std::min<int64_t>(maxBlocks, c.rows / std::max<int64_t>(minRows, 1));
  if (count < 2)
    return std::nullopt;
  // Multiples of 8 rows keep 16-bit tensor-core tiles whole.
  int64_t size = (c.rows + count - 1) / count;
  if (size >= 8)
    size = llvm::alignTo(size, 8);
  Split s{split, bounded, {}, 0};
  int64_t work = 0;
  for (int64_t begin = 0; begin < c.rows; begin += size) {
    int64_t end = std::min(c.rows, begin + size), lo = c.cols, hi = 0;
    for (int64_t x = begin; x < end; ++x) {
      lo = std::min(lo, c.hull[x].first);
      hi = std::max(hi, c.hull[x].second);
    }
    if (lo >= hi)
      lo = hi = 0;
    s.blocks.push_back({begin, end, lo, hi});
    work += (end - begin) * (hi - lo);
  }
  s.share = double(work) / double(c.rows * c.cols);
  return s;
}

/// The best split of `gemm`: by an operand's zeros, or by where its users
/// keep its result. None when no split saves a tenth of the work.
std::optional<Split> planSplit(const Gemm &gemm, int64_t minRows,
                               int64_t maxBlocks, double maxFill,
                               zero::MaskSliceCheck &slices, MaskHulls &hulls) {
  std::optional<Split> best;
  auto consider = [&](std::optional<Split> s) {
    if (s && s->share <= 0.9 && (!best || s->share < best->share))
      best = s;
  };
  // An operand zero where a mask hides: its parallel loop's blocks take
  // the reduction's range where it is not.
  for (auto [x, map, p] : {std::tuple(gemm.a, gemm.maps[0], gemm.m),
                           std::tuple(gemm.b, gemm.maps[1], gemm.n)}) {
    std::optional<zero::ZeroMask> zeros =
        zero::maskedZerosOf(x, map, maxFill, slices);
    if (!zeros)
      continue;
    SmallVector<int64_t> dimLoops;
    for (AffineExpr e : zeros->map.getResults()) {
      auto d = dyn_cast<AffineDimExpr>(e);
      dimLoops.push_back(d ? int64_t(d.getPosition()) : -1);
    }
    Coverage c(gemm.ranges[p], gemm.ranges[gemm.k]);
    if (markMask(hulls, zeros->values, dimLoops, !zeros->zeroWhen, p, gemm.k,
                 c))
      consider(blocksOf(c, p, gemm.k, minRows, maxBlocks));
  }
  // A result its users keep only where masks do.
  Value result = gemm.op->getResult(0);
  if (result.use_empty())
    return best;
  for (std::pair<int64_t, int64_t> loops :
       {std::pair(gemm.m, gemm.n), std::pair(gemm.n, gemm.m)}) {
    auto [p, q] = loops;
    Coverage c(gemm.ranges[p], gemm.ranges[q]);
    if (llvm::all_of(result.getUses(), [&](OpOperand &use) {
          return markKeptByUse(hulls, gemm.maps[2], use, loops.first,
                               loops.second, c);
        }))
      consider(blocksOf(c, p, q, minRows, maxBlocks));
  }
  return best;
}

/// Offsets and sizes of the operand read through `map` over the loops'
/// ranges [lo, hi).
void sliceOf(AffineMap map, ArrayRef<int64_t> lo, ArrayRef<int64_t> hi,
             OpBuilder &b, SmallVectorImpl<OpFoldResult> &offsets,
             SmallVectorImpl<OpFoldResult> &sizes) {
  for (unsigned j = 0; j < map.getNumResults(); ++j) {
    unsigned loop = map.getDimPosition(j);
    offsets.push_back(b.getIndexAttr(lo[loop]));
    sizes.push_back(b.getIndexAttr(hi[loop] - lo[loop]));
  }
}

Value extract(OpBuilder &b, Location loc, Value v, AffineMap map,
              ArrayRef<int64_t> lo, ArrayRef<int64_t> hi) {
  SmallVector<OpFoldResult> offsets, sizes;
  sliceOf(map, lo, hi, b, offsets, sizes);
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// The GEMM as its blocks, written into one empty tensor.
void applySplit(const Gemm &gemm, const Split &split) {
  Operation *op = gemm.op;
  Location loc = op->getLoc();
  OpBuilder b(op);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  // Not a tensor.empty: slices of one fold into empty tensors of their
  // own, each block then written apart and copied in.
  Value acc = bufferization::AllocTensorOp::create(b, loc, type, ValueRange{});
  for (const Split::Block &block : split.blocks) {
    bool reduced = split.bounded == gemm.k;
    // Nothing kept of an output block: it is never written.
    if (block.lo == block.hi && !reduced)
      continue;
    SmallVector<int64_t> lo(gemm.ranges.size(), 0), hi(gemm.ranges);
    lo[split.split] = block.begin;
    hi[split.split] = block.end;
    lo[split.bounded] = block.lo;
    hi[split.bounded] = block.hi;
    SmallVector<OpFoldResult> offsets, sizes;
    sliceOf(gemm.maps[2], lo, hi, b, offsets, sizes);
    SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
    Value dest =
        tensor::ExtractSliceOp::create(b, loc, acc, offsets, sizes, strides);
    Value value;
    if (block.lo == block.hi) {
      // A sum of no terms: the fill, or a rounded zero.
      Value zero = gemm.fill
                       ? gemm.fill
                       : arith::ConstantOp::create(
                             b, loc, b.getZeroAttr(type.getElementType()));
      value = linalg::FillOp::create(b, loc, zero, dest).getResult(0);
    } else {
      Value init = dest;
      if (gemm.fill)
        init = linalg::FillOp::create(b, loc, gemm.fill, dest).getResult(0);
      // The operands as they are now: an earlier split may have replaced
      // one.
      Value a = extract(b, loc, op->getOperand(0), gemm.maps[0], lo, hi);
      Value bb = extract(b, loc, op->getOperand(1), gemm.maps[1], lo, hi);
      Operation *part =
          clone(b, op, TypeRange{init.getType()}, ValueRange{a, bb, init});
      value = part->getResult(0);
    }
    acc = tensor::InsertSliceOp::create(b, loc, value, acc, offsets, sizes,
                                        strides);
  }
  Value oldInit = cast<DestinationStyleOpInterface>(op).getDpsInits()[0];
  op->getResult(0).replaceAllUsesWith(acc);
  op->erase();
  if (auto fill = oldInit.getDefiningOp<linalg::FillOp>())
    if (fill->use_empty()) {
      oldInit = fill.getOutputs()[0];
      fill->erase();
    }
  if (auto empty = oldInit.getDefiningOp<tensor::EmptyOp>())
    if (empty->use_empty())
      empty->erase();
}

/// Where a parallel generic's result (a [..., R, C] tensor) is read, per
/// row of its last two dimensions: the static slices its uses take (a split
/// GEMM's blocks) and what consumers keep under constant masks. Set as
/// `zero::kWrittenRegionAttr` when that leaves a tenth of the result
/// unread, in at most `kMaxRuns` runs of rows: a target may then leave
/// the rest unwritten.
constexpr size_t kMaxRuns = 16;

void markWrittenRegion(linalg::GenericOp g, MaskHulls &hulls) {
  if (!g.hasPureTensorSemantics() || g->getNumResults() != 1 ||
      g.getNumReductionLoops() != 0 ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity())
    return;
  auto type = dyn_cast<RankedTensorType>(g->getResult(0).getType());
  if (!type || !type.hasStaticShape() || type.getRank() < 2)
    return;
  int64_t n = type.getRank(), p = n - 2, q = n - 1;
  Value x = g->getResult(0);
  if (x.use_empty())
    return;
  Coverage c(type.getDimSize(p), type.getDimSize(q));
  AffineMap identity = AffineMap::getMultiDimIdentityMap(n, g.getContext());
  for (OpOperand &use : x.getUses()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner())) {
      ArrayRef<int64_t> offsets = slice.getStaticOffsets(),
                        sizes = slice.getStaticSizes();
      if (!slice.hasUnitStride() ||
          llvm::any_of(offsets, ShapedType::isDynamic) ||
          llvm::any_of(sizes, ShapedType::isDynamic))
        return;
      for (int64_t r = offsets[p]; r < offsets[p] + sizes[p]; ++r)
        c.add(r, offsets[q], offsets[q] + sizes[q]);
      continue;
    }
    if (!markKeptByUse(hulls, identity, use, p, q, c))
      return;
  }
  zero::WrittenRegion w{c.rows, c.cols, {}};
  for (int64_t r = 0; r < c.rows; ++r) {
    auto [lo, hi] = c.hull[r];
    if (lo >= hi)
      lo = hi = 0;
    w.append({r + 1, lo, hi});
  }
  if (w.runs.size() > kMaxRuns || w.share() > 0.9)
    return;
  g->setAttr(zero::kWrittenRegionAttr,
             DenseI64ArrayAttr::get(g.getContext(), w.flat()));
}

struct ZeroSplitMaskedMatmulsPass
    : zero::impl::ZeroSplitMaskedMatmulsBase<ZeroSplitMaskedMatmulsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (minRows < 1 || maxBlocks < 1) {
      getOperation()->emitError()
          << (minRows < 1 ? "min-rows" : "max-blocks") << " must be at least 1";
      return signalPassFailure();
    }
    if (failed(zero::checkMaxFill(getOperation(), maxFill)))
      return signalPassFailure();
    SmallVector<Gemm> gemms;
    getOperation()->walk([&](Operation *op) {
      if (std::optional<Gemm> g = matchGemm(op))
        gemms.push_back(*g);
    });
    zero::MaskSliceCheck slices;
    MaskHulls hulls;
    // Planned first: a split GEMM's result no longer reads as the
    // producer of the next one's operand, so later plans see the old IR.
    SmallVector<std::pair<Gemm, Split>> splits;
    for (const Gemm &g : gemms)
      if (std::optional<Split> s =
              planSplit(g, minRows, maxBlocks, maxFill, slices, hulls))
        splits.push_back({g, *s});
    for (auto &[g, s] : splits)
      applySplit(g, s);
    // After the splits: their blocks are the slices the region is read in.
    getOperation()->walk(
        [&](linalg::GenericOp g) { markWrittenRegion(g, hulls); });
  }
};
} // namespace
