//===- ElementwiseOps.cpp - elementwise ONNX ops to TOSA -------*- C++ -*-===//
#include "NodeImporter.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::zero::onnx_import;

static bool isFloat(Value v) { return isa<FloatType>(NodeImporter::eltOf(v)); }

/// Requires a floating-point operand for ops that are only defined on them
/// in TOSA.
static LogicalResult requireFloat(NodeImporter &n, Value v) {
  if (isFloat(v))
    return success();
  std::string t;
  llvm::raw_string_ostream os(t);
  os << NodeImporter::eltOf(v);
  return n.unsupported("element type " + t +
                       " (floating point only); Cast the operand to float "
                       "first");
}

template <typename OpTy> static LogicalResult lowerBinary(NodeImporter &n) {
  auto r = n.binary<OpTy>(n.input(0), n.input(1));
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

static LogicalResult lowerMul(NodeImporter &n) {
  auto r = n.mul(n.input(0), n.input(1));
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

static LogicalResult lowerDiv(NodeImporter &n) {
  Value lhs = n.input(0);
  if (!isFloat(lhs) && !NodeImporter::eltOf(lhs).isInteger(32))
    return n.unsupported(
        "integer division at run time other than int32 (shape arithmetic on "
        "constants and static shapes is folded at import); Cast the "
        "operands to int32 or float");
  auto r = n.div(lhs, n.input(1));
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

static LogicalResult lowerPow(NodeImporter &n) {
  Value x = n.input(0), y = n.input(1);
  if (failed(requireFloat(n, x)))
    return failure();
  y = n.castTo(y, NodeImporter::eltOf(x));
  auto r = n.binary<tosa::PowOp>(x, y);
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

template <typename OpTy> static LogicalResult lowerFloatUnary(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  n.setOutput(0, OpTy::create(n.b, n.loc, x.getType(), x));
  return success();
}

template <typename OpTy> static LogicalResult lowerUnary(NodeImporter &n) {
  Value x = n.input(0);
  n.setOutput(0, OpTy::create(n.b, n.loc, x.getType(), x));
  return success();
}

static LogicalResult lowerNeg(NodeImporter &n) {
  n.setOutput(0, n.neg(n.input(0)));
  return success();
}

static LogicalResult lowerSqrt(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  // TOSA lacks sqrt; linalg.sqrt keeps it exact (not pow or 1/rsqrt).
  Value init = tensor::EmptyOp::create(n.b, n.loc, NodeImporter::shapeOf(x),
                                       NodeImporter::eltOf(x));
  n.setOutput(
      0, linalg::SqrtOp::create(n.b, n.loc, ValueRange{x}, ValueRange{init})
             .getResult(0));
  return success();
}

/// clamp(x, lo, hi) with constant bounds.
static Value clampConst(NodeImporter &n, Value x, double lo, double hi) {
  Type elt = NodeImporter::eltOf(x);
  Attribute loA, hiA;
  if (auto ft = dyn_cast<FloatType>(elt)) {
    loA = n.b.getFloatAttr(ft, lo);
    hiA = n.b.getFloatAttr(ft, hi);
  } else {
    unsigned w = elt.getIntOrFloatBitWidth();
    APInt mn = APInt::getSignedMinValue(w), mx = APInt::getSignedMaxValue(w);
    auto clampInt = [&](double v) {
      if (v <= (double)mn.getSExtValue())
        return mn.getSExtValue();
      if (v >= (double)mx.getSExtValue())
        return mx.getSExtValue();
      return (int64_t)v;
    };
    loA = n.b.getIntegerAttr(elt, clampInt(lo));
    hiA = n.b.getIntegerAttr(elt, clampInt(hi));
  }
  return tosa::ClampOp::create(n.b, n.loc, x.getType(), x, loA, hiA);
}

static LogicalResult lowerRelu(NodeImporter &n) {
  n.setOutput(0, clampConst(n, n.input(0), 0.0,
                            std::numeric_limits<double>::infinity()));
  return success();
}

static LogicalResult lowerClip(NodeImporter &n) {
  Value x = n.input(0);
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  Value loV, hiV;
  for (unsigned i : {1u, 2u}) {
    if (!n.hasInput(i))
      continue;
    if (auto c = n.constInput(i)) {
      double v = isa<FloatType>(c->getElementType())
                     ? (*c->getValues<APFloat>().begin()).convertToDouble()
                     : (double)(*c->getValues<APInt>().begin()).getSExtValue();
      (i == 1 ? lo : hi) = v;
    } else {
      // ONNX makes min and max scalars; anything else would change the
      // output's shape.
      Value bound = n.input(i);
      auto t = cast<RankedTensorType>(bound.getType());
      if (t.getNumElements() != 1 ||
          t.getRank() > NodeImporter::shapeOf(x).size()) {
        auto diag = n.error() << "input '" << n.node.input(i) << "' ("
                              << (i == 1 ? "min" : "max") << ") has shape [";
        llvm::interleaveComma(t.getShape(), diag);
        diag << "]; Clip needs a scalar (a tensor of empty shape)";
        return failure();
      }
      (i == 1 ? loV : hiV) = bound;
    }
  }
  Value r = clampConst(n, x, lo, hi);
  for (auto [bound, isMin] : {std::pair(loV, true), std::pair(hiV, false)}) {
    if (!bound)
      continue;
    auto clamped = isMin ? n.binary<tosa::MaximumOp>(r, bound)
                         : n.binary<tosa::MinimumOp>(r, bound);
    if (failed(clamped))
      return failure();
    r = *clamped;
  }
  n.setOutput(0, r);
  return success();
}

static LogicalResult lowerLeakyRelu(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::shapeOf(x).size();
  Type elt = NodeImporter::eltOf(x);
  Value alpha = n.scalar(elt, n.floatAttr("alpha", 0.01f), rank);
  Value neg = *n.mul(x, alpha);
  Value zero = n.scalar(elt, 0.0, rank);
  Value pos = *n.binary<tosa::GreaterEqualOp>(x, zero, n.b.getI1Type());
  n.setOutput(0, tosa::SelectOp::create(n.b, n.loc, x.getType(), pos, x, neg));
  return success();
}

static LogicalResult lowerPRelu(NodeImporter &n) {
  Value x = n.input(0), slope = n.input(1);
  ArrayRef<int64_t> xs = NodeImporter::shapeOf(x),
                    ss = NodeImporter::shapeOf(slope);
  // Before opset 7 a 1-D slope ran along the channel axis (axis 1); the
  // version converter leaves it as is.
  if (n.state.originalOpset < 7 && ss.size() == 1 && xs.size() > 2 &&
      ss[0] == xs[1] && ss[0] != xs.back()) {
    SmallVector<int64_t> shape(xs.size() - 1, 1);
    shape[0] = ss[0];
    slope = n.reshape(slope, shape);
  }
  auto prod = n.mul(x, slope);
  if (failed(prod))
    return failure();
  Value neg = *prod;
  if (neg.getType() != x.getType())
    return n.unsupported("a slope that broadcasts beyond the input's shape; "
                         "give it the input's shape or one that broadcasts "
                         "to it (C x 1 x 1)");
  Value zero =
      n.scalar(NodeImporter::eltOf(x), 0.0, NodeImporter::shapeOf(x).size());
  Value pos = *n.binary<tosa::GreaterEqualOp>(x, zero, n.b.getI1Type());
  n.setOutput(0, tosa::SelectOp::create(n.b, n.loc, x.getType(), pos, x, neg));
  return success();
}

static LogicalResult lowerElu(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  int64_t rank = NodeImporter::shapeOf(x).size();
  Type elt = NodeImporter::eltOf(x);
  Value one = n.scalar(elt, 1.0, rank);
  Value em1 = *n.binary<tosa::SubOp>(
      tosa::ExpOp::create(n.b, n.loc, x.getType(), x), one);
  Value neg = *n.mul(em1, n.scalar(elt, n.floatAttr("alpha", 1.0f), rank));
  Value pos = *n.binary<tosa::GreaterEqualOp>(x, n.scalar(elt, 0.0, rank),
                                              n.b.getI1Type());
  n.setOutput(0, tosa::SelectOp::create(n.b, n.loc, x.getType(), pos, x, neg));
  return success();
}

static LogicalResult lowerSelu(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  int64_t rank = NodeImporter::shapeOf(x).size();
  Type elt = NodeImporter::eltOf(x);
  double alpha = n.floatAttr("alpha", 1.67326319217681884765625f);
  double gamma = n.floatAttr("gamma", 1.05070102214813232421875f);
  Value e = tosa::ExpOp::create(n.b, n.loc, x.getType(), x);
  Value neg = *n.binary<tosa::SubOp>(*n.mul(e, n.scalar(elt, alpha, rank)),
                                     n.scalar(elt, alpha, rank));
  Value pos =
      *n.binary<tosa::GreaterOp>(x, n.scalar(elt, 0.0, rank), n.b.getI1Type());
  Value sel = tosa::SelectOp::create(n.b, n.loc, x.getType(), pos, x, neg);
  n.setOutput(0, *n.mul(sel, n.scalar(elt, gamma, rank)));
  return success();
}

static LogicalResult lowerSoftplus(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  int64_t rank = NodeImporter::shapeOf(x).size();
  Value e = tosa::ExpOp::create(n.b, n.loc, x.getType(), x);
  Value s =
      *n.binary<tosa::AddOp>(e, n.scalar(NodeImporter::eltOf(x), 1.0, rank));
  n.setOutput(0, tosa::LogOp::create(n.b, n.loc, x.getType(), s));
  return success();
}

static LogicalResult lowerSoftsign(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  int64_t rank = NodeImporter::shapeOf(x).size();
  Value a = tosa::AbsOp::create(n.b, n.loc, x.getType(), x);
  Value d =
      *n.binary<tosa::AddOp>(a, n.scalar(NodeImporter::eltOf(x), 1.0, rank));
  n.setOutput(0, *n.div(x, d));
  return success();
}

static LogicalResult lowerHardSigmoid(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  int64_t rank = NodeImporter::shapeOf(x).size();
  Type elt = NodeImporter::eltOf(x);
  Value y = *n.mul(x, n.scalar(elt, n.floatAttr("alpha", 0.2f), rank));
  y = *n.binary<tosa::AddOp>(y, n.scalar(elt, n.floatAttr("beta", 0.5f), rank));
  n.setOutput(0, clampConst(n, y, 0.0, 1.0));
  return success();
}

static LogicalResult lowerHardSwish(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  int64_t rank = NodeImporter::shapeOf(x).size();
  Type elt = NodeImporter::eltOf(x);
  Value y = *n.mul(x, n.scalar(elt, 1.0 / 6.0, rank));
  y = *n.binary<tosa::AddOp>(y, n.scalar(elt, 0.5, rank));
  n.setOutput(0, *n.mul(x, clampConst(n, y, 0.0, 1.0)));
  return success();
}

static LogicalResult lowerThresholdedRelu(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::shapeOf(x).size();
  Type elt = NodeImporter::eltOf(x);
  Value gt = *n.binary<tosa::GreaterOp>(
      x, n.scalar(elt, n.floatAttr("alpha", 1.0f), rank), n.b.getI1Type());
  Value zero = n.splat(cast<RankedTensorType>(x.getType()), 0.0);
  n.setOutput(0, tosa::SelectOp::create(n.b, n.loc, x.getType(), gt, x, zero));
  return success();
}

static LogicalResult lowerSign(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::shapeOf(x).size();
  Type elt = NodeImporter::eltOf(x);
  auto ty = cast<RankedTensorType>(x.getType());
  Value zero = n.scalar(elt, 0.0, rank);
  Value gt = *n.binary<tosa::GreaterOp>(x, zero, n.b.getI1Type());
  Value lt = *n.binary<tosa::GreaterOp>(zero, x, n.b.getI1Type());
  Value r = tosa::SelectOp::create(n.b, n.loc, ty, lt, n.splat(ty, -1.0),
                                   n.splat(ty, 0.0));
  n.setOutput(0,
              tosa::SelectOp::create(n.b, n.loc, ty, gt, n.splat(ty, 1.0), r));
  return success();
}

/// Max, Min, Sum, Mean: variadic with broadcasting.
template <typename OpTy> static LogicalResult lowerVariadic(NodeImporter &n) {
  Value acc = n.input(0);
  for (unsigned i = 1; i < n.numInputs(); ++i) {
    auto r = n.binary<OpTy>(acc, n.input(i));
    if (failed(r))
      return failure();
    acc = *r;
  }
  n.setOutput(0, acc);
  return success();
}

static LogicalResult lowerMean(NodeImporter &n) {
  if (failed(lowerVariadic<tosa::AddOp>(n)))
    return failure();
  Value sum = n.state.values.lookup(n.node.output(0));
  if (failed(requireFloat(n, sum)))
    return failure();
  Value s = n.scalar(NodeImporter::eltOf(sum), 1.0 / n.numInputs(),
                     NodeImporter::shapeOf(sum).size());
  n.setOutput(0, *n.mul(sum, s));
  return success();
}

/// Comparisons produce i1; `swap` turns Greater into Less.
template <typename OpTy, bool swap, bool negate>
static LogicalResult lowerCompare(NodeImporter &n) {
  Value a = n.input(0), c = n.input(1);
  if (swap)
    std::swap(a, c);
  auto r = n.binary<OpTy>(a, c, n.b.getI1Type());
  if (failed(r))
    return failure();
  Value v = *r;
  if (negate)
    v = tosa::LogicalNotOp::create(n.b, n.loc, v.getType(), v);
  n.setOutput(0, v);
  return success();
}

template <typename OpTy> static LogicalResult lowerLogical(NodeImporter &n) {
  auto r = n.binary<OpTy>(n.input(0), n.input(1), n.b.getI1Type());
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

static LogicalResult lowerWhere(NodeImporter &n) {
  Value c = n.input(0), x = n.input(1), y = n.input(2);
  auto s1 =
      n.broadcastShape(NodeImporter::shapeOf(x), NodeImporter::shapeOf(y));
  if (failed(s1))
    return failure();
  auto s = n.broadcastShape(NodeImporter::shapeOf(c), *s1);
  if (failed(s))
    return failure();
  int64_t rank = s->size();
  c = n.expandRank(c, rank);
  x = n.expandRank(x, rank);
  y = n.expandRank(y, rank);
  n.setOutput(0, tosa::SelectOp::create(
                     n.b, n.loc, NodeImporter::withShape(x, *s), c, x, y));
  return success();
}

/// ONNX Cast truncates floats toward zero when converting to integers and
/// maps nonzero to true; tosa.cast rounds to nearest, so both get explicit
/// handling.
static LogicalResult lowerCast(NodeImporter &n) {
  Value x = n.input(0);
  Type to = convertElementType(n.b.getContext(), n.intAttr("to", 0));
  if (!to)
    return n.unsupported(
        "Cast to " +
        onnx::TensorProto::DataType_Name(
            static_cast<onnx::TensorProto::DataType>(n.intAttr("to", 0))) +
        "; zero-opt casts between bool, signed integers of 8 to 64 bits, "
        "float16, bfloat16, float and double");
  Type from = NodeImporter::eltOf(x);
  int64_t rank = NodeImporter::shapeOf(x).size();
  if (from == to) {
    n.setOutput(0, x);
    return success();
  }
  if (to.isInteger(1)) {
    Value zero = n.scalar(from, 0.0, rank);
    Value eq = *n.binary<tosa::EqualOp>(x, zero, n.b.getI1Type());
    n.setOutput(0, tosa::LogicalNotOp::create(n.b, n.loc, eq.getType(), eq));
    return success();
  }
  if (isa<FloatType>(from) && isa<IntegerType>(to)) {
    Value fl = tosa::FloorOp::create(n.b, n.loc, x.getType(), x);
    Value ce = tosa::CeilOp::create(n.b, n.loc, x.getType(), x);
    Value neg = *n.binary<tosa::GreaterOp>(n.scalar(from, 0.0, rank), x,
                                           n.b.getI1Type());
    x = tosa::SelectOp::create(n.b, n.loc, x.getType(), neg, ce, fl);
  }
  n.setOutput(0, n.castTo(x, to));
  return success();
}

void mlir::zero::onnx_import::registerElementwiseLowerings(
    llvm::StringMap<LoweringFn> &m) {
  m["Add"] = lowerBinary<tosa::AddOp>;
  m["Sub"] = lowerBinary<tosa::SubOp>;
  m["Mul"] = lowerMul;
  m["Div"] = lowerDiv;
  m["Pow"] = lowerPow;
  m["Sqrt"] = lowerSqrt;
  m["Reciprocal"] = lowerFloatUnary<tosa::ReciprocalOp>;
  m["Neg"] = lowerNeg;
  m["Exp"] = lowerFloatUnary<tosa::ExpOp>;
  m["Log"] = lowerFloatUnary<tosa::LogOp>;
  m["Erf"] = lowerFloatUnary<tosa::ErfOp>;
  m["Tanh"] = lowerFloatUnary<tosa::TanhOp>;
  m["Sigmoid"] = lowerFloatUnary<tosa::SigmoidOp>;
  m["Sin"] = lowerFloatUnary<tosa::SinOp>;
  m["Cos"] = lowerFloatUnary<tosa::CosOp>;
  m["Floor"] = lowerFloatUnary<tosa::FloorOp>;
  m["Ceil"] = lowerFloatUnary<tosa::CeilOp>;
  m["Abs"] = lowerUnary<tosa::AbsOp>;
  m["Relu"] = lowerRelu;
  m["Clip"] = lowerClip;
  m["LeakyRelu"] = lowerLeakyRelu;
  m["PRelu"] = lowerPRelu;
  m["Elu"] = lowerElu;
  m["Selu"] = lowerSelu;
  m["Softplus"] = lowerSoftplus;
  m["Softsign"] = lowerSoftsign;
  m["HardSigmoid"] = lowerHardSigmoid;
  m["HardSwish"] = lowerHardSwish;
  m["ThresholdedRelu"] = lowerThresholdedRelu;
  m["Sign"] = lowerSign;
  m["Max"] = lowerVariadic<tosa::MaximumOp>;
  m["Min"] = lowerVariadic<tosa::MinimumOp>;
  m["Sum"] = lowerVariadic<tosa::AddOp>;
  m["Mean"] = lowerMean;
  m["Equal"] = lowerCompare<tosa::EqualOp, false, false>;
  m["Greater"] = lowerCompare<tosa::GreaterOp, false, false>;
  m["Less"] = lowerCompare<tosa::GreaterOp, true, false>;
  m["GreaterOrEqual"] = lowerCompare<tosa::GreaterEqualOp, false, false>;
  m["LessOrEqual"] = lowerCompare<tosa::GreaterEqualOp, true, false>;
  m["And"] = lowerLogical<tosa::LogicalAndOp>;
  m["Or"] = lowerLogical<tosa::LogicalOrOp>;
  m["Xor"] = lowerLogical<tosa::LogicalXorOp>;
  m["Not"] = lowerUnary<tosa::LogicalNotOp>;
  m["Where"] = lowerWhere;
  m["Cast"] = lowerCast;
}
