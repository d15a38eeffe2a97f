//===- TrainingOps.cpp - ai.onnx.preview.training ops -----------*- C++ -*-===//
//
// ONNX's optimizer ops with their exact ONNX semantics (which differ from
// PyTorch's: epsilon inside the bias correction for Adam, T = 0 meaning
// "no correction"), and Gradient as zero.gradient.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::zero::onnx_import;

namespace {
/// Scalar-broadcasting helpers over one tensor shape.
struct Ew {
  NodeImporter &n;
  Value sc(Value like, double v) {
    return n.scalar(NodeImporter::eltOf(like), v,
                    NodeImporter::shapeOf(like).size());
  }
  Value add(Value a, Value b) { return *n.binary<tosa::AddOp>(a, b); }
  Value sub(Value a, Value b) { return *n.binary<tosa::SubOp>(a, b); }
  Value mul(Value a, Value b) { return *n.mul(a, b); }
  Value div(Value a, Value b) { return *n.div(a, b); }
  Value sqrt(Value a) {
    Value init = tensor::EmptyOp::create(n.b, n.loc, NodeImporter::shapeOf(a),
                                         NodeImporter::eltOf(a));
    return linalg::SqrtOp::create(n.b, n.loc, ValueRange{a}, ValueRange{init})
        .getResult(0);
  }
  /// A scalar input (R or T) as an all-ones-shaped tensor of `like`'s
  /// element type and rank.
  Value scalarInput(Value s, Value like) {
    Value c = n.castTo(s, NodeImporter::eltOf(like));
    return n.reshape(
        c, SmallVector<int64_t>(NodeImporter::shapeOf(like).size(), 1));
  }
};

/// Splits Adam/Adagrad/Momentum's variadic inputs [R, T, X..., G..., S...]
/// into `groups` equal lists.
LogicalResult splitGroups(NodeImporter &n, unsigned groups,
                          SmallVectorImpl<SmallVector<Value>> &out) {
  unsigned rest = n.numInputs() - 2;
  if (n.numInputs() < 2 + groups || rest % groups)
    return n.error() << n.node.op_type() << " expects R, T and " << groups
                     << " equal lists of tensors",
           failure();
  unsigned k = rest / groups;
  out.assign(groups, {});
  for (unsigned g = 0; g < groups; ++g)
    for (unsigned i = 0; i < k; ++i) {
      Value v = n.input(2 + g * k + i);
      if (!isa<FloatType>(NodeImporter::eltOf(v)))
        return n.unsupported("non-floating-point optimizer tensors");
      out[g].push_back(v);
    }
  return success();
}
} // namespace

static LogicalResult lowerAdam(NodeImporter &n) {
  SmallVector<SmallVector<Value>> t;
  if (failed(splitGroups(n, 4, t)))
    return failure();
  double alpha = n.floatAttr("alpha", 0.9f), beta = n.floatAttr("beta", 0.999f);
  double eps = n.floatAttr("epsilon", 1e-6f);
  double nc = n.floatAttr("norm_coefficient", 0.0f),
         ncp = n.floatAttr("norm_coefficient_post", 0.0f);
  Ew e{n};
  size_t k = t[0].size();
  for (size_t i = 0; i < k; ++i) {
    Value x = t[0][i], g = t[1][i], v = t[2][i], h = t[3][i];
    Value r = e.scalarInput(n.input(0), x), tt = e.scalarInput(n.input(1), x);
    Value gr = e.add(e.mul(e.sc(x, nc), x), g);
    Value v2 = e.add(e.mul(e.sc(v, alpha), v), e.mul(e.sc(v, 1 - alpha), gr));
    Value h2 =
        e.add(e.mul(e.sc(h, beta), h), e.mul(e.sc(h, 1 - beta), e.mul(gr, gr)));
    Value hs = e.add(e.sqrt(h2), e.sc(h2, eps));
    // R * sqrt(1 - beta^T) / (1 - alpha^T) when T > 0, else R.
    Value bT =
        tosa::PowOp::create(n.b, n.loc, tt.getType(), e.sc(tt, beta), tt);
    Value aT =
        tosa::PowOp::create(n.b, n.loc, tt.getType(), e.sc(tt, alpha), tt);
    Value corr =
        e.div(e.sqrt(e.sub(e.sc(tt, 1.0), bT)), e.sub(e.sc(tt, 1.0), aT));
    Value positive =
        *n.binary<tosa::GreaterOp>(tt, e.sc(tt, 0.0), n.b.getI1Type());
    Value radj = tosa::SelectOp::create(n.b, n.loc, r.getType(), positive,
                                        e.mul(r, corr), r);
    Value x2 = e.sub(x, e.mul(radj, e.div(v2, hs)));
    x2 = e.mul(e.sc(x2, 1 - ncp), x2);
    n.setOutput(i, x2);
    n.setOutput(k + i, v2);
    n.setOutput(2 * k + i, h2);
  }
  return success();
}

static LogicalResult lowerAdagrad(NodeImporter &n) {
  SmallVector<SmallVector<Value>> t;
  if (failed(splitGroups(n, 3, t)))
    return failure();
  double eps = n.floatAttr("epsilon", 1e-6f);
  double decay = n.floatAttr("decay_factor", 0.0f);
  double nc = n.floatAttr("norm_coefficient", 0.0f);
  Ew e{n};
  size_t k = t[0].size();
  for (size_t i = 0; i < k; ++i) {
    Value x = t[0][i], g = t[1][i], h = t[2][i];
    Value r = e.scalarInput(n.input(0), x), tt = e.scalarInput(n.input(1), x);
    // r = R / (1 + T * decay_factor)
    Value rr = e.div(r, e.add(e.sc(tt, 1.0), e.mul(tt, e.sc(tt, decay))));
    Value gr = e.add(e.mul(e.sc(x, nc), x), g);
    Value h2 = e.add(h, e.mul(gr, gr));
    Value x2 = e.sub(x, e.div(e.mul(rr, gr), e.add(e.sqrt(h2), e.sc(h2, eps))));
    n.setOutput(i, x2);
    n.setOutput(k + i, h2);
  }
  return success();
}

static LogicalResult lowerMomentum(NodeImporter &n) {
  SmallVector<SmallVector<Value>> t;
  if (failed(splitGroups(n, 3, t)))
    return failure();
  for (StringRef a : {"alpha", "beta", "norm_coefficient", "mode"})
    if (!n.attr(a))
      return n.error() << "Momentum requires attribute '" << a << "'",
             failure();
  double alpha = n.floatAttr("alpha", 0), beta = n.floatAttr("beta", 0);
  double nc = n.floatAttr("norm_coefficient", 0);
  std::string mode = n.stringAttr("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return n.error() << "Momentum mode must be 'standard' or 'nesterov', got '"
                     << mode << "'",
           failure();
  Ew e{n};
  size_t k = t[0].size();
  for (size_t i = 0; i < k; ++i) {
    Value x = t[0][i], g = t[1][i], v = t[2][i];
    Value r = e.scalarInput(n.input(0), x), tt = e.scalarInput(n.input(1), x);
    Value gr = e.add(e.mul(e.sc(x, nc), x), g);
    // The first step (T = 0) takes the whole gradient.
    Value positive =
        *n.binary<tosa::GreaterOp>(tt, e.sc(tt, 0.0), n.b.getI1Type());
    Value ba = tosa::SelectOp::create(n.b, n.loc, tt.getType(), positive,
                                      e.sc(tt, beta), e.sc(tt, 1.0));
    Value v2 = e.add(e.mul(e.sc(v, alpha), v), e.mul(ba, gr));
    Value step =
        mode == "standard" ? v2 : e.add(gr, e.mul(e.sc(v2, alpha), v2));
    n.setOutput(i, e.sub(x, e.mul(r, step)));
    n.setOutput(k + i, v2);
  }
  return success();
}

/// d y / d xs as zero.gradient over the ops already imported.
static LogicalResult lowerGradient(NodeImporter &n) {
  const onnx::AttributeProto *xs = n.attr("xs"), *y = n.attr("y");
  if (!xs || !y)
    return n.error() << "Gradient requires attributes 'xs' and 'y'", failure();
  if (n.attr("zs") && n.attr("zs")->strings_size())
    return n.unsupported("Gradient with zs");
  Value yv = n.state.lookup(y->s());
  if (!yv)
    return n.error() << "Gradient's y '" << y->s()
                     << "' is not computed before the Gradient node",
           failure();
  auto yt = cast<RankedTensorType>(yv.getType());
  if (yt.getNumElements() != 1 || !isa<FloatType>(yt.getElementType()))
    return n.unsupported("Gradient of a non-scalar or non-float y");
  SmallVector<Value> xv;
  SmallVector<Type> types;
  for (const std::string &name : xs->strings()) {
    Value v = n.state.lookup(name);
    if (!v || !isa<FloatType>(NodeImporter::eltOf(v)))
      return n.error() << "Gradient's x '" << name
                       << "' is not a floating-point value of the graph",
             failure();
    xv.push_back(v);
    types.push_back(v.getType());
  }
  auto op = zero::GradientOp::create(n.b, n.loc, types, yv, xv);
  for (unsigned i = 0; i < xv.size(); ++i)
    n.setOutput(i, op.getGrads()[i]);
  return success();
}

void mlir::zero::onnx_import::registerTrainingLowerings(
    llvm::StringMap<LoweringFn> &m) {
  m["Adam"] = lowerAdam;
  m["Adagrad"] = lowerAdagrad;
  m["Momentum"] = lowerMomentum;
  m["Gradient"] = lowerGradient;
}
