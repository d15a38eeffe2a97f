//===- TrainingOps.cpp - ai.onnx.preview.training ops -----------*- C++ -*-===//
//
// ONNX's optimizer ops with their exact ONNX semantics (which differ from
// PyTorch's: epsilon inside the bias correction for Adam, T = 0 meaning
// "no correction"), and Gradient as zero.gradient of the replicas' mean
// loss.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

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
        return n.unsupported("non-floating-point tensors to optimize; "
                             "parameters, gradients and states must be "
                             "float");
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

/// Visits the values `root` is computed from in its block, root first,
/// without going past a value for which `visit` returns false.
static void walkDefinitions(Value root, llvm::function_ref<bool(Value)> visit) {
  DenseSet<Value> seen;
  SmallVector<Value> work = {root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second || !visit(v))
      continue;
    if (Operation *def = v.getDefiningOp())
      llvm::append_range(work, def->getOperands());
  }
}

/// d y / d xs (ONNX: the names in xs, zs and y define the differentiated
/// graph; the node's inputs, xs then zs, are where it is evaluated). In a
/// data-parallel step y is each replica's loss and the Gradient is that of
/// the global loss, their mean: a replicated x's gradient is summed over
/// the replicas, and every gradient is divided by their count.
static LogicalResult lowerGradient(NodeImporter &n) {
  const onnx::AttributeProto *xs = n.attr("xs"), *y = n.attr("y"),
                             *zs = n.attr("zs");
  if (!xs || !y)
    return n.error() << "Gradient requires attributes 'xs' and 'y'", failure();
  SmallVector<std::string> names(xs->strings().begin(), xs->strings().end());
  unsigned k = names.size();
  if (zs)
    names.append(zs->strings().begin(), zs->strings().end());
  if (n.numInputs() != names.size())
    return n.error() << "Gradient has " << n.numInputs() << " inputs but names "
                     << k << " in xs and " << names.size() - k
                     << " in zs; its inputs are the values at which to "
                        "differentiate, xs then zs",
           failure();
  Value yv = n.state.lookup(y->s());
  if (!yv)
    return n.error() << "Gradient's y '" << y->s()
                     << "' is not computed before the Gradient node",
           failure();
  auto yt = cast<RankedTensorType>(yv.getType());
  if (yt.getNumElements() != 1 || !isa<FloatType>(yt.getElementType()))
    return n.unsupported("Gradient of a non-scalar or non-float y; reduce "
                         "it to one float (ReduceSum or ReduceMean)");
  SmallVector<Value> named, at;
  for (auto [i, name] : llvm::enumerate(names)) {
    const char *list = i < k ? "xs" : "zs";
    Value v = n.state.lookup(name);
    if (!v)
      return n.error() << "Gradient's " << list << " names '" << name
                       << "', which is not a value of the graph",
             failure();
    if (i < k && !isa<FloatType>(NodeImporter::eltOf(v)))
      return n.error() << "Gradient's x '" << name
                       << "' is not a floating-point value",
             failure();
    if (!n.hasInput(i) || n.input(i).getType() != v.getType())
      return n.error() << "Gradient's input " << i << " must have the type of '"
                       << name << "', " << v.getType(),
             failure();
    named.push_back(v);
    at.push_back(n.input(i));
  }
  // xs and zs are independent variables: none is computed from another.
  DenseSet<Value> leaves(named.begin(), named.end());
  for (auto [i, v] : llvm::enumerate(named)) {
    std::optional<unsigned> from;
    walkDefinitions(v, [&](Value d) {
      if (d != v && leaves.contains(d))
        from = llvm::find(named, d) - named.begin();
      return !from && (d == v || !leaves.contains(d));
    });
    if (from)
      return n.error() << "Gradient's '" << names[i] << "' is computed from '"
                       << names[*from]
                       << "'; xs and zs must be independent variables (an "
                          "intermediate value can be differentiated by "
                          "naming it without its inputs)",
             failure();
  }
  // Evaluated elsewhere than at the named values: a copy of the graph
  // between them and y, fed the node's inputs.
  Value target = yv;
  SmallVector<Value> wrt(named.begin(), named.begin() + k);
  if (at != named) {
    DenseSet<Operation *> slice;
    walkDefinitions(yv, [&](Value d) {
      if (leaves.contains(d))
        return false;
      if (Operation *def = d.getDefiningOp())
        slice.insert(def);
      return true;
    });
    IRMapping map;
    for (auto [v, a] : llvm::zip(named, at))
      map.map(v, a);
    for (Operation &op : *n.state.entry)
      if (slice.contains(&op))
        n.b.clone(op, map);
    target = map.lookupOrDefault(yv);
    wrt.assign(at.begin(), at.begin() + k);
  }
  SmallVector<Type> types;
  for (Value x : wrt)
    types.push_back(x.getType());
  auto op = zero::GradientOp::create(n.b, n.loc, types, target, wrt);
  if (n.state.lossName.empty())
    n.state.lossName = y->s();
  auto fn = cast<func::FuncOp>(n.state.entry->getParentOp());
  for (unsigned i = 0; i < k; ++i) {
    if (!n.hasOutput(i))
      continue;
    Value g = op.getGrads()[i];
    if (!zero::findPerReplicaArgument(wrt[i], fn))
      g = zero::ReplicaSumOp::create(n.b, n.loc, g.getType(), g);
    auto t = cast<RankedTensorType>(g.getType());
    Value count = zero::ReplicaCountOp::create(
        n.b, n.loc,
        RankedTensorType::get(SmallVector<int64_t>(t.getRank(), 1),
                              t.getElementType()));
    n.setOutput(i, *n.div(g, count));
  }
  return success();
}

void mlir::zero::onnx_import::registerTrainingLowerings(
    llvm::StringMap<LoweringFn> &m) {
  m["Adam"] = lowerAdam;
  m["Adagrad"] = lowerAdagrad;
  m["Momentum"] = lowerMomentum;
  m["Gradient"] = lowerGradient;
}
