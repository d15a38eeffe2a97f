//===- TosaRules.cpp - derivative rules of TOSA ops -------------*- C++ -*-===//
//
// One rule per op, attached as an external model of AutoDiffOpInterface.
// Rules may assume equal operand ranks (TOSA's broadcasting) and leave the
// summing of broadcast dimensions to RuleBuilder::set.
//
//===----------------------------------------------------------------------===//
#include "RuleBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zero;
using namespace mlir::zero::autodiff;

template <typename OpTy> LogicalResult rule(OpTy op, RuleBuilder &r);

namespace {
template <typename OpTy>
struct Model
    : public AutoDiffOpInterface::ExternalModel<Model<OpTy>, OpTy> {
  LogicalResult buildAdjoints(Operation *op, OpBuilder &b,
                              ArrayRef<Value> resultAdj, ArrayRef<bool> needed,
                              SmallVectorImpl<Value> &operandAdj) const {
    RuleBuilder r(b, op, resultAdj, needed, operandAdj);
    return rule(cast<OpTy>(op), r);
  }
};

} // namespace

/// Values read back from constant shape operands (tosa.const_shape).
static SmallVector<int64_t> shapeValues(Value v) {
  SmallVector<int64_t> out;
  tosa::getConstShapeValues(v.getDefiningOp(), out);
  return out;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <> LogicalResult rule(tosa::AddOp op, RuleBuilder &r) {
  r.set(0, r.dy());
  r.set(1, r.dy());
  return success();
}

template <> LogicalResult rule(tosa::SubOp op, RuleBuilder &r) {
  r.set(0, r.dy());
  if (r.need(1))
    r.set(1, r.neg(r.dy()));
  return success();
}

template <> LogicalResult rule(tosa::MulOp op, RuleBuilder &r) {
  if (r.need(0))
    r.set(0, r.mul(r.dy(), op.getInput2()));
  if (r.need(1))
    r.set(1, r.mul(r.dy(), op.getInput1()));
  return success();
}

template <> LogicalResult rule(tosa::NegateOp op, RuleBuilder &r) {
  r.set(0, r.neg(r.dy()));
  return success();
}

template <> LogicalResult rule(tosa::ReciprocalOp op, RuleBuilder &r) {
  Value y = op.getResult();
  r.set(0, r.neg(r.mul(r.dy(), r.mul(y, y))));
  return success();
}

template <> LogicalResult rule(tosa::ExpOp op, RuleBuilder &r) {
  r.set(0, r.mul(r.dy(), op.getResult()));
  return success();
}

template <> LogicalResult rule(tosa::LogOp op, RuleBuilder &r) {
  r.set(0, r.mul(r.dy(), r.recip(op->getOperand(0))));
  return success();
}

template <> LogicalResult rule(tosa::TanhOp op, RuleBuilder &r) {
  Value y = op.getResult();
  r.set(0, r.mul(r.dy(), r.sub(r.scalarLike(y, 1.0), r.mul(y, y))));
  return success();
}

template <> LogicalResult rule(tosa::SigmoidOp op, RuleBuilder &r) {
  Value y = op.getResult();
  r.set(0, r.mul(r.dy(), r.mul(y, r.sub(r.scalarLike(y, 1.0), y))));
  return success();
}

template <> LogicalResult rule(tosa::ErfOp op, RuleBuilder &r) {
  Value x = op->getOperand(0);
  Value e = tosa::ExpOp::create(r.b, r.loc, x.getType(), r.neg(r.mul(x, x)));
  r.set(0, r.mul(r.dy(), r.mul(e, r.scalarLike(x, 2.0 / std::sqrt(M_PI)))));
  return success();
}

template <> LogicalResult rule(tosa::RsqrtOp op, RuleBuilder &r) {
  Value y = op.getResult();
  r.set(0, r.mul(r.dy(), r.mul(r.mul(y, r.mul(y, y)), r.scalarLike(y, -0.5))));
  return success();
}

template <> LogicalResult rule(tosa::SinOp op, RuleBuilder &r) {
  Value x = op->getOperand(0);
  r.set(0, r.mul(r.dy(), tosa::CosOp::create(r.b, r.loc, x.getType(), x)));
  return success();
}

template <> LogicalResult rule(tosa::CosOp op, RuleBuilder &r) {
  Value x = op->getOperand(0);
  r.set(0, r.neg(r.mul(r.dy(),
                       tosa::SinOp::create(r.b, r.loc, x.getType(), x))));
  return success();
}

template <> LogicalResult rule(tosa::AbsOp op, RuleBuilder &r) {
  Value x = op->getOperand(0);
  Value zero = r.scalarLike(x, 0.0);
  Value sign =
      r.select(r.greater(x, zero), r.scalarLike(x, 1.0),
               r.select(r.greater(zero, x), r.scalarLike(x, -1.0), zero));
  r.set(0, r.mul(r.dy(), sign));
  return success();
}

template <> LogicalResult rule(tosa::PowOp op, RuleBuilder &r) {
  Value x = op.getInput1(), e = op.getInput2(), y = op.getResult();
  if (r.need(0)) {
    Value em1 = r.sub(e, r.scalarLike(e, 1.0));
    Value p = tosa::PowOp::create(r.b, r.loc, r.typeOf(y), x, em1);
    r.set(0, r.mul(r.dy(), r.mul(e, p)));
  }
  if (r.need(1)) {
    Value lx = tosa::LogOp::create(r.b, r.loc, x.getType(), x);
    r.set(1, r.mul(r.dy(), r.mul(y, lx)));
  }
  return success();
}

/// Relu-shaped clamps (no upper bound) pass the gradient where x > lo, as
/// PyTorch's relu does; bounded clamps where lo <= x <= hi, as its clamp.
template <> LogicalResult rule(tosa::ClampOp op, RuleBuilder &r) {
  Value x = op->getOperand(0);
  auto lo = dyn_cast<FloatAttr>(op.getMinValAttr());
  auto hi = dyn_cast<FloatAttr>(op.getMaxValAttr());
  if (!lo || !hi) {
    r.set(0, r.dy());
    return success();
  }
  Value loV = r.scalarLike(x, lo.getValueAsDouble());
  Value mask;
  // Unbounded above (ReLU): y > lo exactly when x > lo, so the backward
  // reads the result, which the next layer keeps anyway, and the input
  // need not live until the backward (PyTorch's threshold_backward).
  if (std::isinf(hi.getValueAsDouble()))
    mask = r.greater(op.getResult(), loV);
  else
    mask =
        r.logicalAnd(r.greaterEqual(x, loV),
                     r.greaterEqual(r.scalarLike(x, hi.getValueAsDouble()), x));
  r.set(0, r.select(mask, r.dy(), r.zerosLike(x)));
  return success();
}

template <typename OpTy, bool isMax>
static LogicalResult minMaxRule(OpTy op, RuleBuilder &r) {
  Value a = op.getInput1(), c = op.getInput2();
  Value pickA = isMax ? r.greaterEqual(a, c) : r.greaterEqual(c, a);
  Value dy = r.dy();
  Value zero = r.zerosLike(dy);
  r.set(0, r.select(pickA, dy, zero));
  if (r.need(1))
    r.set(1, r.select(pickA, zero, dy));
  return success();
}

template <> LogicalResult rule(tosa::MaximumOp op, RuleBuilder &r) {
  return minMaxRule<tosa::MaximumOp, true>(op, r);
}
template <> LogicalResult rule(tosa::MinimumOp op, RuleBuilder &r) {
  return minMaxRule<tosa::MinimumOp, false>(op, r);
}

template <> LogicalResult rule(tosa::SelectOp op, RuleBuilder &r) {
  Value dy = r.dy(), zero = r.zerosLike(dy);
  if (r.need(1))
    r.set(1, r.select(op.getInput1(), dy, zero));
  if (r.need(2))
    r.set(2, r.select(op.getInput1(), zero, dy));
  return success();
}

template <> LogicalResult rule(tosa::CastOp op, RuleBuilder &r) {
  Type in = r.typeOf(op->getOperand(0)).getElementType();
  if (isa<FloatType>(in))
    r.set(0, r.castTo(r.dy(), in));
  return success();
}

/// Piecewise-constant ops have zero derivative almost everywhere.
template <> LogicalResult rule(tosa::FloorOp, RuleBuilder &) {
  return success();
}
template <> LogicalResult rule(tosa::CeilOp, RuleBuilder &) {
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <> LogicalResult rule(tosa::ReduceSumOp op, RuleBuilder &r) {
  Value x = op->getOperand(0);
  SmallVector<int64_t> mult(r.shapeOf(x).size(), 1);
  mult[op.getAxis()] = r.shapeOf(x)[op.getAxis()];
  r.set(0, tosa::TileOp::create(r.b, r.loc, x.getType(), r.dy(),
                                r.constShape(mult)));
  return success();
}

/// Ties share the gradient evenly, like torch.amax / amin.
template <typename OpTy> static LogicalResult extremumRule(OpTy op,
                                                          RuleBuilder &r) {
  Value x = op->getOperand(0), y = op->getResult(0);
  auto maskTy = r.typeOf(x).clone(r.b.getI1Type());
  Value mask = tosa::EqualOp::create(r.b, r.loc, maskTy, x, y);
  Value maskF = r.castTo(mask, r.typeOf(x).getElementType());
  Value count = r.reduceSum(maskF, {(int64_t)op.getAxis()});
  Value share = r.mul(r.dy(), r.recip(count));
  r.set(0, r.mul(maskF, share));
  return success();
}

template <> LogicalResult rule(tosa::ReduceMaxOp op, RuleBuilder &r) {
  return extremumRule(op, r);
}
template <> LogicalResult rule(tosa::ReduceMinOp op, RuleBuilder &r) {
  return extremumRule(op, r);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

template <> LogicalResult rule(tosa::ReshapeOp op, RuleBuilder &r) {
  r.set(0, r.reshape(r.dy(), r.shapeOf(op->getOperand(0))));
  return success();
}

template <> LogicalResult rule(tosa::TransposeOp op, RuleBuilder &r) {
  ArrayRef<int32_t> perm = op.getPerms();
  SmallVector<int32_t> inv(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inv[p] = i;
  r.set(0, r.transpose(r.dy(), inv));
  return success();
}

template <> LogicalResult rule(tosa::SliceOp op, RuleBuilder &r) {
  SmallVector<int64_t> start = shapeValues(op.getStart());
  ArrayRef<int64_t> in = r.shapeOf(op.getInput1());
  ArrayRef<int64_t> out = r.shapeOf(op.getResult());
  SmallVector<int64_t> after;
  for (size_t i = 0; i < in.size(); ++i)
    after.push_back(in[i] - start[i] - out[i]);
  r.set(0, r.pad(r.dy(), start, after));
  return success();
}

template <> LogicalResult rule(tosa::PadOp op, RuleBuilder &r) {
  SmallVector<int64_t> pads = shapeValues(op.getPadding());
  ArrayRef<int64_t> in = r.shapeOf(op.getInput1());
  SmallVector<int64_t> start;
  for (size_t i = 0; i < in.size(); ++i)
    start.push_back(pads[2 * i]);
  r.set(0, r.slice(r.dy(), start, in));
  return success();
}

template <> LogicalResult rule(tosa::ConcatOp op, RuleBuilder &r) {
  int64_t axis = op.getAxis();
  int64_t off = 0;
  Value dy = r.dy();
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    ArrayRef<int64_t> s = r.shapeOf(op->getOperand(i));
    if (r.need(i)) {
      SmallVector<int64_t> start(s.size(), 0);
      start[axis] = off;
      r.set(i, r.slice(dy, start, s));
    }
    off += s[axis];
  }
  return success();
}

template <> LogicalResult rule(tosa::TileOp op, RuleBuilder &r) {
  ArrayRef<int64_t> in = r.shapeOf(op.getInput1());
  SmallVector<int64_t> mult = shapeValues(op.getMultiples());
  // [m0*d0, m1*d1, ...] -> [m0, d0, m1, d1, ...], summed over the m's.
  SmallVector<int64_t> split, axes;
  for (size_t i = 0; i < in.size(); ++i) {
    axes.push_back(split.size());
    split.push_back(mult[i]);
    split.push_back(in[i]);
  }
  Value g = r.reduceSum(r.reshape(r.dy(), split), axes);
  r.set(0, r.reshape(g, in));
  return success();
}

template <> LogicalResult rule(tosa::ReverseOp op, RuleBuilder &r) {
  r.set(0, tosa::ReverseOp::create(r.b, r.loc, op.getType(), r.dy(),
                                   op.getAxisAttr()));
  return success();
}

/// Scatter-add of the rows of dy into a zero table, one gathered row at a
/// time: repeated indices (a token seen twice) accumulate.
template <> LogicalResult rule(tosa::GatherOp op, RuleBuilder &r) {
  if (!r.need(0))
    return success();
  Value values = op.getValues(), idx = op.getIndices(), dy = r.dy();
  ArrayRef<int64_t> vs = r.shapeOf(values); // [N, K, C]
  int64_t n = vs[0], c = vs[2], w = r.shapeOf(idx)[1];
  OpBuilder &b = r.b;
  Location loc = r.loc;
  Value table = r.zerosLike(values);
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, n * w);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value wv = arith::ConstantIndexOp::create(b, loc, w);
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, one, ValueRange{table},
      [&](OpBuilder &lb2, Location l, Value iv, ValueRange iter) {
        Value bi = arith::DivUIOp::create(lb2, l, iv, wv);
        Value wi = arith::RemUIOp::create(lb2, l, iv, wv);
        Value k = tensor::ExtractOp::create(lb2, l, idx, ValueRange{bi, wi});
        Value ki = arith::IndexCastOp::create(lb2, l, lb2.getIndexType(), k);
        auto rowTy = RankedTensorType::get({1, 1, c},
                                           r.typeOf(values).getElementType());
        SmallVector<OpFoldResult> sizes = {lb2.getIndexAttr(1),
                                           lb2.getIndexAttr(1),
                                           lb2.getIndexAttr(c)};
        SmallVector<OpFoldResult> strides(3, lb2.getIndexAttr(1));
        SmallVector<OpFoldResult> src = {bi, wi, lb2.getIndexAttr(0)};
        SmallVector<OpFoldResult> dst = {bi, ki, lb2.getIndexAttr(0)};
        Value row = tensor::ExtractSliceOp::create(lb2, l, rowTy, dy, src,
                                                   sizes, strides);
        Value cur = tensor::ExtractSliceOp::create(lb2, l, rowTy, iter[0],
                                                   dst, sizes, strides);
        Value sum = tosa::AddOp::create(lb2, l, rowTy, cur, row);
        Value upd = tensor::InsertSliceOp::create(lb2, l, sum, iter[0], dst,
                                                  sizes, strides);
        scf::YieldOp::create(lb2, l, upd);
      });
  r.set(0, loop.getResult(0));
  return success();
}

//===----------------------------------------------------------------------===//
// Matmul and convolution
//===----------------------------------------------------------------------===//

template <> LogicalResult rule(tosa::MatMulOp op, RuleBuilder &r) {
  Value a = op.getA(), bm = op.getB(), dy = r.dy();
  // Mixed precision: bf16/fp16 operands with an fp32 result. The backward
  // GEMMs read operands of the forward's input type and accumulate in the
  // result's (`set` rounds their results to the operand's type).
  Type in = r.typeOf(a).getElementType();
  Type acc = r.typeOf(op.getResult()).getElementType();
  dy = r.castTo(dy, in);
  auto mm = [&](Value x, Value y) {
    ArrayRef<int64_t> xs = r.shapeOf(x), ys = r.shapeOf(y);
    auto t = RankedTensorType::get({std::max(xs[0], ys[0]), xs[1], ys[2]}, acc);
    return tosa::MatMulOp::create(r.b, r.loc, t, x, y).getResult();
  };
  if (r.need(0))
    r.set(0, mm(dy, r.transpose(bm, {0, 2, 1})));
  if (r.need(1))
    r.set(1, mm(r.transpose(a, {0, 2, 1}), dy));
  return success();
}

/// Interleaves zeros between the rows and columns of an NHWC tensor
/// (stride > 1 of the forward op), giving (O-1)*s+1 positions per axis.
static Value dilateNHWC(RuleBuilder &r, Value v, int64_t sh, int64_t sw) {
  if (sh == 1 && sw == 1)
    return v;
  ArrayRef<int64_t> s = r.shapeOf(v);
  int64_t n = s[0], oh = s[1], ow = s[2], c = s[3];
  Value x = r.reshape(v, {n, oh, 1, ow, 1, c});
  x = r.pad(x, {0, 0, 0, 0, 0, 0}, {0, 0, sh - 1, 0, sw - 1, 0});
  x = r.reshape(x, {n, oh * sh, ow * sw, c});
  return r.slice(x, {0, 0, 0, 0},
                 {n, (oh - 1) * sh + 1, (ow - 1) * sw + 1, c});
}

template <> LogicalResult rule(tosa::Conv2DOp op, RuleBuilder &r) {
  Value x = op.getInput(), w = op.getWeight(), dy = r.dy();
  ArrayRef<int64_t> pad = op.getPad(), stride = op.getStride(),
                    dil = op.getDilation();
  ArrayRef<int64_t> xs = r.shapeOf(x), ws = r.shapeOf(w), ys = r.shapeOf(dy);
  int64_t n = xs[0], h = xs[1], wd = xs[2], c = xs[3];
  int64_t o = ws[0], kh = ws[1], kw = ws[2];
  int64_t oh = ys[1], ow = ys[2];
  Type elt = r.typeOf(x).getElementType();
  auto acc = TypeAttr::get(elt);
  auto conv = [&](Value in, Value wt, RankedTensorType t, ArrayRef<int64_t> p,
                  ArrayRef<int64_t> s, ArrayRef<int64_t> d) {
    Value bias = r.splat(RankedTensorType::get({t.getShape()[3]}, elt), 0.0);
    return tosa::Conv2DOp::create(r.b, r.loc, t, in, wt, bias,
                                  r.b.getDenseI64ArrayAttr(p),
                                  r.b.getDenseI64ArrayAttr(s),
                                  r.b.getDenseI64ArrayAttr(d), acc)
        .getResult();
  };
  int64_t hp = h + pad[0] + pad[1], wp = wd + pad[2] + pad[3];
  int64_t ekh = (kh - 1) * dil[0] + 1, ekw = (kw - 1) * dil[1] + 1;
  int64_t usedH = (oh - 1) * stride[0] + ekh, usedW = (ow - 1) * stride[1] + ekw;

  if (r.need(2))
    r.set(2, r.reshape(r.reduceSum(dy, {0, 1, 2}), {o}));

  if (r.need(0)) {
    // Full correlation of the dilated dy with the flipped kernel gives the
    // gradient of the used part of the padded input.
    Value d = dilateNHWC(r, dy, stride[0], stride[1]);
    Value wf = tosa::ReverseOp::create(r.b, r.loc, w.getType(), w,
                                       r.b.getI32IntegerAttr(1));
    wf = tosa::ReverseOp::create(r.b, r.loc, w.getType(), wf,
                                 r.b.getI32IntegerAttr(2));
    Value wt = r.transpose(wf, {3, 1, 2, 0}); // [C, KH, KW, O]
    auto t = RankedTensorType::get({n, usedH, usedW, c}, elt);
    Value gp = conv(d, wt, t, {ekh - 1, ekh - 1, ekw - 1, ekw - 1}, {1, 1},
                    dil);
    gp = r.pad(gp, {0, 0, 0, 0}, {0, hp - usedH, wp - usedW, 0});
    r.set(0, r.slice(gp, {0, pad[0], pad[2], 0}, {n, h, wd, c}));
  }

  if (r.need(1)) {
    // dW[o,i,j,c] = sum_{n,y,x} dy[n,y,x,o] * xp[n, y*s + i*d, x*s + j*d, c]
    // is a convolution with batch and channels swapped.
    Value xp = r.pad(x, {0, pad[0], pad[2], 0}, {0, pad[1], pad[3], 0});
    xp = r.slice(xp, {0, 0, 0, 0}, {n, usedH, usedW, c});
    Value in = r.transpose(xp, {3, 1, 2, 0});  // [C, H', W', N]
    Value wt = r.transpose(dy, {3, 1, 2, 0});  // [O, OH, OW, N]
    auto t = RankedTensorType::get({c, kh, kw, o}, elt);
    Value g = conv(in, wt, t, {0, 0, 0, 0}, dil, stride);
    r.set(1, r.transpose(g, {3, 1, 2, 0}));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling: window offsets unrolled, strided slices of the padded input
//===----------------------------------------------------------------------===//

namespace {
struct PoolGeometry {
  int64_t n, h, w, c, oh, ow, kh, kw, sh, sw;
  ArrayRef<int64_t> pad; // top, bottom, left, right
};
} // namespace

/// Window offset (i, j) of every output: a strided view of `padded`.
static Value windowSlice(RuleBuilder &r, Value padded, const PoolGeometry &g,
                         int64_t i, int64_t j) {
  auto t = r.typeOf(padded).clone({g.n, g.oh, g.ow, g.c});
  return tensor::ExtractSliceOp::create(
      r.b, r.loc, t, padded, ValueRange{}, ValueRange{}, ValueRange{},
      r.b.getDenseI64ArrayAttr({0, i, j, 0}),
      r.b.getDenseI64ArrayAttr({g.n, g.oh, g.ow, g.c}),
      r.b.getDenseI64ArrayAttr({1, g.sh, g.sw, 1}));
}

/// acc[window (i, j)] += v.
static Value scatterWindow(RuleBuilder &r, Value acc, Value v,
                           const PoolGeometry &g, int64_t i, int64_t j) {
  Value cur = windowSlice(r, acc, g, i, j);
  Value sum = r.add(cur, v);
  return tensor::InsertSliceOp::create(
      r.b, r.loc, sum, acc, ValueRange{}, ValueRange{}, ValueRange{},
      r.b.getDenseI64ArrayAttr({0, i, j, 0}),
      r.b.getDenseI64ArrayAttr({g.n, g.oh, g.ow, g.c}),
      r.b.getDenseI64ArrayAttr({1, g.sh, g.sw, 1}));
}

static PoolGeometry geometry(RuleBuilder &r, Value x, Value y,
                             ArrayRef<int64_t> kernel,
                             ArrayRef<int64_t> stride, ArrayRef<int64_t> pad) {
  ArrayRef<int64_t> xs = r.shapeOf(x), ys = r.shapeOf(y);
  return {xs[0], xs[1], xs[2], xs[3], ys[1], ys[2],
          kernel[0], kernel[1], stride[0], stride[1], pad};
}

/// Zero buffer of the padded input size (rows used by some window).
static Value paddedZeros(RuleBuilder &r, Value x, const PoolGeometry &g) {
  int64_t hp = g.h + g.pad[0] + g.pad[1], wp = g.w + g.pad[2] + g.pad[3];
  return r.splat(r.typeOf(x).clone({g.n, hp, wp, g.c}), 0.0);
}

static Value cropPadding(RuleBuilder &r, Value gp, const PoolGeometry &g) {
  return r.slice(gp, {0, g.pad[0], g.pad[2], 0}, {g.n, g.h, g.w, g.c});
}

/// The gradient goes to the first maximum of each window in row-major
/// order, as PyTorch's max_pool2d does.
template <> LogicalResult rule(tosa::MaxPool2dOp op, RuleBuilder &r) {
  Value x = op.getInput(), y = op.getResult(), dy = r.dy();
  PoolGeometry g = geometry(r, x, y, op.getKernel(), op.getStride(),
                            op.getPad());
  double ninf = -std::numeric_limits<double>::infinity();
  Value xp = tosa::PadOp::create(
      r.b, r.loc,
      r.typeOf(x).clone({g.n, g.h + g.pad[0] + g.pad[1],
                         g.w + g.pad[2] + g.pad[3], g.c}),
      x,
      r.constShape({0, 0, g.pad[0], g.pad[1], g.pad[2], g.pad[3], 0, 0}),
      r.splat(RankedTensorType::get({1}, r.typeOf(x).getElementType()),
              ninf));
  Value acc = paddedZeros(r, x, g);
  Value taken = r.splat(r.typeOf(y).clone(r.b.getI1Type()), 0.0);
  Value zero = r.zerosLike(dy);
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) {
      Value xi = windowSlice(r, xp, g, i, j);
      Value eq = tosa::EqualOp::create(r.b, r.loc, taken.getType(), xi, y);
      Value first = r.logicalAnd(eq, r.logicalNot(taken));
      taken = tosa::LogicalOrOp::create(r.b, r.loc, taken.getType(), taken,
                                        first);
      acc = scatterWindow(r, acc, r.select(first, dy, zero), g, i, j);
    }
  r.set(0, cropPadding(r, acc, g));
  return success();
}

/// Each window spreads dy / (number of unpadded elements) over itself,
/// matching tosa.avg_pool2d's exclusion of padding.
template <> LogicalResult rule(tosa::AvgPool2dOp op, RuleBuilder &r) {
  Value x = op.getInput(), y = op.getResult(), dy = r.dy();
  PoolGeometry g = geometry(r, x, y, op.getKernel(), op.getStride(),
                            op.getPad());
  SmallVector<float> inv;
  for (int64_t a = 0; a < g.oh; ++a)
    for (int64_t b2 = 0; b2 < g.ow; ++b2) {
      int64_t r0 = a * g.sh - g.pad[0], c0 = b2 * g.sw - g.pad[2];
      int64_t rows = std::min(r0 + g.kh, g.h) - std::max<int64_t>(r0, 0);
      int64_t cols = std::min(c0 + g.kw, g.w) - std::max<int64_t>(c0, 0);
      inv.push_back(1.0f / float(std::max<int64_t>(rows * cols, 1)));
    }
  auto invTy = RankedTensorType::get({1, g.oh, g.ow, 1}, r.b.getF32Type());
  Value scale =
      r.castTo(r.constant(DenseElementsAttr::get(invTy, ArrayRef<float>(inv))),
               r.typeOf(x).getElementType());
  Value share = r.mul(dy, scale);
  Value acc = paddedZeros(r, x, g);
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j)
      acc = scatterWindow(r, acc, share, g, i, j);
  r.set(0, cropPadding(r, acc, g));
  return success();
}

void mlir::zero::autodiff::registerTosaRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tosa::TosaDialect *) {
    tosa::AddOp::attachInterface<Model<tosa::AddOp>>(*ctx);
    tosa::SubOp::attachInterface<Model<tosa::SubOp>>(*ctx);
    tosa::MulOp::attachInterface<Model<tosa::MulOp>>(*ctx);
    tosa::NegateOp::attachInterface<Model<tosa::NegateOp>>(*ctx);
    tosa::ReciprocalOp::attachInterface<Model<tosa::ReciprocalOp>>(*ctx);
    tosa::ExpOp::attachInterface<Model<tosa::ExpOp>>(*ctx);
    tosa::LogOp::attachInterface<Model<tosa::LogOp>>(*ctx);
    tosa::TanhOp::attachInterface<Model<tosa::TanhOp>>(*ctx);
    tosa::SigmoidOp::attachInterface<Model<tosa::SigmoidOp>>(*ctx);
    tosa::ErfOp::attachInterface<Model<tosa::ErfOp>>(*ctx);
    tosa::RsqrtOp::attachInterface<Model<tosa::RsqrtOp>>(*ctx);
    tosa::SinOp::attachInterface<Model<tosa::SinOp>>(*ctx);
    tosa::CosOp::attachInterface<Model<tosa::CosOp>>(*ctx);
    tosa::AbsOp::attachInterface<Model<tosa::AbsOp>>(*ctx);
    tosa::PowOp::attachInterface<Model<tosa::PowOp>>(*ctx);
    tosa::ClampOp::attachInterface<Model<tosa::ClampOp>>(*ctx);
    tosa::MaximumOp::attachInterface<Model<tosa::MaximumOp>>(*ctx);
    tosa::MinimumOp::attachInterface<Model<tosa::MinimumOp>>(*ctx);
    tosa::SelectOp::attachInterface<Model<tosa::SelectOp>>(*ctx);
    tosa::CastOp::attachInterface<Model<tosa::CastOp>>(*ctx);
    tosa::FloorOp::attachInterface<Model<tosa::FloorOp>>(*ctx);
    tosa::CeilOp::attachInterface<Model<tosa::CeilOp>>(*ctx);
    tosa::ReduceSumOp::attachInterface<Model<tosa::ReduceSumOp>>(*ctx);
    tosa::ReduceMaxOp::attachInterface<Model<tosa::ReduceMaxOp>>(*ctx);
    tosa::ReduceMinOp::attachInterface<Model<tosa::ReduceMinOp>>(*ctx);
    tosa::ReshapeOp::attachInterface<Model<tosa::ReshapeOp>>(*ctx);
    tosa::TransposeOp::attachInterface<Model<tosa::TransposeOp>>(*ctx);
    tosa::SliceOp::attachInterface<Model<tosa::SliceOp>>(*ctx);
    tosa::PadOp::attachInterface<Model<tosa::PadOp>>(*ctx);
    tosa::ConcatOp::attachInterface<Model<tosa::ConcatOp>>(*ctx);
    tosa::TileOp::attachInterface<Model<tosa::TileOp>>(*ctx);
    tosa::ReverseOp::attachInterface<Model<tosa::ReverseOp>>(*ctx);
    tosa::GatherOp::attachInterface<Model<tosa::GatherOp>>(*ctx);
    tosa::MatMulOp::attachInterface<Model<tosa::MatMulOp>>(*ctx);
    tosa::Conv2DOp::attachInterface<Model<tosa::Conv2DOp>>(*ctx);
    tosa::MaxPool2dOp::attachInterface<Model<tosa::MaxPool2dOp>>(*ctx);
    tosa::AvgPool2dOp::attachInterface<Model<tosa::AvgPool2dOp>>(*ctx);
  });
}
