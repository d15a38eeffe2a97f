//===- ConstantFolding.cpp - shape arithmetic evaluated at import -*- C++ -*-===//
//
// Exporters compute shapes with ops (Shape -> Gather -> Div -> Concat ->
// Reshape, Where over shapes, Range, ...). Shapes are static here, so every
// node whose inputs are all known is evaluated while importing, in any
// integer type, with ONNX's semantics; Reshape, Expand and Slice then see
// constant operands. Float nodes of constants are evaluated too (in double,
// rounded once to the element type, which is the correctly rounded result
// for + - * / and sqrt). Large results stay ops: folding is for shapes and
// small tables, not for materializing tensors.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

#include "llvm/ADT/StringSwitch.h"

#include <array>

#include <cmath>
#include <functional>
#include <numeric>

using namespace mlir;
using namespace mlir::zero::onnx_import;

/// Beyond this many elements a result is data, not a shape or a table.
constexpr int64_t kMaxFoldedElements = 1 << 16;
/// A node that only moves or maps a constant's elements (a slice, a
/// reshape, Not, Cast, ...) gives a constant no larger than it: folded up
/// to this many elements, so that a model's `Not(mask[:T, :T])` over 1024
/// x 1024 tokens is a constant mask the compiler reads (which blocks of a
/// GEMM it hides) rather than ops run every step.
constexpr int64_t kMaxFoldedViewElements = 1 << 24;

namespace {
/// A constant tensor being evaluated: floats as double, integers and
/// booleans as int64 (all ONNX integer types imported are signed).
struct Lit {
  SmallVector<int64_t> shape;
  Type elt;
  std::vector<double> f;
  std::vector<int64_t> i;

  bool isFloat() const { return isa<FloatType>(elt); }
  int64_t size() const {
    return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                           std::multiplies<int64_t>());
  }
  double get(int64_t k) const { return isFloat() ? f[k] : (double)i[k]; }
  void resize(int64_t n) { isFloat() ? f.resize(n) : i.resize(n); }
};
} // namespace

static Lit toLit(DenseElementsAttr a) {
  Lit l;
  l.shape.assign(a.getType().getShape().begin(), a.getType().getShape().end());
  l.elt = a.getElementType();
  if (l.isFloat()) {
    for (APFloat v : a.getValues<APFloat>()) {
      bool lost;
      v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      l.f.push_back(v.convertToDouble());
    }
  } else {
    bool isBool = l.elt.isInteger(1);
    for (APInt v : a.getValues<APInt>())
      l.i.push_back(isBool ? (int64_t)v.getZExtValue() : v.getSExtValue());
  }
  return l;
}

static DenseElementsAttr toAttr(const Lit &l) {
  auto type = RankedTensorType::get(l.shape, l.elt);
  if (auto ft = dyn_cast<FloatType>(l.elt)) {
    SmallVector<APFloat> vals;
    for (double d : l.f) {
      APFloat v(d);
      bool lost;
      v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(v);
    }
    return DenseElementsAttr::get(type, vals);
  }
  unsigned width = l.elt.getIntOrFloatBitWidth();
  SmallVector<APInt> vals;
  for (int64_t v : l.i)
    vals.push_back(APInt(width, width == 1 ? (v != 0) : (uint64_t)v,
                         /*isSigned=*/width != 1, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, vals);
}

static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// Flat index into `in` (numpy-broadcast to `out`) of output element `k`.
static int64_t broadcastIndex(int64_t k, ArrayRef<int64_t> out,
                              ArrayRef<int64_t> in) {
  int64_t idx = 0, stride = 1;
  size_t lead = out.size() - in.size();
  for (int64_t d = (int64_t)out.size() - 1; d >= 0; --d) {
    int64_t coord = k % out[d];
    k /= out[d];
    if (d >= (int64_t)lead) {
      int64_t dim = in[d - lead];
      idx += (dim == 1 ? 0 : coord) * stride;
      stride *= dim;
    }
  }
  return idx;
}

namespace {
/// Evaluates one single-output node. Nothing means "not evaluated here"
/// (the node's lowering runs); failure, an error emitted at the node.
class Evaluator {
public:
  Evaluator(NodeImporter &n, SmallVector<Lit> in) : n(n), in(std::move(in)) {}

  FailureOr<std::optional<Lit>> run();

private:
  NodeImporter &n;
  SmallVector<Lit> in;
  bool hardError = false;

  LogicalResult error(const Twine &msg) {
    n.error() << msg;
    hardError = true;
    return failure();
  }
  FailureOr<SmallVector<int64_t>> shapeOfAll(ArrayRef<const Lit *> ops);
  std::optional<Lit> elementwise(ArrayRef<const Lit *> ops, Type elt,
                                 function_ref<double(ArrayRef<double>)> fn);
  FailureOr<int64_t> axis(int64_t a, int64_t rank);

  std::optional<Lit> binary(StringRef op);
  std::optional<Lit> unary(StringRef op);
  std::optional<Lit> cast();
  std::optional<Lit> gather();
  std::optional<Lit> concat();
  std::optional<Lit> unsqueeze();
  std::optional<Lit> squeeze();
  std::optional<Lit> reshape();
  std::optional<Lit> slice();
  std::optional<Lit> range();
  std::optional<Lit> expand();
  std::optional<Lit> where();
};
} // namespace

FailureOr<SmallVector<int64_t>>
Evaluator::shapeOfAll(ArrayRef<const Lit *> ops) {
  SmallVector<int64_t> out;
  for (const Lit *l : ops) {
    auto s = n.broadcastShape(out, l->shape);
    if (failed(s)) {
      hardError = true;
      return failure();
    }
    out = *s;
  }
  return out;
}

std::optional<Lit>
Evaluator::elementwise(ArrayRef<const Lit *> ops, Type elt,
                       function_ref<double(ArrayRef<double>)> fn) {
  auto shape = shapeOfAll(ops);
  if (failed(shape))
    return std::nullopt;
  Lit r;
  r.shape = *shape;
  r.elt = elt;
  int64_t count = r.size();
  r.resize(count);
  SmallVector<double> args(ops.size());
  for (int64_t k = 0; k < count; ++k) {
    for (auto [j, l] : llvm::enumerate(ops))
      args[j] = l->get(broadcastIndex(k, r.shape, l->shape));
    double v = fn(args);
    if (r.isFloat())
      r.f[k] = v;
    else
      r.i[k] = (int64_t)v;
  }
  return r;
}

FailureOr<int64_t> Evaluator::axis(int64_t a, int64_t rank) {
  auto r = n.normalizeAxis(a, rank);
  hardError |= failed(r);
  return r;
}

std::optional<Lit> Evaluator::binary(StringRef op) {
  const Lit &a = in[0], &b = in[1];
  bool fl = a.isFloat();
  bool isCompare = llvm::is_contained(
      {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}, op);
  Type elt = isCompare ? n.b.getI1Type() : a.elt;
  // Integers are exact in int64, not in double: evaluate apart.
  if (!fl) {
    auto shape = shapeOfAll({&a, &b});
    if (failed(shape))
      return std::nullopt;
    Lit r;
    r.shape = *shape;
    r.elt = elt;
    r.i.resize(r.size());
    bool fmod = n.intAttr("fmod", 0) != 0;
    for (int64_t k = 0, e = r.size(); k < e; ++k) {
      int64_t x = a.i[broadcastIndex(k, r.shape, a.shape)];
      int64_t y = b.i[broadcastIndex(k, r.shape, b.shape)];
      if ((op == "Div" || op == "Mod") && y == 0) {
        (void)error(Twine(op) + " by zero in a constant expression");
        return std::nullopt;
      }
      int64_t v = 0;
      if (op == "Add")
        v = x + y;
      else if (op == "Sub")
        v = x - y;
      else if (op == "Mul")
        v = x * y;
      else if (op == "Div")
        v = x / y; // ONNX integer Div truncates, as C does
      else if (op == "Mod") {
        v = x % y;
        if (!fmod && v != 0 && ((v < 0) != (y < 0)))
          v += y; // the sign of the divisor, as Python's %
      } else if (op == "Max")
        v = std::max(x, y);
      else if (op == "Min")
        v = std::min(x, y);
      else if (op == "And")
        v = x && y;
      else if (op == "Or")
        v = x || y;
      else if (op == "Xor")
        v = (x != 0) != (y != 0);
      else if (op == "Equal")
        v = x == y;
      else if (op == "Less")
        v = x < y;
      else if (op == "Greater")
        v = x > y;
      else if (op == "LessOrEqual")
        v = x <= y;
      else if (op == "GreaterOrEqual")
        v = x >= y;
      r.i[k] = v;
    }
    return r;
  }
  using Fn = double (*)(double, double);
  Fn f = llvm::StringSwitch<Fn>(op)
             .Case("Add", [](double x, double y) { return x + y; })
             .Case("Sub", [](double x, double y) { return x - y; })
             .Case("Mul", [](double x, double y) { return x * y; })
             .Case("Div", [](double x, double y) { return x / y; })
             .Case("Max", [](double x, double y) { return std::max(x, y); })
             .Case("Min", [](double x, double y) { return std::min(x, y); })
             .Case("Equal", [](double x, double y) { return double(x == y); })
             .Case("Less", [](double x, double y) { return double(x < y); })
             .Case("Greater", [](double x, double y) { return double(x > y); })
             .Case("LessOrEqual",
                   [](double x, double y) { return double(x <= y); })
             .Case("GreaterOrEqual",
                   [](double x, double y) { return double(x >= y); })
             .Default(nullptr);
  if (!f)
    return std::nullopt; // float Mod, float logic
  // Float results round to the element type once, when stored.
  return elementwise({&a, &b}, elt,
                     [&](ArrayRef<double> v) { return f(v[0], v[1]); });
}

std::optional<Lit> Evaluator::unary(StringRef op) {
  const Lit &a = in[0];
  if (!a.isFloat() && llvm::is_contained({"Sqrt", "Reciprocal"}, op))
    return std::nullopt;
  using FloatFn = double (*)(double);
  using IntFn = int64_t (*)(int64_t);
  auto identity = [](double x) { return x; };
  FloatFn ff = llvm::StringSwitch<FloatFn>(op)
                   .Case("Neg", [](double x) { return -x; })
                   .Case("Abs", [](double x) { return std::fabs(x); })
                   .Case("Sqrt", [](double x) { return std::sqrt(x); })
                   .Case("Reciprocal", [](double x) { return 1.0 / x; })
                   .Case("Floor", [](double x) { return std::floor(x); })
                   .Case("Ceil", [](double x) { return std::ceil(x); })
                   .Case("Sign",
                         [](double x) { return double((x > 0) - (x < 0)); })
                   .Default(identity);
  IntFn fi = llvm::StringSwitch<IntFn>(op)
                 .Case("Neg", [](int64_t x) { return -x; })
                 .Case("Abs", [](int64_t x) { return x < 0 ? -x : x; })
                 .Case("Not", [](int64_t x) { return int64_t(x == 0); })
                 .Case("Sign",
                       [](int64_t x) { return int64_t((x > 0) - (x < 0)); })
                 .Default([](int64_t x) { return x; });
  Lit r = a;
  for (int64_t k = 0, e = a.size(); k < e; ++k) {
    if (a.isFloat())
      r.f[k] = ff(a.f[k]);
    else
      r.i[k] = fi(a.i[k]);
  }
  return r;
}

std::optional<Lit> Evaluator::cast() {
  Type to = convertElementType(n.b.getContext(), n.intAttr("to", 0));
  if (!to)
    return std::nullopt;
  const Lit &a = in[0];
  Lit r;
  r.shape = a.shape;
  r.elt = to;
  r.resize(a.size());
  for (int64_t k = 0, e = a.size(); k < e; ++k) {
    if (r.isFloat())
      r.f[k] = a.get(k);
    else if (to.isInteger(1))
      r.i[k] = a.get(k) != 0;
    else if (a.isFloat())
      r.i[k] = (int64_t)std::trunc(a.f[k]);
    else
      r.i[k] = a.i[k];
  }
  // Narrowing integer casts wrap, as two's complement stores them.
  if (!r.isFloat() && !to.isInteger(1))
    r = toLit(toAttr(r));
  return r;
}

/// Copies the elements of `a` at the given flat indices.
static Lit gatherFlat(const Lit &a, ArrayRef<int64_t> shape,
                      ArrayRef<int64_t> flat) {
  Lit r;
  r.shape.assign(shape.begin(), shape.end());
  r.elt = a.elt;
  for (int64_t k : flat) {
    if (a.isFloat())
      r.f.push_back(a.f[k]);
    else
      r.i.push_back(a.i[k]);
  }
  return r;
}

std::optional<Lit> Evaluator::gather() {
  const Lit &data = in[0], &idx = in[1];
  int64_t rank = data.shape.size();
  auto ax = axis(n.intAttr("axis", 0), rank);
  if (failed(ax))
    return std::nullopt;
  int64_t dim = data.shape[*ax];
  SmallVector<int64_t> shape(data.shape.begin(), data.shape.begin() + *ax);
  llvm::append_range(shape, idx.shape);
  shape.append(data.shape.begin() + *ax + 1, data.shape.end());
  SmallVector<int64_t> ds = stridesOf(data.shape);
  int64_t outer = 1, inner = ds[*ax];
  for (int64_t d = 0; d < *ax; ++d)
    outer *= data.shape[d];
  SmallVector<int64_t> flat;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j : idx.i) {
      if (j < -dim || j >= dim) {
        (void)error("Gather index " + Twine(j) + " is out of range for axis " +
                    Twine(*ax) + " of size " + Twine(dim));
        return std::nullopt;
      }
      if (j < 0)
        j += dim;
      for (int64_t k = 0; k < inner; ++k)
        flat.push_back(o * dim * inner + j * inner + k);
    }
  return gatherFlat(data, shape, flat);
}

std::optional<Lit> Evaluator::concat() {
  int64_t rank = in[0].shape.size();
  auto ax = axis(n.intAttr("axis", 0), rank);
  if (failed(ax))
    return std::nullopt;
  Lit r;
  r.elt = in[0].elt;
  r.shape = in[0].shape;
  r.shape[*ax] = 0;
  for (const Lit &l : in) {
    if ((int64_t)l.shape.size() != rank)
      return std::nullopt;
    r.shape[*ax] += l.shape[*ax];
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < *ax; ++d)
    outer *= r.shape[d];
  for (int64_t o = 0; o < outer; ++o)
    for (const Lit &l : in) {
      int64_t chunk = outer ? l.size() / outer : 0;
      for (int64_t k = 0; k < chunk; ++k) {
        if (r.isFloat())
          r.f.push_back(l.f[o * chunk + k]);
        else
          r.i.push_back(l.i[o * chunk + k]);
      }
    }
  return r;
}

/// Axes from input 1 (newer opsets) or the `axes` attribute.
static std::optional<SmallVector<int64_t>> axesOf(NodeImporter &n,
                                                  ArrayRef<Lit> in) {
  if (in.size() > 1)
    return SmallVector<int64_t>(in[1].i.begin(), in[1].i.end());
  return n.intsAttr("axes");
}

std::optional<Lit> Evaluator::unsqueeze() {
  auto axes = axesOf(n, in);
  if (!axes)
    return std::nullopt;
  int64_t rank = in[0].shape.size() + axes->size();
  SmallVector<bool> isNew(rank, false);
  for (int64_t a : *axes) {
    auto ax = axis(a, rank);
    if (failed(ax))
      return std::nullopt;
    isNew[*ax] = true;
  }
  Lit r = in[0];
  r.shape.clear();
  for (int64_t d = 0, j = 0; d < rank; ++d)
    r.shape.push_back(isNew[d] ? 1 : in[0].shape[j++]);
  return r;
}

std::optional<Lit> Evaluator::squeeze() {
  auto axes = axesOf(n, in);
  int64_t rank = in[0].shape.size();
  SmallVector<bool> drop(rank, false);
  if (axes) {
    for (int64_t a : *axes) {
      auto ax = axis(a, rank);
      if (failed(ax))
        return std::nullopt;
      drop[*ax] = true;
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      drop[d] = in[0].shape[d] == 1;
  }
  Lit r = in[0];
  r.shape.clear();
  for (int64_t d = 0; d < rank; ++d)
    if (!drop[d])
      r.shape.push_back(in[0].shape[d]);
  return r;
}

std::optional<Lit> Evaluator::reshape() {
  const Lit &a = in[0];
  bool allowZero = n.intAttr("allowzero", 0) != 0;
  SmallVector<int64_t> shape(in[1].i.begin(), in[1].i.end());
  int64_t known = 1, infer = -1;
  for (auto [d, s] : llvm::enumerate(shape)) {
    if (s == 0 && !allowZero)
      s = d < a.shape.size() ? a.shape[d] : 0;
    if (s == -1)
      infer = d;
    else
      known *= s;
  }
  if (infer >= 0)
    shape[infer] = known ? a.size() / known : 0;
  Lit r = a;
  r.shape = shape;
  if (r.size() != a.size())
    return std::nullopt; // the lowering reports the mismatch
  return r;
}

std::optional<Lit> Evaluator::slice() {
  const Lit &a = in[0];
  int64_t rank = a.shape.size();
  auto vec = [&](unsigned i) {
    return SmallVector<int64_t>(in[i].i.begin(), in[i].i.end());
  };
  if (in.size() < 3)
    return std::nullopt; // opset < 10 slices by attributes
  SmallVector<int64_t> starts = vec(1), ends = vec(2), axes, steps;
  if (in.size() > 3 && !in[3].shape.empty() && in[3].size() > 0)
    axes = vec(3);
  else
    for (int64_t d = 0; d < (int64_t)starts.size(); ++d)
      axes.push_back(d);
  steps = in.size() > 4 ? vec(4) : SmallVector<int64_t>(starts.size(), 1);
  SmallVector<int64_t> lo(rank, 0), step(rank, 1), count(a.shape);
  for (auto [j, ax0] : llvm::enumerate(axes)) {
    auto ax = axis(ax0, rank);
    if (failed(ax))
      return std::nullopt;
    int64_t dim = a.shape[*ax], st = steps[j];
    if (st == 0) {
      (void)error("Slice step 0 on axis " + Twine(*ax));
      return std::nullopt;
    }
    int64_t s = starts[j], e = ends[j];
    s = s < 0 ? s + dim : s;
    e = e < 0 ? e + dim : e;
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count[*ax] = e > s ? (e - s + st - 1) / st : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      count[*ax] = s > e ? (s - e - st - 1) / -st : 0;
    }
    lo[*ax] = s;
    step[*ax] = st;
  }
  SmallVector<int64_t> as = stridesOf(a.shape), flat;
  int64_t total = std::accumulate(count.begin(), count.end(), int64_t{1},
                                  std::multiplies<int64_t>());
  for (int64_t k = 0; k < total; ++k) {
    int64_t rem = k, idx = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t c = rem % count[d];
      rem /= count[d];
      idx += (lo[d] + c * step[d]) * as[d];
    }
    flat.push_back(idx);
  }
  return gatherFlat(a, count, flat);
}

std::optional<Lit> Evaluator::range() {
  Lit r;
  r.elt = in[0].elt;
  double start = in[0].get(0), limit = in[1].get(0), delta = in[2].get(0);
  if (delta == 0) {
    (void)error("Range with delta 0");
    return std::nullopt;
  }
  int64_t count =
      std::max<int64_t>(0, (int64_t)std::ceil((limit - start) / delta));
  if (count > kMaxFoldedElements)
    return std::nullopt;
  r.shape = {count};
  for (int64_t k = 0; k < count; ++k) {
    if (r.isFloat())
      r.f.push_back(start + k * delta);
    else
      r.i.push_back(in[0].i[0] + k * in[2].i[0]);
  }
  return r;
}

std::optional<Lit> Evaluator::expand() {
  // Bidirectional: the result has the broadcast of both shapes.
  auto shape = n.broadcastShape(in[0].shape, in[1].i);
  if (failed(shape)) {
    hardError = true;
    return std::nullopt;
  }
  SmallVector<int64_t> flat;
  int64_t total = std::accumulate(shape->begin(), shape->end(), int64_t{1},
                                  std::multiplies<int64_t>());
  if (total > kMaxFoldedElements)
    return std::nullopt;
  for (int64_t k = 0; k < total; ++k)
    flat.push_back(broadcastIndex(k, *shape, in[0].shape));
  return gatherFlat(in[0], *shape, flat);
}

std::optional<Lit> Evaluator::where() {
  auto shape = shapeOfAll({&in[0], &in[1], &in[2]});
  if (failed(shape))
    return std::nullopt;
  Lit r;
  r.shape = *shape;
  r.elt = in[1].elt;
  for (int64_t k = 0, e = r.size(); k < e; ++k) {
    bool c = in[0].i[broadcastIndex(k, r.shape, in[0].shape)];
    const Lit &src = c ? in[1] : in[2];
    int64_t j = broadcastIndex(k, r.shape, src.shape);
    if (r.isFloat())
      r.f.push_back(src.f[j]);
    else
      r.i.push_back(src.i[j]);
  }
  return r;
}

static constexpr std::array<StringLiteral, 15> kBinaryOps = {
    "Add",   "Sub",  "Mul",     "Div",         "Mod",
    "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
    "And",   "Or",   "Xor",     "Max",         "Min"};
static constexpr std::array<StringLiteral, 9> kUnaryOps = {
    "Neg",  "Abs",  "Sqrt", "Reciprocal", "Floor",
    "Ceil", "Sign", "Not",  "Identity"};
/// Nodes whose result takes its elements from one input's.
static constexpr std::array<StringLiteral, 6> kViewOps = {
    "Cast", "Unsqueeze", "Squeeze", "Reshape", "Slice", "Identity"};
static constexpr std::array<StringLiteral, 10> kShapeOps = {
    "Cast",    "Gather", "Concat", "Unsqueeze", "Squeeze",
    "Reshape", "Slice",  "Range",  "Expand",    "Where"};

FailureOr<std::optional<Lit>> Evaluator::run() {
  StringRef op = n.node.op_type();
  std::optional<Lit> r;
  if (llvm::is_contained(kBinaryOps, op) && in.size() == 2)
    r = binary(op);
  else if (llvm::is_contained(kUnaryOps, op))
    r = unary(op);
  else if (op == "Cast")
    r = cast();
  else if (op == "Gather")
    r = gather();
  else if (op == "Concat")
    r = concat();
  else if (op == "Unsqueeze")
    r = unsqueeze();
  else if (op == "Squeeze")
    r = squeeze();
  else if (op == "Reshape")
    r = reshape();
  else if (op == "Slice")
    r = slice();
  else if (op == "Range")
    r = range();
  else if (op == "Expand")
    r = expand();
  else if (op == "Where")
    r = where();
  if (hardError)
    return failure();
  return r;
}

FailureOr<bool> mlir::zero::onnx_import::foldConstantNode(NodeImporter &n) {
  if (n.node.domain() != "" && n.node.domain() != "ai.onnx")
    return false;
  StringRef op = n.node.op_type();
  bool view =
      llvm::is_contained(kUnaryOps, op) || llvm::is_contained(kViewOps, op);
  int64_t limit = view ? kMaxFoldedViewElements : kMaxFoldedElements;
  int64_t largest = 0;
  SmallVector<Lit> in;
  for (unsigned i = 0; i < n.numInputs(); ++i) {
    if (!n.hasInput(i)) {
      // Optional inputs may only be left out at the end.
      if (llvm::any_of(llvm::seq<unsigned>(i + 1, n.numInputs()),
                       [&](unsigned j) { return n.hasInput(j); }))
        return false;
      break;
    }
    // Only values known as constants: data propagation also "knows" values
    // computed from initializers that a training graph updates every step.
    auto it = n.state.constants.find(n.node.input(i));
    if (it == n.state.constants.end() || it->second.getNumElements() > limit)
      return false;
    largest = std::max<int64_t>(largest, it->second.getNumElements());
    in.push_back(toLit(it->second));
  }
  if (in.empty())
    return false;
  Evaluator ev(n, std::move(in));
  auto out = ev.run();
  if (failed(out))
    return failure();
  if (!*out || ((*out)->size() > kMaxFoldedElements &&
                (!view || (*out)->size() > largest)))
    return false;
  n.setConstantOutput(0, toAttr(**out));
  return true;
}

std::vector<std::string> mlir::zero::onnx_import::foldableOps() {
  std::vector<std::string> ops;
  for (ArrayRef<StringLiteral> list :
       {ArrayRef<StringLiteral>(kBinaryOps), ArrayRef<StringLiteral>(kUnaryOps),
        ArrayRef<StringLiteral>(kShapeOps)})
    for (StringLiteral op : list)
      ops.push_back(op.str());
  return ops;
}
