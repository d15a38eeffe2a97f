//===- FormAttention.cpp - scores, softmax and values as one op -*- C++ -*-===//
//
// An imported attention is a score GEMM, a scale, a causal mask, a softmax
// and a GEMM with the values: the scores and probabilities of [Tq, Tk]
// each reach memory, and differentiation keeps them for the backward.
// Formed before differentiation, zero.attention keeps only each row's
// log-sum-exp, and its derivative rule gives zero.attention_grad, which
// computes the probabilities again.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/Masks.h"
#include "zero-opt/Dialect/Zero/Utils/TosaBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROFORMATTENTION
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

/// What `v` is a reshape of, through any number of reshapes.
Value skipReshapes(Value v) {
  while (auto r = v.getDefiningOp<tosa::ReshapeOp>())
    v = r.getInput1();
  return v;
}

/// The value of a constant splat (through reshapes), if `v` is one.
std::optional<double> splatValue(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(skipReshapes(v), m_Constant(&attr)) || !attr.isSplat() ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToDouble();
}

/// The one user of `v`, if it has exactly one.
Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// `v3` (`[N, a, b]`) as a reshape of a transpose by `perms` of a rank-4
/// `x`, where the reshape only merges the first two dimensions.
struct MergedHeads {
  Value x;
  ArrayRef<int32_t> perms;
};
std::optional<MergedHeads> mergedHeads(Value v3) {
  auto r = v3.getDefiningOp<tosa::ReshapeOp>();
  if (!r)
    return std::nullopt;
  auto t = r.getInput1().getDefiningOp<tosa::TransposeOp>();
  auto in = cast<RankedTensorType>(r.getInput1().getType());
  ArrayRef<int64_t> v = cast<RankedTensorType>(v3.getType()).getShape();
  if (!t || in.getRank() != 4 || in.getShape().drop_front(2) != v.drop_front())
    return std::nullopt;
  return MergedHeads{t.getInput1(), t.getPerms()};
}

/// The attention's operands as the heads of their projections lie:
/// `[B, T, H, D]` (or any order of B, T and H) where the imported graph
/// transposes them to `[B, H, T, D]` and merges B and H; the rows'
/// dimension of them all, and the transpose that gives the output in the
/// same layout.
struct Lifted {
  Value q, k, v;
  tosa::TransposeOp out;
  int64_t rowsDim;
};

/// A dropout of the probabilities: the importer's mask (its draw), the
/// kept values' factor, and the shape of the mask's leading dimensions.
struct Dropout {
  DropoutMaskAttr mask;
  double scale;
  SmallVector<int64_t> lead;
};

/// One attention found in the forward function.
struct Match {
  tosa::MatMulOp scores, values;
  tosa::CastOp out;
  double scale = 1;
  bool causal = false;
  Location loc;
  /// Its ops from the last to the first.
  SmallVector<Operation *> chain;
  std::optional<Lifted> lifted;
  std::optional<Dropout> dropout;
};

/// The dimensions of `shape` but the rows' and the depth.
SmallVector<int64_t> leadOf(ArrayRef<int64_t> shape, int64_t rowsDim) {
  SmallVector<int64_t> lead(shape.drop_back());
  lead.erase(lead.begin() + rowsDim);
  return lead;
}

/// Whether `v` is computed from `rng` and constants alone.
bool drawnFrom(Value v, Value rng, unsigned depth = 0) {
  if (v == rng)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 8 || def->getNumRegions() || !isPure(def))
    return false;
  if (matchPattern(v, m_Constant()))
    return true;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return drawnFrom(operand, rng, depth + 1);
  });
}

/// `m`'s operands without the transposes to `[B, H, T, D]`, if each is
/// one of a value in a layout they share (depth last) and the output goes
/// back to it.
std::optional<Lifted> lift(Match &m) {
  std::optional<MergedHeads> q = mergedHeads(m.scores.getA()),
                             kT = mergedHeads(m.scores.getB()),
                             v = mergedHeads(m.values.getB());
  if (!q || !kT || !v)
    return std::nullopt;
  // q and v: [B, H, T, D] of x; kT: [B, H, D, T]; B and H in x's order.
  ArrayRef<int32_t> pq = q->perms, pk = kT->perms;
  if (pq != v->perms || pq[3] != 3 || pq[0] > pq[1] || pk[2] != 3 ||
      pk[3] != pq[2] || pk[0] != pq[0] || pk[1] != pq[1])
    return std::nullopt;
  auto shape = [](Value x) {
    return cast<RankedTensorType>(x.getType()).getShape();
  };
  SmallVector<int64_t> keyShape(shape(q->x));
  keyShape[pq[2]] = shape(kT->x)[pq[2]];
  if (shape(kT->x) != ArrayRef(keyShape) || shape(v->x) != shape(kT->x))
    return std::nullopt;
  // The output: reshaped to [B, H, T, D], then transposed back to x's
  // layout.
  auto r = dyn_cast_or_null<tosa::ReshapeOp>(soleUser(m.out.getResult()));
  auto back = r ? dyn_cast_or_null<tosa::TransposeOp>(soleUser(r.getResult()))
                : nullptr;
  if (!back || shape(back.getResult()) != shape(q->x))
    return std::nullopt;
  for (int64_t i = 0; i < 4; ++i)
    if (pq[back.getPerms()[i]] != i)
      return std::nullopt;
  return Lifted{q->x, kT->x, v->x, back, pq[2]};
}

struct ZeroFormAttentionPass
    : zero::impl::ZeroFormAttentionBase<ZeroFormAttentionPass> {
  using Base::Base;

  /// Masks already checked: each layer's select reads the same one.
  DenseMap<Attribute, bool> causalMasks;
  /// The function's counter of random draws, if it has one.
  Value rng;

  /// The dropout that `select` (of `scaled`, the probabilities times a
  /// factor, and zero) applies, if it is the importer's over the
  /// probabilities' shape `shape`, drawn from the function's counter.
  std::optional<Dropout> dropoutOf(tosa::SelectOp select, tosa::MulOp scaled,
                                   Value p, ArrayRef<int64_t> shape) {
    std::optional<double> factor = splatValue(scaled.getInput2());
    if (scaled.getInput1() != p || !factor || !scaled->hasOneUse() ||
        select.getInput2() != scaled.getResult() ||
        splatValue(select.getInput3()) != 0.0)
      return std::nullopt;
    auto draw = select.getInput1().getDefiningOp<linalg::GenericOp>();
    auto mask =
        draw ? draw->getAttrOfType<DropoutMaskAttr>(kDropoutMaskAttr) : nullptr;
    if (!mask || !rng || draw.getNumDpsInputs() != 0 ||
        draw->getNumResults() != 1 ||
        cast<ShapedType>(draw->getResult(0).getType()).getShape() != shape)
      return std::nullopt;
    // The draw counts its rows and elements from its own indices and the
    // counter: nothing else reaches its body.
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(draw.getRegion(), captured);
    for (Value v : captured)
      if (!drawnFrom(v, rng))
        return std::nullopt;
    return Dropout{mask, *factor, SmallVector<int64_t>(shape.drop_back(2))};
  }

  /// Whether constant `mask` (broadcast to `[..., rows, keys]`), true
  /// where `hiddenWhen`, hides exactly the keys after each query.
  bool isCausal(Value mask, bool hiddenWhen, int64_t rows, int64_t keys) {
    DenseElementsAttr attr;
    if (!matchPattern(skipReshapes(mask), m_Constant(&attr)) ||
        !attr.getElementType().isInteger(1))
      return false;
    auto t = cast<ShapedType>(mask.getType());
    if (t.getRank() < 2 || t.getShape().take_back(2) != ArrayRef{rows, keys})
      return false;
    auto [it, fresh] = causalMasks.try_emplace(attr, false);
    if (fresh) {
      bool ok = true;
      int64_t i = 0;
      for (bool bit : attr.getValues<bool>()) {
        int64_t at = i++ % (rows * keys);
        ok &= (bit == hiddenWhen) == (at % keys > at / keys);
        if (!ok)
          break;
      }
      it->second = ok;
    }
    return it->second;
  }

  /// The attention whose softmax is `softmax`, if it is one the pass forms.
  std::optional<Match> match(linalg::SoftmaxOp softmax) {
    auto sType = cast<RankedTensorType>(softmax.getInput().getType());
    int64_t rank = sType.getRank();
    if (!softmax.hasPureTensorSemantics() ||
        softmax.getDimension() != uint64_t(rank - 1) || rank < 3)
      return std::nullopt;
    Type elem = sType.getElementType();
    if (!elem.isBF16() && !elem.isF16())
      return std::nullopt;
    int64_t rows = sType.getDimSize(rank - 2),
            keys = sType.getDimSize(rank - 1);
    Match m{{}, {}, {}, 1, false, softmax.getLoc(), {}, {}, {}};

    // Back from the softmax: the mask, the scale, the rounded product.
    Value x = softmax.getInput();
    if (auto select = x.getDefiningOp<tosa::SelectOp>()) {
      bool hiddenWhen = true;
      Value kept = select.getInput3();
      std::optional<double> fill = splatValue(select.getInput2());
      if (!fill || *fill > maxFill) {
        hiddenWhen = false;
        kept = select.getInput2();
        fill = splatValue(select.getInput3());
      }
      if (!fill || *fill > maxFill || !select->hasOneUse() ||
          !isCausal(select.getInput1(), hiddenWhen, rows, keys))
        return std::nullopt;
      m.causal = true;
      m.chain.push_back(select);
      x = kept;
    }
    if (auto mul = x.getDefiningOp<tosa::MulOp>()) {
      std::optional<double> s = splatValue(mul.getInput2());
      Value scores = mul.getInput1();
      if (!s) {
        s = splatValue(mul.getInput1());
        scores = mul.getInput2();
      }
      if (!s || !mul->hasOneUse())
        return std::nullopt;
      m.scale = *s;
      m.chain.push_back(mul);
      x = scores;
    }
    if (auto r = x.getDefiningOp<tosa::ReshapeOp>()) {
      if (!r->hasOneUse())
        return std::nullopt;
      m.chain.push_back(r);
      x = r.getInput1();
    }
    auto rounded = x.getDefiningOp<tosa::CastOp>();
    if (!rounded || !rounded->hasOneUse())
      return std::nullopt;
    m.scores = rounded.getInput().getDefiningOp<tosa::MatMulOp>();
    if (!m.scores || !m.scores->hasOneUse())
      return std::nullopt;
    m.chain.append({rounded, m.scores});

    // Forward from it: a dropout, the product with the values, rounded.
    Value p = softmax->getResult(0);
    SmallVector<Operation *> chain{softmax};
    if (auto scaled = dyn_cast_or_null<tosa::MulOp>(soleUser(p))) {
      auto select =
          dyn_cast_or_null<tosa::SelectOp>(soleUser(scaled.getResult()));
      if (!select ||
          !(m.dropout = dropoutOf(select, scaled, p, sType.getShape())))
        return std::nullopt;
      chain.append({scaled, select});
      p = select.getResult();
    }
    if (auto r = dyn_cast_or_null<tosa::ReshapeOp>(soleUser(p))) {
      chain.push_back(r);
      p = r.getResult();
    }
    m.values = dyn_cast_or_null<tosa::MatMulOp>(soleUser(p));
    if (!m.values || m.values.getA() != p)
      return std::nullopt;
    m.out = dyn_cast_or_null<tosa::CastOp>(soleUser(m.values.getResult()));
    if (!m.out)
      return std::nullopt;
    // Last to first, each op's one use the next: dead once the rounded
    // product is replaced.
    chain.append({m.values, m.out});
    m.chain.insert(m.chain.begin(), chain.rbegin(), chain.rend());

    // Shapes: q [N, Tq, D], kT [N, D, Tk], v [N, Tk, D]; 16-bit alike.
    auto q = cast<RankedTensorType>(m.scores.getA().getType());
    auto kT = cast<RankedTensorType>(m.scores.getB().getType());
    auto v = cast<RankedTensorType>(m.values.getB().getType());
    auto out = cast<RankedTensorType>(m.out.getType());
    if (!q.hasStaticShape() || !kT.hasStaticShape() || !v.hasStaticShape())
      return std::nullopt;
    int64_t pairs = q.getDimSize(0), depth = q.getDimSize(2);
    if (q.getElementType() != elem || kT.getElementType() != elem ||
        v.getElementType() != elem || out.getElementType() != elem ||
        rounded.getType().getElementType() != elem)
      return std::nullopt;
    if (q.getDimSize(1) != rows || kT.getDimSize(2) != keys ||
        kT.getDimSize(1) != depth || v.getDimSize(1) != keys ||
        v.getDimSize(2) != depth ||
        sType.getNumElements() != pairs * rows * keys)
      return std::nullopt;
    if (m.causal && rows != keys)
      return std::nullopt;
    if (rows % block || keys % block || depth % depthMultiple ||
        depth > maxDepth || pairs > maxPairs)
      return std::nullopt;
    m.loc =
        FusedLoc::get(softmax.getContext(),
                      {m.scores.getLoc(), softmax.getLoc(), m.values.getLoc()});
    m.lifted = lift(m);
    // The mask's leading dimensions must be the op's other dimensions:
    // where the merged pairs are, the op takes the mask's split of them.
    if (m.dropout && m.lifted &&
        leadOf(cast<RankedTensorType>(m.lifted->q.getType()).getShape(),
               m.lifted->rowsDim) != ArrayRef(m.dropout->lead))
      m.lifted.reset();
    if (m.dropout && !m.lifted) {
      int64_t split = 1;
      for (int64_t d : m.dropout->lead)
        split *= d;
      if (split != pairs)
        return std::nullopt;
    }
    return m;
  }

  void runOnOperation() override {
    for (auto [value, name] : {std::pair<int64_t, StringRef>{block, "block"},
                               {depthMultiple, "depth-multiple"},
                               {maxDepth, "max-depth"},
                               {maxPairs, "max-pairs"}})
      if (value < 1) {
        getOperation()->emitError() << name << " must be at least 1";
        return signalPassFailure();
      }
    if (failed(zero::checkMaxFill(getOperation(), maxFill)))
      return signalPassFailure();
    rng = nullptr;
    func::FuncOp fn = getOperation();
    for (BlockArgument arg : fn.getArguments())
      if (auto role =
              fn.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), kRoleAttr);
          role && role.getValue() == Role::rng)
        rng = arg;
    SmallVector<Match> found;
    getOperation().walk([&](linalg::SoftmaxOp op) {
      if (std::optional<Match> m = match(op))
        found.push_back(*m);
    });
    for (Match &m : found) {
      // Where the values' product was: every operand is defined by then.
      OpBuilder b(m.values);
      Value q, k, v, result;
      IntegerAttr seqDim;
      if (m.lifted) {
        q = m.lifted->q;
        k = m.lifted->k;
        v = m.lifted->v;
        result = m.lifted->out.getResult();
        seqDim = b.getI64IntegerAttr(m.lifted->rowsDim);
      } else {
        TosaBuilder tb(b, m.loc);
        q = m.scores.getA();
        k = tb.transpose(m.scores.getB(), {0, 2, 1});
        v = m.values.getB();
        result = m.out.getResult();
        // The pairs split as the dropout mask's rows and heads are.
        if (m.dropout) {
          auto split = [&](Value x) {
            SmallVector<int64_t> shape(m.dropout->lead);
            llvm::append_range(
                shape,
                cast<RankedTensorType>(x.getType()).getShape().drop_front());
            return tb.reshape(x, shape);
          };
          q = split(q);
          k = split(k);
          v = split(v);
        }
      }
      auto qType = cast<RankedTensorType>(q.getType());
      Value out = tensor::EmptyOp::create(b, m.loc, qType.getShape(),
                                          qType.getElementType());
      Value lse = tensor::EmptyOp::create(
          b, m.loc, qType.getShape().drop_back(), b.getF32Type());
      DropoutMaskAttr draw;
      FloatAttr factor;
      SmallVector<Value> rngWords;
      if (m.dropout) {
        draw = m.dropout->mask;
        factor = b.getF64FloatAttr(m.dropout->scale);
        for (int64_t i : {0, 1})
          rngWords.push_back(tensor::ExtractOp::create(
              b, m.loc, rng,
              ValueRange{arith::ConstantIndexOp::create(b, m.loc, i)}));
      }
      auto attention = AttentionOp::create(
          b, m.loc, TypeRange{out.getType(), lse.getType()}, q, k, v, out, lse,
          b.getF64FloatAttr(m.scale), m.causal ? b.getUnitAttr() : UnitAttr(),
          seqDim, draw, factor, rngWords);
      Value o = attention.getResult(0);
      if (m.dropout && !m.lifted)
        o = TosaBuilder(b, m.loc).reshape(
            o, cast<RankedTensorType>(result.getType()).getShape());
      result.replaceAllUsesWith(o);
      if (m.lifted) {
        Operation *reshape = m.lifted->out.getInput1().getDefiningOp();
        m.lifted->out->erase();
        reshape->erase();
      }
      for (Operation *op : m.chain)
        op->erase();
    }
  }
};

} // namespace
