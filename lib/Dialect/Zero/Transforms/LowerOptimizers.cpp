//===- LowerOptimizers.cpp - optimizer ops to fused linalg -----*- C++ -*-===//
//
// The per-step scalars (bias corrections, step sizes) are computed once in
// double precision, as PyTorch computes them in Python floats, and rounded
// to the element type where PyTorch passes them to a tensor kernel. The
// elementwise part follows PyTorch's single-tensor code path op by op.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Utils/TosaBuilder.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROLOWEROPTIMIZERS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
/// Scalar arithmetic helpers on f64 values and element-type values.
struct Scalars {
  OpBuilder &b;
  Location loc;
  Value f64(double v) {
    return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(v));
  }
  Value read(Value tensor0d) {
    return tensor::ExtractOp::create(b, loc, tensor0d, ValueRange{});
  }
  Value add(Value a, Value c) { return arith::AddFOp::create(b, loc, a, c); }
  Value sub(Value a, Value c) { return arith::SubFOp::create(b, loc, a, c); }
  Value mul(Value a, Value c) { return arith::MulFOp::create(b, loc, a, c); }
  Value div(Value a, Value c) { return arith::DivFOp::create(b, loc, a, c); }
  Value pow(Value a, Value c) { return math::PowFOp::create(b, loc, a, c); }
  Value sqrt(Value a) { return math::SqrtOp::create(b, loc, a); }
  /// Rounds an f64 scalar to the element type, as a Python float passed to
  /// a float tensor op is.
  Value to(Value v, Type elt) {
    if (v.getType() == elt)
      return v;
    return arith::TruncFOp::create(b, loc, elt, v);
  }
};

/// One linalg.generic over identity maps: `ins` read, `outs` written; the
/// body gets the ins' and outs' elements and yields the new outs.
Value buildElementwise(
    OpBuilder &b, Location loc, ValueRange ins, ValueRange outs,
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)> body,
    SmallVectorImpl<Value> &results) {
  auto t = cast<RankedTensorType>(outs.front().getType());
  unsigned rank = t.getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(ins.size() + outs.size(), id);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto g = linalg::GenericOp::create(
      b, loc, TypeRange(outs), ins, outs, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, body(nb, nl, args));
      });
  results.assign(g.getResults().begin(), g.getResults().end());
  return g.getResult(0);
}

/// The tensor the update applies to: the master weight when there is one.
Value updated(OptimizerOpInterface op) {
  Value m = op.getMasterWeight();
  return m ? m : op.getParameter();
}

Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// The update of `op` as one generic: `grad` in, the updated tensor and
/// `states` out, and with a master weight the parameter too, written as the
/// rounded master. `body` maps (gradient, updated tensor, states) at the
/// update's precision to their new values. With a gradient multiplier the
/// gradient is multiplied first, and a non-finite multiplier keeps every
/// output as it was (an overflowed fp16 step).
void lowerUpdate(
    OptimizerOpInterface op, OpBuilder &b, ValueRange states,
    function_ref<SmallVector<Value>(Scalars &, Value, Value, ValueRange)>
        body) {
  Value master = op.getMasterWeight();
  Type elt = elementOf(updated(op));
  SmallVector<Value> outs = {updated(op)};
  llvm::append_range(outs, states);
  // The 16-bit copy, unless nothing reads it (a parameter gathered from its
  // master's shards at the next step).
  bool copy = master && !op.getUpdatedParameter().use_empty();
  if (copy)
    outs.push_back(op.getParameter());
  Value scale, keep;
  if (Value gs = op.getGradScaleOperand()) {
    Location loc = op->getLoc();
    Scalars s{b, loc};
    scale = s.read(gs);
    // grad_scale is f32.
    keep = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, loc, scale),
        arith::ConstantOp::create(
            b, loc, b.getF32FloatAttr(std::numeric_limits<float>::infinity())));
    if (scale.getType() != elt)
      scale = arith::ExtFOp::create(b, loc, elt, scale);
  }
  SmallVector<Value> results;
  buildElementwise(
      b, op->getLoc(), ValueRange{op.getGradient()}, outs,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> SmallVector<Value> {
        Scalars e{nb, nl};
        Value g = a[0];
        if (g.getType() != elt)
          g = arith::ExtFOp::create(nb, nl, elt, g);
        if (scale)
          g = e.mul(g, scale);
        SmallVector<Value> out = body(e, g, a[1], a.slice(2, states.size()));
        if (copy)
          out.push_back(arith::TruncFOp::create(
              nb, nl, elementOf(op.getParameter()), out.front()));
        if (keep)
          for (auto [k, v] : llvm::enumerate(out))
            v = arith::SelectOp::create(nb, nl, keep, v, a[1 + k]);
        return out;
      },
      results);
  // The op's results: parameter, states, then the master.
  SmallVector<Value> repl;
  if (master) {
    // An unread copy has no value to replace it with.
    repl.push_back(copy ? results.back() : Value());
    repl.append(results.begin() + 1, results.end() - (copy ? 1 : 0));
    repl.push_back(results.front());
  } else {
    repl = results;
  }
  op->replaceAllUsesWith(repl);
}

LogicalResult lowerAdam(AdamOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  Scalars s{b, loc};
  Type elt = elementOf(updated(op));
  double b1 = op.getBeta1().convertToDouble(),
         b2 = op.getBeta2().convertToDouble();
  double eps = op.getEps().convertToDouble(),
         wd = op.getWeightDecay().convertToDouble();
  bool decoupled = op.getDecoupled();
  Value lr = s.read(op.getLr()), step = s.read(op.getStep());
  Value bc1 = s.sub(s.f64(1.0), s.pow(s.f64(b1), step));
  Value bc2 = s.sub(s.f64(1.0), s.pow(s.f64(b2), step));
  Value negStepSize = s.to(s.div(s.sub(s.f64(0.0), lr), bc1), elt);
  Value bc2Sqrt = s.to(s.sqrt(bc2), elt);
  Value shrink = s.to(s.sub(s.f64(1.0), s.mul(lr, s.f64(wd))), elt);
  Value cb1 = s.to(s.f64(b1), elt), c1mb1 = s.to(s.f64(1.0 - b1), elt);
  Value cb2 = s.to(s.f64(b2), elt), c1mb2 = s.to(s.f64(1.0 - b2), elt);
  Value cEps = s.to(s.f64(eps), elt), cWd = s.to(s.f64(wd), elt);

  lowerUpdate(
      op, b, ValueRange{op.getExpAvg(), op.getExpAvgSq()},
      [&](Scalars &e, Value g, Value p, ValueRange st) -> SmallVector<Value> {
        Value m = st[0], v = st[1];
        if (wd != 0.0) {
          if (decoupled)
            p = e.mul(p, shrink);
          else
            g = e.add(g, e.mul(p, cWd));
        }
        // addcmul / addcdiv evaluate value * t1 * t2 and
        // value * t1 / t2 left to right.
        m = e.add(e.mul(m, cb1), e.mul(c1mb1, g));
        v = e.add(e.mul(v, cb2), e.mul(e.mul(c1mb2, g), g));
        Value denom = e.add(e.div(e.sqrt(v), bc2Sqrt), cEps);
        p = e.add(p, e.div(e.mul(negStepSize, m), denom));
        return {p, m, v};
      });
  return success();
}

LogicalResult lowerSGD(SGDOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  Scalars s{b, loc};
  Type elt = elementOf(updated(op));
  double mu = op.getMomentum().convertToDouble(),
         tau = op.getDampening().convertToDouble(),
         wd = op.getWeightDecay().convertToDouble();
  bool nesterov = op.getNesterov();
  Value lr = s.read(op.getLr()), step = s.read(op.getStep());
  Value negLr = s.to(s.sub(s.f64(0.0), lr), elt);
  Value cWd = s.to(s.f64(wd), elt), cMu = s.to(s.f64(mu), elt);
  Value c1mTau = s.to(s.f64(1.0 - tau), elt);
  // PyTorch starts the buffer as a copy of the first gradient.
  Value first = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, step,
                                      s.f64(1.0));
  SmallVector<Value> states;
  if (op.getMomentumBuffer())
    states.push_back(op.getMomentumBuffer());
  lowerUpdate(
      op, b, states,
      [&](Scalars &e, Value d, Value p, ValueRange st) -> SmallVector<Value> {
        if (wd != 0.0)
          d = e.add(d, e.mul(p, cWd));
        Value buf;
        if (mu != 0.0) {
          Value upd = e.add(e.mul(st[0], cMu), e.mul(d, c1mTau));
          buf = arith::SelectOp::create(e.b, e.loc, first, d, upd);
          d = nesterov ? e.add(d, e.mul(buf, cMu)) : buf;
        }
        SmallVector<Value> out = {e.add(p, e.mul(d, negLr))};
        if (buf)
          out.push_back(buf);
        return out;
      });
  return success();
}

LogicalResult lowerAdagrad(AdagradOp op, OpBuilder &b) {
  Location loc = op.getLoc();
  Scalars s{b, loc};
  Type elt = elementOf(updated(op));
  double decay = op.getLrDecay().convertToDouble(),
         eps = op.getEps().convertToDouble(),
         wd = op.getWeightDecay().convertToDouble();
  Value lr = s.read(op.getLr()), step = s.read(op.getStep());
  // clr = lr / (1 + (step - 1) * lr_decay)
  Value clr = s.div(
      lr, s.add(s.f64(1.0), s.mul(s.sub(step, s.f64(1.0)), s.f64(decay))));
  Value negClr = s.to(s.sub(s.f64(0.0), clr), elt);
  Value cEps = s.to(s.f64(eps), elt), cWd = s.to(s.f64(wd), elt);
  lowerUpdate(
      op, b, ValueRange{op.getSum()},
      [&](Scalars &e, Value g, Value p, ValueRange st) -> SmallVector<Value> {
        if (wd != 0.0)
          g = e.add(g, e.mul(p, cWd));
        Value sum = e.add(st[0], e.mul(g, g));
        Value std = e.add(e.sqrt(sum), cEps);
        p = e.add(p, e.div(e.mul(negClr, g), std));
        return {p, sum};
      });
  return success();
}

/// TOSA helpers for the norm computation.
struct NormBuilder : TosaBuilder {
  using TosaBuilder::TosaBuilder;
  /// sum(v * v) as a tensor<1x`acc`>.
  Value sumSquares(Value v, Type acc) {
    // Squared and summed at the norm's precision: squares of fp16
    // gradients overflow fp16.
    Value flat = castTo(reshape(v, {typeOf(v).getNumElements()}), acc);
    return tosa::ReduceSumOp::create(b, loc, typeOf(flat).clone({1}),
                                     mul(flat, flat), b.getI32IntegerAttr(0));
  }
};

/// The norm of the per-tensor norms; with sharded gradients the per-tensor
/// sums of squares are first summed over the ranks, in one collective.
LogicalResult lowerClip(ClipGradNormOp op, OpBuilder &b) {
  NormBuilder nb{b, op.getLoc()};
  Location loc = op.getLoc();
  // The norm's own element type: f64 for double gradients, else f32.
  Type acc = op.getNorm().getType().getElementType();
  SmallVector<Value> sums;
  for (Value g : op.getGrads())
    sums.push_back(nb.sumSquares(g, acc));
  // One vector of per-tensor sums of squares, so that what follows is a
  // few vector ops rather than a chain per tensor. It is built from scalars:
  // a concat lowers to a chain of insert_slices, on which bufferization's
  // alias analysis is cubic (minutes for a 48-layer model).
  auto vt = RankedTensorType::get({(int64_t)sums.size()}, acc);
  SmallVector<Value> scalars;
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  for (Value s : sums)
    scalars.push_back(tensor::ExtractOp::create(b, loc, s, ValueRange{c0}));
  Value packed = tensor::FromElementsOp::create(b, loc, vt, scalars);
  if (op.getSharded()) {
    Value init = tensor::EmptyOp::create(b, loc, vt.getShape(), acc);
    packed = AllReduceOp::create(b, loc, TypeRange{vt}, packed, init,
                                 op.getWorldSizeAttr())
                 .getResult()[0];
  }
  // sqrt then square, as the norm of per-tensor norms is defined; summed in
  // order from zero, like a running sum.
  Value norms = nb.sqrt(packed);
  Value sumSq =
      tosa::ReduceSumOp::create(b, loc, RankedTensorType::get({1}, acc),
                                nb.mul(norms, norms), b.getI32IntegerAttr(0));
  Value norm = nb.reshape(nb.sqrt(sumSq), {});
  SmallVector<Value> clipped(op.getGrads().begin(), op.getGrads().end());
  double maxNorm = op.getMaxNorm().convertToDouble();
  if (maxNorm > 0.0) {
    Value coef = nb.clipCoefficient(norm, maxNorm);
    for (Value &g : clipped) {
      auto gt = NormBuilder::typeOf(g);
      Value c = nb.castTo(coef, gt.getElementType());
      g = nb.mul(g, nb.reshape(c, SmallVector<int64_t>(gt.getRank(), 1)));
    }
  }
  op.getNorm().replaceAllUsesWith(norm);
  for (auto [r, c] : llvm::zip(op.getClipped(), clipped))
    r.replaceAllUsesWith(c);
  return success();
}

struct ZeroLowerOptimizersPass
    : zero::impl::ZeroLowerOptimizersBase<ZeroLowerOptimizersPass> {
  void runOnOperation() override {
    SmallVector<ClipGradNormOp> clips;
    getOperation().walk([&](ClipGradNormOp op) { clips.push_back(op); });
    for (ClipGradNormOp op : clips) {
      OpBuilder b(op);
      if (failed(lowerClip(op, b)))
        return signalPassFailure();
      op->erase();
    }
    SmallVector<Operation *> ops;
    getOperation().walk([&](OptimizerOpInterface op) { ops.push_back(op); });
    for (Operation *op : ops) {
      OpBuilder b(op);
      LogicalResult r =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](AdamOp o) { return lowerAdam(o, b); })
              .Case([&](SGDOp o) { return lowerSGD(o, b); })
              .Case([&](AdagradOp o) { return lowerAdagrad(o, b); })
              .Default([](Operation *o) {
                return o->emitError("no lowering for this "
                                    "optimizer op");
              });
      if (failed(r))
        return signalPassFailure();
      op->erase();
    }
  }
};
} // namespace
