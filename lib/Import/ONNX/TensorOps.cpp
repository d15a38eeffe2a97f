//===- TensorOps.cpp - data movement ONNX ops to TOSA/tensor ---*- C++ -*-===//
//
// Shapes are static after import, so every shape operand (Reshape's shape,
// Slice's starts, ...) must be known at compile time: from an initializer,
// a Constant node or ONNX data propagation.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::zero::onnx_import;

static LogicalResult lowerIdentity(NodeImporter &n) {
  if (auto c = n.constInput(0))
    n.setConstantOutput(0, *c);
  else
    n.setOutput(0, n.input(0));
  return success();
}

static LogicalResult lowerConstant(NodeImporter &n) {
  MLIRContext *ctx = n.b.getContext();
  DenseElementsAttr value;
  const onnx::AttributeProto *a = nullptr;
  for (const auto &at : n.node.attribute())
    a = &at;
  if (!a)
    return n.error() << "Constant has no value attribute", failure();
  StringRef name = a->name();
  if (name == "value") {
    std::string err;
    auto v = convertTensor(ctx, a->t(), err);
    if (failed(v))
      return n.error() << err, failure();
    value = *v;
  } else if (name == "value_float") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, n.b.getF32Type()),
                                   a->f());
  } else if (name == "value_floats") {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, n.b.getF32Type()),
        ArrayRef<float>(v));
  } else if (name == "value_int") {
    value = DenseElementsAttr::get(RankedTensorType::get({}, n.b.getI64Type()),
                                   (int64_t)a->i());
  } else if (name == "value_ints") {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    value = DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)v.size()}, n.b.getI64Type()),
        ArrayRef<int64_t>(v));
  } else {
    return n.unsupported(Twine("Constant attribute '") + name +
                         "'; zero-opt reads value, value_float(s) and "
                         "value_int(s): store the tensor densely");
  }
  n.setConstantOutput(0, value);
  return success();
}

static LogicalResult lowerConstantOfShape(NodeImporter &n) {
  auto shape = n.constInts(0, "shape");
  if (failed(shape))
    return failure();
  Type elt = n.b.getF32Type();
  Attribute val = n.b.getF32FloatAttr(0.0f);
  if (auto *a = n.attr("value")) {
    std::string err;
    auto v = convertTensor(n.b.getContext(), a->t(), err);
    if (failed(v))
      return n.error() << err, failure();
    elt = v->getElementType();
    val = *v->value_begin<Attribute>();
  }
  auto ty = RankedTensorType::get(*shape, elt);
  auto attr = DenseElementsAttr::get(ty, val);
  n.setConstantOutput(0, attr);
  return success();
}

static LogicalResult lowerShape(NodeImporter &n) {
  ArrayRef<int64_t> s = n.inputType(0).getShape();
  int64_t rank = s.size();
  auto clampIdx = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::clamp<int64_t>(v, 0, rank);
  };
  int64_t start = clampIdx(n.intAttr("start", 0));
  int64_t end = clampIdx(n.intAttr("end", rank));
  SmallVector<int64_t> vals;
  for (int64_t i = start; i < end; ++i)
    vals.push_back(s[i]);
  auto attr = DenseElementsAttr::get(
      RankedTensorType::get({(int64_t)vals.size()}, n.b.getI64Type()),
      ArrayRef<int64_t>(vals));
  n.setConstantOutput(0, attr);
  return success();
}

static LogicalResult lowerSize(NodeImporter &n) {
  auto attr =
      DenseElementsAttr::get(RankedTensorType::get({}, n.b.getI64Type()),
                             (int64_t)n.inputType(0).getNumElements());
  n.setConstantOutput(0, attr);
  return success();
}

/// Reshape to the shape ONNX inferred, checking it against the operand.
static LogicalResult reshapeToInferred(NodeImporter &n,
                                       ArrayRef<int64_t> shape) {
  Value x = n.input(0);
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  if (count != n.inputType(0).getNumElements())
    return n.error() << "shape mismatch: cannot reshape " << n.inputType(0)
                     << " to " << shape.size() << "-d shape with " << count
                     << " elements",
           failure();
  if (auto c = n.constInput(0)) {
    n.setConstantOutput(0, c->reshape(c->getType().clone(shape)));
    return success();
  }
  n.setOutput(0, n.reshape(x, shape));
  return success();
}

static LogicalResult lowerReshape(NodeImporter &n) {
  // Without the shape's values, the inferred output type still fixes it.
  if (!n.constInput(1))
    if (RankedTensorType t = n.outputType(0))
      return reshapeToInferred(n, t.getShape());
  auto shape = n.constInts(1, "shape");
  if (failed(shape))
    return failure();
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  bool allowZero = n.intAttr("allowzero", 0);
  SmallVector<int64_t> out(*shape);
  int64_t known = 1, inferIdx = -1;
  for (auto [i, d] : llvm::enumerate(out)) {
    if (d == 0 && !allowZero) {
      if (i >= in.size())
        return n.error() << "shape mismatch: Reshape copies dim " << i
                         << " of a rank-" << in.size() << " input",
               failure();
      d = in[i];
    }
    if (d == -1) {
      if (inferIdx >= 0)
        return n.error() << "Reshape shape has more than one -1", failure();
      inferIdx = i;
      continue;
    }
    known *= d;
  }
  int64_t total = n.inputType(0).getNumElements();
  if (inferIdx >= 0) {
    if (known == 0 || total % known)
      return n.error() << "shape mismatch: cannot reshape " << n.inputType(0)
                       << " with a -1 dimension",
             failure();
    out[inferIdx] = total / known;
  }
  return reshapeToInferred(n, out);
}

static LogicalResult lowerFlatten(NodeImporter &n) {
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  int64_t rank = in.size();
  int64_t axis = n.intAttr("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return n.error() << "axis out of range", failure();
  int64_t a = 1, c = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? a : c) *= in[i];
  return reshapeToInferred(n, {a, c});
}

/// Axes from the attribute (old opsets) or the second input.
static FailureOr<SmallVector<int64_t>> axesOf(NodeImporter &n, unsigned idx) {
  if (auto a = n.intsAttr("axes"))
    return *a;
  if (n.hasInput(idx))
    return n.constInts(idx, "axes");
  return SmallVector<int64_t>();
}

static LogicalResult lowerSqueeze(NodeImporter &n) {
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  auto axes = axesOf(n, 1);
  if (failed(axes))
    return failure();
  SmallVector<bool> drop(in.size(), false);
  if (axes->empty()) {
    for (auto [i, d] : llvm::enumerate(in))
      drop[i] = d == 1;
  }
  for (int64_t a : *axes) {
    auto ax = n.normalizeAxis(a, in.size());
    if (failed(ax))
      return failure();
    if (in[*ax] != 1)
      return n.error() << "shape mismatch: cannot squeeze dim " << *ax
                       << " of size " << in[*ax],
             failure();
    drop[*ax] = true;
  }
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(in))
    if (!drop[i])
      out.push_back(d);
  return reshapeToInferred(n, out);
}

static LogicalResult lowerUnsqueeze(NodeImporter &n) {
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  auto axes = axesOf(n, 1);
  if (failed(axes))
    return failure();
  int64_t rank = in.size() + axes->size();
  SmallVector<bool> unit(rank, false);
  for (int64_t a : *axes) {
    auto ax = n.normalizeAxis(a, rank);
    if (failed(ax))
      return failure();
    unit[*ax] = true;
  }
  SmallVector<int64_t> out;
  size_t j = 0;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(unit[i] ? 1 : in[j++]);
  return reshapeToInferred(n, out);
}

static LogicalResult lowerTranspose(NodeImporter &n) {
  int64_t rank = n.inputType(0).getRank();
  SmallVector<int32_t> perm;
  if (auto p = n.intsAttr("perm")) {
    for (int64_t v : *p)
      perm.push_back(v);
  } else {
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  }
  n.setOutput(0, n.transpose(n.input(0), perm));
  return success();
}

static LogicalResult lowerConcat(NodeImporter &n) {
  int64_t rank = n.inputType(0).getRank();
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  SmallVector<Value> ins;
  SmallVector<int64_t> shape(n.inputType(0).getShape());
  shape[*axis] = 0;
  for (unsigned i = 0; i < n.numInputs(); ++i) {
    ArrayRef<int64_t> s = n.inputType(i).getShape();
    for (int64_t d = 0; d < rank; ++d)
      if (d != *axis && s[d] != shape[d])
        return n.error() << "shape mismatch: Concat input " << i << " has dim "
                         << d << " = " << s[d] << ", expected " << shape[d],
               failure();
    shape[*axis] += s[*axis];
    if (s[*axis] > 0)
      ins.push_back(n.input(i));
  }
  auto ty = RankedTensorType::get(shape, n.inputType(0).getElementType());
  n.setOutput(
      0, ins.size() == 1
             ? ins[0]
             : tosa::ConcatOp::create(n.b, n.loc, ty, ins, *axis).getResult());
  return success();
}

static LogicalResult lowerSlice(NodeImporter &n) {
  Value x = n.input(0);
  ArrayRef<int64_t> in = NodeImporter::shapeOf(x);
  int64_t rank = in.size();
  auto starts = n.constInts(1, "starts");
  if (failed(starts))
    return failure();
  auto ends = n.constInts(2, "ends");
  if (failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (n.hasInput(3)) {
    auto a = n.constInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  if (n.hasInput(4)) {
    auto s = n.constInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (axes.size() != starts->size() || ends->size() != starts->size() ||
      steps.size() != starts->size())
    return n.error() << "starts, ends, axes and steps differ in length",
           failure();
  SmallVector<int64_t> offsets(rank, 0), sizes(in), strides(rank, 1);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = n.normalizeAxis(axes[i], rank);
    if (failed(ax))
      return failure();
    int64_t dim = in[*ax], step = steps[i];
    if (step == 0)
      return n.error() << "Slice step is 0", failure();
    int64_t s = (*starts)[i], e = (*ends)[i];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      int64_t len = e > s ? (e - s + step - 1) / step : 0;
      offsets[*ax] = s;
      sizes[*ax] = len;
      strides[*ax] = step;
    } else {
      // Negative steps walk a reversed copy of the axis forward.
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      int64_t len = s > e ? (s - e + (-step) - 1) / (-step) : 0;
      x = tosa::ReverseOp::create(n.b, n.loc, x.getType(), x,
                                  n.b.getI32IntegerAttr(*ax));
      offsets[*ax] = dim - 1 - s;
      sizes[*ax] = len;
      strides[*ax] = -step;
    }
  }
  if (llvm::is_contained(sizes, 0))
    return n.unsupported("a Slice that selects no element (zero-opt has "
                         "no empty tensors); remove the node or widen "
                         "its range");
  n.setOutput(0, n.slice(x, offsets, sizes, strides));
  return success();
}

static LogicalResult lowerSplit(NodeImporter &n) {
  Value x = n.input(0);
  ArrayRef<int64_t> in = NodeImporter::shapeOf(x);
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), in.size());
  if (failed(axis))
    return failure();
  int64_t numOut = n.node.output_size();
  SmallVector<int64_t> split;
  if (n.hasInput(1)) {
    auto s = n.constInts(1, "split");
    if (failed(s))
      return failure();
    split = *s;
  } else if (auto s = n.intsAttr("split")) {
    split = *s;
  } else {
    int64_t dim = in[*axis];
    int64_t chunk = (dim + numOut - 1) / numOut;
    for (int64_t i = 0; i < numOut; ++i)
      split.push_back(std::min(chunk, dim - i * chunk));
  }
  if ((int64_t)split.size() != numOut)
    return n.error() << "split has " << split.size() << " sizes for " << numOut
                     << " outputs",
           failure();
  int64_t total = 0;
  for (int64_t s : split)
    total += s;
  if (total != in[*axis])
    return n.error() << "shape mismatch: split sizes sum to " << total
                     << " but the axis has " << in[*axis],
           failure();
  int64_t off = 0;
  for (int64_t i = 0; i < numOut; ++i) {
    SmallVector<int64_t> offsets(in.size(), 0), sizes(in),
        strides(in.size(), 1);
    offsets[*axis] = off;
    sizes[*axis] = split[i];
    off += split[i];
    if (split[i] == 0)
      return n.unsupported("a Split output of no element (zero-opt has "
                           "no empty tensors); drop that output's size");
    n.setOutput(i, n.slice(x, offsets, sizes, strides));
  }
  return success();
}

/// Gather along `axis` with tosa.gather on [N, K, C] views.
static LogicalResult lowerGather(NodeImporter &n) {
  Value data = n.input(0), idx = n.input(1);
  ArrayRef<int64_t> ds = NodeImporter::shapeOf(data);
  ArrayRef<int64_t> is = NodeImporter::shapeOf(idx);
  int64_t rank = ds.size();
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  int64_t outer = 1, inner = 1, k = ds[*axis], w = 1;
  for (int64_t i = 0; i < *axis; ++i)
    outer *= ds[i];
  for (int64_t i = *axis + 1; i < rank; ++i)
    inner *= ds[i];
  for (int64_t d : is)
    w *= d;
  // Negative indices count from the end.
  int64_t irank = is.size();
  Type ielt = NodeImporter::eltOf(idx);
  Value neg = *n.binary<tosa::GreaterOp>(n.scalar(ielt, 0.0, irank), idx,
                                         n.b.getI1Type());
  Value wrapped = *n.binary<tosa::AddOp>(idx, n.scalar(ielt, k, irank));
  idx = tosa::SelectOp::create(n.b, n.loc, idx.getType(), neg, wrapped, idx);
  idx = n.castTo(idx, n.b.getI32Type());
  idx = n.reshape(idx, {1, w});
  if (outer > 1)
    idx = tosa::TileOp::create(
        n.b, n.loc, RankedTensorType::get({outer, w}, n.b.getI32Type()), idx,
        n.constShape({outer, 1}));
  Value values = n.reshape(data, {outer, k, inner});
  Value g = tosa::GatherOp::create(
      n.b, n.loc, NodeImporter::withShape(data, {outer, w, inner}), values,
      idx);
  SmallVector<int64_t> out(ds.begin(), ds.begin() + *axis);
  out.append(is.begin(), is.end());
  out.append(ds.begin() + *axis + 1, ds.end());
  n.setOutput(0, n.reshape(g, out));
  return success();
}

static LogicalResult lowerExpand(NodeImporter &n) {
  auto shape = n.constInts(1, "shape");
  if (failed(shape))
    return failure();
  auto out = n.broadcastShape(n.inputType(0).getShape(), *shape);
  if (failed(out))
    return failure();
  n.setOutput(0, n.broadcastTo(n.input(0), *out));
  return success();
}

static LogicalResult lowerTile(NodeImporter &n) {
  auto reps = n.constInts(1, "repeats");
  if (failed(reps))
    return failure();
  ArrayRef<int64_t> in = n.inputType(0).getShape();
  if (reps->size() != in.size())
    return n.error() << "repeats has " << reps->size() << " entries for a rank-"
                     << in.size() << " input",
           failure();
  SmallVector<int64_t> out;
  for (auto [d, r] : llvm::zip(in, *reps))
    out.push_back(d * r);
  n.setOutput(0, tosa::TileOp::create(n.b, n.loc,
                                      NodeImporter::withShape(n.input(0), out),
                                      n.input(0), n.constShape(*reps)));
  return success();
}

void mlir::zero::onnx_import::registerTensorLowerings(
    llvm::StringMap<LoweringFn> &m) {
  m["Identity"] = lowerIdentity;
  m["Constant"] = lowerConstant;
  m["ConstantOfShape"] = lowerConstantOfShape;
  m["Shape"] = lowerShape;
  m["Size"] = lowerSize;
  m["Reshape"] = lowerReshape;
  m["Flatten"] = lowerFlatten;
  m["Squeeze"] = lowerSqueeze;
  m["Unsqueeze"] = lowerUnsqueeze;
  m["Transpose"] = lowerTranspose;
  m["Concat"] = lowerConcat;
  m["Slice"] = lowerSlice;
  m["Split"] = lowerSplit;
  m["Gather"] = lowerGather;
  m["Expand"] = lowerExpand;
  m["Tile"] = lowerTile;
}
