//===- NNOps.cpp - matmul, normalization, pooling and losses ---*- C++ -*-===//
#include "NodeImporter.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::zero::onnx_import;

static LogicalResult requireFloat(NodeImporter &n, Value v) {
  if (isa<FloatType>(NodeImporter::eltOf(v)))
    return success();
  return n.unsupported("non-floating-point operands; Cast them to float "
                       "first");
}

//===----------------------------------------------------------------------===//
// MatMul and Gemm
//===----------------------------------------------------------------------===//

/// numpy matmul: 1-D operands are promoted, batch dimensions broadcast.
static FailureOr<Value> numpyMatmul(NodeImporter &n, Value a, Value b) {
  SmallVector<int64_t> as(NodeImporter::shapeOf(a)),
      bs(NodeImporter::shapeOf(b));
  bool vecA = as.size() == 1, vecB = bs.size() == 1;
  if (vecA)
    as.insert(as.begin(), 1);
  if (vecB)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n2 = bs.back();
  if (bs[bs.size() - 2] != k) {
    n.error() << "shape mismatch: MatMul contracts " << k << " with "
              << bs[bs.size() - 2];
    return failure();
  }
  ArrayRef<int64_t> aBatch(as.begin(), as.end() - 2),
      bBatch(bs.begin(), bs.end() - 2);
  auto batch = n.broadcastShape(aBatch, bBatch);
  if (failed(batch))
    return failure();
  int64_t nb = 1;
  for (int64_t d : *batch)
    nb *= d;
  Value r;
  if (bBatch.empty() ||
      llvm::all_of(bBatch, [](int64_t d) { return d == 1; })) {
    // A shared right operand: fold the batch into the rows of one GEMM.
    Value a3 = n.reshape(a, {1, nb * m, k});
    Value b3 = n.reshape(b, {1, k, n2});
    r = n.matmul3d(a3, b3);
  } else {
    SmallVector<int64_t> fa(*batch), fb(*batch);
    fa.append({m, k});
    fb.append({k, n2});
    Value a3 = n.reshape(n.broadcastTo(n.reshape(a, as), fa), {nb, m, k});
    Value b3 = n.reshape(n.broadcastTo(n.reshape(b, bs), fb), {nb, k, n2});
    r = n.matmul3d(a3, b3);
  }
  SmallVector<int64_t> out(*batch);
  if (!vecA)
    out.push_back(m);
  if (!vecB)
    out.push_back(n2);
  return n.reshape(r, out);
}

static LogicalResult lowerMatMul(NodeImporter &n) {
  if (failed(requireFloat(n, n.input(0))))
    return failure();
  auto r = numpyMatmul(n, n.input(0), n.input(1));
  if (failed(r))
    return failure();
  n.setOutput(0, *r);
  return success();
}

static LogicalResult lowerGemm(NodeImporter &n) {
  Value a = n.input(0), b = n.input(1);
  if (failed(requireFloat(n, a)))
    return failure();
  if (n.intAttr("transA", 0))
    a = n.transpose(a, {1, 0});
  if (n.intAttr("transB", 0))
    b = n.transpose(b, {1, 0});
  auto r = numpyMatmul(n, a, b);
  if (failed(r))
    return failure();
  Value y = *r;
  Type elt = NodeImporter::eltOf(y);
  float alpha = n.floatAttr("alpha", 1.0f), beta = n.floatAttr("beta", 1.0f);
  if (alpha != 1.0f)
    y = *n.mul(y, n.scalar(elt, alpha, 2));
  if (n.hasInput(2) && beta != 0.0f) {
    Value c = n.input(2);
    if (beta != 1.0f)
      c = *n.mul(c, n.scalar(elt, beta, NodeImporter::shapeOf(c).size()));
    auto sum = n.binary<tosa::AddOp>(y, c);
    if (failed(sum))
      return failure();
    if (NodeImporter::shapeOf(*sum) != NodeImporter::shapeOf(y))
      return n.error() << "shape mismatch: Gemm's C does not broadcast to "
                          "the product",
             failure();
    y = *sum;
  }
  n.setOutput(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Axes of a Reduce* node; `inputAxes` for opsets taking them as input.
static FailureOr<SmallVector<int64_t>> reduceAxes(NodeImporter &n,
                                                  bool inputAxes) {
  int64_t rank = n.inputType(0).getRank();
  SmallVector<int64_t> axes;
  if (inputAxes && n.hasInput(1)) {
    auto a = n.constInts(1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else if (auto a = n.intsAttr("axes")) {
    axes = *a;
  }
  if (axes.empty()) {
    if (n.intAttr("noop_with_empty_axes", 0))
      return axes;
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  for (int64_t &a : axes) {
    auto ax = n.normalizeAxis(a, rank);
    if (failed(ax))
      return failure();
    a = *ax;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

/// Drops reduced axes unless keepdims.
static Value finishReduce(NodeImporter &n, Value r, ArrayRef<int64_t> axes) {
  if (n.intAttr("keepdims", 1))
    return r;
  SmallVector<int64_t> out;
  for (auto [i, d] : llvm::enumerate(NodeImporter::shapeOf(r)))
    if (!llvm::is_contained(axes, (int64_t)i))
      out.push_back(d);
  return n.reshape(r, out);
}

/// The max that keeps exp in range in softmax and log-sum-exp. Their values
/// do not depend on it, so it takes no gradient: the backward pass then
/// neither routes adjoints to the argmax (they cancel) nor keeps the shifted
/// input for it.
static Value shiftingMax(NodeImporter &n, Value x, ArrayRef<int64_t> axes) {
  Value mx = n.reduce<tosa::ReduceMaxOp>(x, axes);
  // With several axes, the last reduction cuts the gradient of them all.
  mx.getDefiningOp()->setAttr(zero::kStopGradientAttr, n.b.getUnitAttr());
  return mx;
}

enum class ReduceKind {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  SumSquare,
  L1,
  L2,
  LogSum,
  LogSumExp
};

template <ReduceKind kind, bool inputAxes>
static LogicalResult lowerReduce(NodeImporter &n) {
  Value x = n.input(0);
  auto axes = reduceAxes(n, inputAxes);
  if (failed(axes))
    return failure();
  if (axes->empty()) {
    n.setOutput(0, x);
    return success();
  }
  int64_t rank = NodeImporter::shapeOf(x).size();
  Value r;
  switch (kind) {
  case ReduceKind::Sum:
    r = n.reduce<tosa::ReduceSumOp>(x, *axes);
    break;
  case ReduceKind::Mean:
    if (failed(requireFloat(n, x)))
      return failure();
    r = n.reduceMean(x, *axes);
    break;
  case ReduceKind::Max:
    r = n.reduce<tosa::ReduceMaxOp>(x, *axes);
    break;
  case ReduceKind::Min:
    r = n.reduce<tosa::ReduceMinOp>(x, *axes);
    break;
  case ReduceKind::Prod:
    r = n.reduce<tosa::ReduceProductOp>(x, *axes);
    break;
  case ReduceKind::SumSquare:
    r = n.reduce<tosa::ReduceSumOp>(*n.mul(x, x), *axes);
    break;
  case ReduceKind::L1:
    r = n.reduce<tosa::ReduceSumOp>(
        tosa::AbsOp::create(n.b, n.loc, x.getType(), x), *axes);
    break;
  case ReduceKind::L2: {
    if (failed(requireFloat(n, x)))
      return failure();
    Value s = n.reduce<tosa::ReduceSumOp>(*n.mul(x, x), *axes);
    r = tosa::PowOp::create(n.b, n.loc, s.getType(), s,
                            n.scalar(NodeImporter::eltOf(x), 0.5, rank));
    break;
  }
  case ReduceKind::LogSum: {
    if (failed(requireFloat(n, x)))
      return failure();
    Value s = n.reduce<tosa::ReduceSumOp>(x, *axes);
    r = tosa::LogOp::create(n.b, n.loc, s.getType(), s);
    break;
  }
  case ReduceKind::LogSumExp: {
    if (failed(requireFloat(n, x)))
      return failure();
    Value mx = shiftingMax(n, x, *axes);
    Value sh = *n.binary<tosa::SubOp>(x, mx);
    Value e = tosa::ExpOp::create(n.b, n.loc, sh.getType(), sh);
    Value s = n.reduce<tosa::ReduceSumOp>(e, *axes);
    r = *n.binary<tosa::AddOp>(tosa::LogOp::create(n.b, n.loc, s.getType(), s),
                               mx);
    break;
  }
  }
  n.setOutput(0, finishReduce(n, r, *axes));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and normalization
//===----------------------------------------------------------------------===//

/// log_softmax or softmax along `axis`, max-shifted for stability.
static Value softmax(NodeImporter &n, Value x, int64_t axis, bool log) {
  Value mx = shiftingMax(n, x, {axis});
  Value sh = *n.binary<tosa::SubOp>(x, mx);
  Value e = tosa::ExpOp::create(n.b, n.loc, sh.getType(), sh);
  Value s = n.reduce<tosa::ReduceSumOp>(e, {axis});
  if (log)
    return *n.binary<tosa::SubOp>(
        sh, tosa::LogOp::create(n.b, n.loc, s.getType(), s));
  return *n.div(e, s);
}

template <bool log> static LogicalResult lowerSoftmax(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  auto axis =
      n.normalizeAxis(n.intAttr("axis", -1), NodeImporter::shapeOf(x).size());
  if (failed(axis))
    return failure();
  if (log) {
    n.setOutput(0, softmax(n, x, *axis, log));
    return success();
  }
  // Whole, for its own derivative; zero-decompose-softmax spells it in TOSA
  // after differentiation.
  auto type = cast<RankedTensorType>(x.getType());
  Value init = tensor::EmptyOp::create(n.b, n.loc, type.getShape(),
                                       type.getElementType());
  n.setOutput(
      0, linalg::SoftmaxOp::create(n.b, n.loc, TypeRange{type}, x, init, *axis)
             .getResult()[0]);
  return success();
}

static LogicalResult lowerLayerNorm(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  int64_t rank = NodeImporter::shapeOf(x).size();
  auto axis = n.normalizeAxis(n.intAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  Type elt = NodeImporter::eltOf(x);
  SmallVector<int64_t> axes;
  for (int64_t i = *axis; i < rank; ++i)
    axes.push_back(i);
  Value mean = n.reduceMean(x, axes);
  Value d = *n.binary<tosa::SubOp>(x, mean);
  Value var = n.reduceMean(*n.mul(d, d), axes);
  Value eps = n.scalar(elt, n.floatAttr("epsilon", 1e-5f), rank);
  Value ve = *n.binary<tosa::AddOp>(var, eps);
  Value inv = tosa::RsqrtOp::create(n.b, n.loc, ve.getType(), ve);
  auto y = n.mul(*n.mul(d, inv), n.input(1));
  if (failed(y))
    return failure();
  Value out = *y;
  if (n.hasInput(2)) {
    auto yb = n.binary<tosa::AddOp>(out, n.input(2));
    if (failed(yb))
      return failure();
    out = *yb;
  }
  if (NodeImporter::shapeOf(out) != NodeImporter::shapeOf(x))
    return n.error() << "shape mismatch: LayerNormalization scale or bias "
                        "does not broadcast to the input",
           failure();
  n.setOutput(0, out);
  n.setOutput(1, mean);
  n.setOutput(2, inv);
  return success();
}

/// BatchNormalization's output 0 from the centred input `d` and the
/// variance (shaped [1, C, 1, ...]): d * rsqrt(var + epsilon) * scale + bias.
static void setNormalized(NodeImporter &n, Value d, Value var) {
  ArrayRef<int64_t> shape = NodeImporter::shapeOf(d);
  SmallVector<int64_t> cshape(shape.size(), 1);
  cshape[1] = shape[1];
  auto chan = [&](unsigned i) { return n.reshape(n.input(i), cshape); };
  Value ve = *n.binary<tosa::AddOp>(
      var, n.scalar(NodeImporter::eltOf(d), n.decimalAttr("epsilon", 1e-5),
                    shape.size()));
  Value inv = tosa::RsqrtOp::create(n.b, n.loc, ve.getType(), ve);
  Value y = *n.mul(d, *n.mul(inv, chan(1)));
  n.setOutput(0, *n.binary<tosa::AddOp>(y, chan(2)));
}

/// BatchNormalization in training mode, as PyTorch computes it: batch
/// statistics (over all replicas with SyncBatchNorm), biased variance in
/// the output, and the running statistics of initializer buffers updated
/// with the unbiased one. The node's own outputs 1 and 2 follow the ONNX
/// definition (biased variance).
static LogicalResult lowerBatchNormTraining(NodeImporter &n, Value x) {
  ArrayRef<int64_t> shape = NodeImporter::shapeOf(x);
  int64_t rank = shape.size(), c = shape[1];
  Type elt = NodeImporter::eltOf(x);
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != 1)
      axes.push_back(i);
  double perChannel = double(NodeImporter::typeOf(x).getNumElements()) / c;
  // SyncBatchNorm: counts and sums over all replicas.
  auto global = [&](Value v) -> Value {
    return n.state.syncBatchNorm
               ? zero::ReplicaSumOp::create(n.b, n.loc, v.getType(), v)
               : v;
  };
  Value count = global(n.scalar(elt, perChannel, rank));
  Value invCount = n.recip(count);
  auto mean = [&](Value v) {
    return *n.mul(global(n.reduce<tosa::ReduceSumOp>(v, axes)), invCount);
  };
  Value mu = mean(x);
  Value d = *n.binary<tosa::SubOp>(x, mu);
  Value var = mean(*n.mul(d, d));
  setNormalized(n, d, var);

  // running = running * momentum + batch * (1 - momentum).
  double m = n.decimalAttr("momentum", 0.9);
  auto blend = [&](unsigned input, Value batch) {
    Value old = n.input(input);
    Value cur = n.reshape(batch, NodeImporter::shapeOf(old));
    return *n.binary<tosa::AddOp>(*n.mul(old, n.scalarLike(old, m)),
                                  *n.mul(cur, n.scalarLike(cur, 1.0 - m)));
  };
  if (n.hasOutput(1))
    n.setOutput(1, blend(3, mu));
  if (n.hasOutput(2))
    n.setOutput(2, blend(4, var));
  Value unbiased =
      *n.mul(var, *n.mul(count, n.recip(*n.binary<tosa::SubOp>(
                                    count, n.scalarLike(count, 1.0)))));
  for (auto [input, batch] : {std::pair{3u, mu}, std::pair{4u, unbiased}}) {
    const std::string &name = n.node.input(input);
    if (!n.state.buffers.contains(name))
      continue;
    for (const auto &u : n.state.bufferUpdates)
      if (u.first == name)
        return n.error() << "running statistic '" << name
                         << "' is updated by two BatchNormalization nodes; "
                            "give each its own initializer",
               failure();
    n.state.bufferUpdates.push_back({name, blend(input, batch)});
  }
  return success();
}

static LogicalResult lowerBatchNorm(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  if (NodeImporter::shapeOf(x).size() < 2)
    return n.error() << "BatchNormalization needs an input of rank 2 or more "
                        "(N x C x ...)",
           failure();
  if (n.intAttr("training_mode", 0))
    return lowerBatchNormTraining(n, x);
  if (n.hasOutput(1) || n.hasOutput(2))
    return n.error() << "BatchNormalization outputs running_mean and "
                        "running_var only in training mode (training_mode=1)",
           failure();
  // Inference form: the given mean and variance.
  SmallVector<int64_t> cshape(NodeImporter::shapeOf(x).size(), 1);
  cshape[1] = NodeImporter::shapeOf(x)[1];
  setNormalized(n, *n.binary<tosa::SubOp>(x, n.reshape(n.input(3), cshape)),
                n.reshape(n.input(4), cshape));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NCHW in ONNX, NHWC in TOSA)
//===----------------------------------------------------------------------===//

namespace {
/// Spatial attributes of Conv and the pools, for one or two dimensions.
struct Window {
  SmallVector<int64_t> kernel, stride, dilation, padBegin, padEnd, out;
};
} // namespace

/// Resolves kernel, strides, dilations and pads (explicit or auto_pad),
/// and the output sizes, for `in` spatial sizes.
static FailureOr<Window> resolveWindow(NodeImporter &n, ArrayRef<int64_t> in,
                                       ArrayRef<int64_t> kernel,
                                       bool ceilMode) {
  size_t r = in.size();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.stride = n.intsAttr("strides").value_or(SmallVector<int64_t>(r, 1));
  w.dilation = n.intsAttr("dilations").value_or(SmallVector<int64_t>(r, 1));
  if (w.stride.size() != r || w.dilation.size() != r) {
    n.error() << "strides or dilations do not match the spatial rank " << r;
    return failure();
  }
  std::string autoPad = n.stringAttr("auto_pad", "NOTSET");
  SmallVector<int64_t> pads =
      n.intsAttr("pads").value_or(SmallVector<int64_t>(2 * r, 0));
  if (pads.size() != 2 * r) {
    n.error() << "pads has " << pads.size() << " entries, expected " << 2 * r;
    return failure();
  }
  for (size_t i = 0; i < r; ++i) {
    int64_t ek = (w.kernel[i] - 1) * w.dilation[i] + 1;
    int64_t pb = pads[i], pe = pads[i + r];
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t o = (in[i] + w.stride[i] - 1) / w.stride[i];
      int64_t total = std::max<int64_t>(0, (o - 1) * w.stride[i] + ek - in[i]);
      pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else if (autoPad == "VALID") {
      pb = pe = 0;
    } else if (autoPad != "NOTSET") {
      n.error() << "unknown auto_pad '" << autoPad << "'";
      return failure();
    }
    int64_t span = in[i] + pb + pe - ek;
    if (span < 0) {
      n.error() << "shape mismatch: kernel larger than the padded input";
      return failure();
    }
    int64_t o = ceilMode ? (span + w.stride[i] - 1) / w.stride[i] + 1
                         : span / w.stride[i] + 1;
    // In ceil mode the last window must start inside the input or its
    // leading padding.
    if (ceilMode && (o - 1) * w.stride[i] >= in[i] + pb)
      --o;
    w.padBegin.push_back(pb);
    w.padEnd.push_back(pe);
    w.out.push_back(o);
  }
  return w;
}

/// Brings a 1-D spatial NCW tensor to 2-D NCHW with H = 1.
static Value to2d(NodeImporter &n, Value x) {
  ArrayRef<int64_t> s = NodeImporter::shapeOf(x);
  if (s.size() == 4)
    return x;
  return n.reshape(x, {s[0], s[1], 1, s[2]});
}

/// Window attributes of a 1-D op, lifted to 2-D with a unit H dimension.
static void liftWindow(Window &w) {
  if (w.kernel.size() == 2)
    return;
  w.kernel.insert(w.kernel.begin(), 1);
  w.stride.insert(w.stride.begin(), 1);
  w.dilation.insert(w.dilation.begin(), 1);
  w.padBegin.insert(w.padBegin.begin(), 0);
  w.padEnd.insert(w.padEnd.begin(), 0);
  w.out.insert(w.out.begin(), 1);
}

/// Pads `x` (N, C, spatial...) so that every window of `w` lies inside,
/// with `value`. The end padding grows past ONNX's where ceil mode needs it
/// and is never cut: windows only read what they need.
static Value padForWindows(NodeImporter &n, Value x, const Window &w,
                           double value) {
  ArrayRef<int64_t> s = NodeImporter::shapeOf(x);
  SmallVector<int64_t> pads = {0, 0, 0, 0};
  SmallVector<int64_t> shape = {s[0], s[1]};
  bool any = false;
  for (size_t i = 0; i < w.kernel.size(); ++i) {
    int64_t need =
        (w.out[i] - 1) * w.stride[i] + (w.kernel[i] - 1) * w.dilation[i] + 1;
    int64_t end = std::max(w.padEnd[i], need - s[i + 2] - w.padBegin[i]);
    pads.push_back(w.padBegin[i]);
    pads.push_back(end);
    shape.push_back(s[i + 2] + w.padBegin[i] + end);
    any |= w.padBegin[i] || end;
  }
  if (!any)
    return x;
  Type elt = NodeImporter::eltOf(x);
  Value padConst = n.splat(RankedTensorType::get({1}, elt), value);
  return tosa::PadOp::create(n.b, n.loc, NodeImporter::withShape(x, shape), x,
                             n.constShape(pads), padConst);
}

/// The input elements seen by kernel offset (i, j) of every window:
/// [N, C, OH, OW], a strided view of the padded input.
static Value windowSlice(NodeImporter &n, Value xp, const Window &w, int64_t i,
                         int64_t j) {
  ArrayRef<int64_t> s = NodeImporter::shapeOf(xp);
  return n.slice(xp, {0, 0, i * w.dilation[0], j * w.dilation[1]},
                 {s[0], s[1], w.out[0], w.out[1]},
                 {1, 1, w.stride[0], w.stride[1]});
}

/// Conv as im2col + one GEMM: columns [C*KH*KW, N*OH*OW] gathered from
/// strided views of the padded input, multiplied by the weights viewed as
/// [O, C*KH*KW]. Only data movement and tosa.matmul, so it runs on BLAS,
/// works for any float type and differentiates through those ops' rules.
static LogicalResult lowerConv(NodeImporter &n) {
  Value x = n.input(0), wgt = n.input(1);
  if (failed(requireFloat(n, x)))
    return failure();
  ArrayRef<int64_t> xs = NodeImporter::shapeOf(x),
                    ws = NodeImporter::shapeOf(wgt);
  size_t r = xs.size() - 2;
  if (r != 1 && r != 2)
    return n.unsupported(Twine(r) + "-d convolution (1-d and 2-d only)");
  int64_t group = n.intAttr("group", 1);
  int64_t nb = xs[0], cin = xs[1], cout = ws[0];
  if (group < 1 || cin % group || cout % group || ws[1] * group != cin)
    return n.error() << "shape mismatch: Conv weight " << ws[1]
                     << " input channels per group for " << cin
                     << " channels in " << group << " groups",
           failure();
  SmallVector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (auto ks = n.intsAttr("kernel_shape"); ks && *ks != kernel)
    return n.error() << "kernel_shape does not match the weight", failure();
  auto win = resolveWindow(n, xs.drop_front(2), kernel, false);
  if (failed(win))
    return failure();
  Window w = *win;
  liftWindow(w);
  Value x4 = to2d(n, x);
  Value w4 = r == 1 ? n.reshape(wgt, {ws[0], ws[1], 1, ws[2]}) : wgt;
  Value xp = padForWindows(n, x4, w, 0.0);
  int64_t kk = w.kernel[0] * w.kernel[1], p = w.out[0] * w.out[1];
  SmallVector<Value> taps;
  for (int64_t i = 0; i < w.kernel[0]; ++i)
    for (int64_t j = 0; j < w.kernel[1]; ++j)
      taps.push_back(n.reshape(windowSlice(n, xp, w, i, j), {nb, cin, 1, p}));
  Type elt = NodeImporter::eltOf(x);
  Value cols = taps.size() == 1
                   ? taps[0]
                   : tosa::ConcatOp::create(
                         n.b, n.loc,
                         RankedTensorType::get({nb, cin, kk, p}, elt), taps, 2)
                         .getResult();
  // Groups are one op whatever their number: a batched matmul over groups,
  // or, for a depthwise convolution (one input channel per group), a
  // product with the taps summed.
  int64_t cg = cin / group, og = cout / group;
  Value y;
  if (cg == 1 && group > 1) {
    // [N, G, 1, KK, P] * [1, G, Og, KK, 1], summed over KK: [N, G, Og, P].
    Value c5 = n.reshape(cols, {nb, group, 1, kk, p});
    Value w5 = n.reshape(w4, {1, group, og, kk, 1});
    Value prod = *n.mul(c5, w5);
    y = n.reshape(n.reduce<tosa::ReduceSumOp>(prod, {3}), {nb, cout, p});
  } else {
    // [N, G, Cg*KK, P] -> [G, Cg*KK, N*P]
    Value c = group == 1
                  ? n.transpose(n.reshape(cols, {nb, cin * kk, p}), {1, 0, 2})
                  : n.transpose(n.reshape(cols, {nb, group, cg * kk, p}),
                                {1, 2, 0, 3});
    c = n.reshape(c, {group, cg * kk, nb * p});
    Value wg = n.reshape(w4, {group, og, cg * kk});
    // [G, Og, N*P] -> [N, Cout, P]
    y = n.reshape(n.matmul3d(wg, c), {cout, nb, p});
    y = n.transpose(y, {1, 0, 2});
  }
  SmallVector<int64_t> outShape = {nb, cout};
  if (r == 2)
    outShape.append({w.out[0], w.out[1]});
  else
    outShape.push_back(w.out[1]);
  y = n.reshape(y, outShape);
  if (n.hasInput(2)) {
    SmallVector<int64_t> bs(outShape.size(), 1);
    bs[1] = cout;
    y = *n.binary<tosa::AddOp>(y, n.reshape(n.input(2), bs));
  }
  n.setOutput(0, y);
  return success();
}

/// Pools as a max or a sum over the windows' strided views, separably:
/// along the innermost spatial dimension, then outwards, so a window costs
/// the sum of its extents in ops rather than their product (a 60x80 window
/// is 140 ops, not 9,600). Max pads with -inf, so padding never wins; each
/// chain of maxima keeps the earliest element, and innermost first keeps
/// the earliest in row-major order: PyTorch's argmax.
template <bool isMax> static LogicalResult lowerPool(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  ArrayRef<int64_t> xs = NodeImporter::shapeOf(x);
  size_t r = xs.size() - 2;
  if (r < 1 || r > 3)
    return n.unsupported(Twine(r) + "-d pooling (1-d to 3-d only)");
  auto ks = n.intsAttr("kernel_shape");
  if (!ks || ks->size() != r)
    return n.error() << "kernel_shape is missing or has the wrong rank",
           failure();
  if (isMax && n.hasOutput(1))
    return n.unsupported("MaxPool's Indices output; drop it (PyTorch: "
                         "return_indices=False)");
  auto win = resolveWindow(n, xs.drop_front(2), *ks, n.intAttr("ceil_mode", 0));
  if (failed(win))
    return failure();
  const Window &w = *win;
  Value acc = padForWindows(
      n, x, w, isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  for (size_t d = r; d-- > 0;) {
    SmallVector<int64_t> shape(NodeImporter::shapeOf(acc));
    SmallVector<int64_t> offsets(shape.size(), 0), strides(shape.size(), 1);
    shape[d + 2] = w.out[d];
    strides[d + 2] = w.stride[d];
    Value along = acc;
    acc = {};
    for (int64_t k = 0; k < w.kernel[d]; ++k) {
      offsets[d + 2] = k * w.dilation[d];
      Value v = n.slice(along, offsets, shape, strides);
      acc = !acc    ? v
            : isMax ? *n.binary<tosa::MaximumOp>(acc, v)
                    : *n.binary<tosa::AddOp>(acc, v);
    }
  }
  if (!isMax) {
    // Divisor per output position: the window's elements inside the input
    // (and inside the explicit padding with count_include_pad), a product
    // of per-dimension counts since the window is a box.
    bool includePad = n.intAttr("count_include_pad", 0);
    SmallVector<int64_t> outShape = {1, 1}, counts = {1};
    for (size_t d = 0; d < r; ++d) {
      int64_t lo = includePad ? -w.padBegin[d] : 0;
      int64_t hi = xs[d + 2] + (includePad ? w.padEnd[d] : 0);
      SmallVector<int64_t> next;
      for (int64_t c : counts)
        for (int64_t o = 0; o < w.out[d]; ++o) {
          int64_t cnt = 0;
          for (int64_t k = 0; k < w.kernel[d]; ++k) {
            int64_t at = o * w.stride[d] + k * w.dilation[d] - w.padBegin[d];
            cnt += at >= lo && at < hi;
          }
          next.push_back(c * cnt);
        }
      counts = std::move(next);
      outShape.push_back(w.out[d]);
    }
    SmallVector<float> inv;
    for (int64_t c : counts)
      inv.push_back(1.0f / float(std::max<int64_t>(c, 1)));
    auto invTy = RankedTensorType::get(outShape, n.b.getF32Type());
    Value scale = n.castTo(
        n.constant(DenseElementsAttr::get(invTy, ArrayRef<float>(inv))),
        NodeImporter::eltOf(x));
    acc = *n.mul(acc, scale);
  }
  n.setOutput(0, acc);
  return success();
}

template <bool isMax> static LogicalResult lowerGlobalPool(NodeImporter &n) {
  Value x = n.input(0);
  if (failed(requireFloat(n, x)))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < (int64_t)NodeImporter::shapeOf(x).size(); ++i)
    axes.push_back(i);
  n.setOutput(0, isMax ? n.reduce<tosa::ReduceMaxOp>(x, axes)
                       : n.reduceMean(x, axes));
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// Negative log-likelihood over class axis 1 of `logp` [N, C, d...] with
/// integer `labels` [N, d...]: one-hot select, so it stays differentiable.
static LogicalResult nllLoss(NodeImporter &n, Value logp, Value labels,
                             Value weights, unsigned outIdx) {
  ArrayRef<int64_t> ls = NodeImporter::shapeOf(logp);
  ArrayRef<int64_t> ys = NodeImporter::shapeOf(labels);
  int64_t rank = ls.size(), c = ls[1];
  if ((int64_t)ys.size() != rank - 1 || ys[0] != ls[0])
    return n.error() << "shape mismatch: labels do not match the scores",
           failure();
  Type elt = NodeImporter::eltOf(logp);
  Type yelt = NodeImporter::eltOf(labels);
  // labels [N, 1, d...] against class ids [1, C, 1...].
  SmallVector<int64_t> ye(ys);
  ye.insert(ye.begin() + 1, 1);
  Value y = n.reshape(labels, ye);
  SmallVector<int64_t> idsShape(rank, 1);
  idsShape[1] = c;
  auto idsTy = RankedTensorType::get(idsShape, yelt);
  SmallVector<APInt> ids;
  for (int64_t i = 0; i < c; ++i)
    ids.push_back(APInt(yelt.getIntOrFloatBitWidth(), i));
  Value classIds = n.constant(DenseElementsAttr::get(idsTy, ids));
  Value onehot = *n.binary<tosa::EqualOp>(y, classIds, n.b.getI1Type());
  Value zeros = n.splat(cast<RankedTensorType>(logp.getType()), 0.0);
  Value picked =
      tosa::SelectOp::create(n.b, n.loc, logp.getType(), onehot, logp, zeros);
  Value loss = n.neg(n.reduce<tosa::ReduceSumOp>(picked, {1}));
  // Per-sample weight: weights[label], zero where label == ignore_index.
  Value wsel;
  if (weights) {
    SmallVector<int64_t> wShape(rank, 1);
    wShape[1] = c;
    Value w = n.reshape(weights, wShape);
    Value wz = n.splat(NodeImporter::withShape(logp, ls), 0.0);
    Value wfull = *n.binary<tosa::AddOp>(wz, w);
    wsel = n.reduce<tosa::ReduceSumOp>(
        tosa::SelectOp::create(n.b, n.loc, wfull.getType(), onehot, wfull,
                               zeros),
        {1});
  }
  const onnx::AttributeProto *ii = n.attr("ignore_index");
  if (ii) {
    Value ign = n.scalar(yelt, ii->i(), rank);
    Value keep = tosa::LogicalNotOp::create(
        n.b, n.loc, RankedTensorType::get(ye, n.b.getI1Type()),
        *n.binary<tosa::EqualOp>(y, ign, n.b.getI1Type()));
    Value keepF = n.castTo(keep, elt);
    wsel = wsel ? *n.mul(wsel, keepF) : keepF;
  }
  if (wsel)
    loss = *n.mul(loss, wsel);
  std::string reduction = n.stringAttr("reduction", "mean");
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < rank; ++i)
    all.push_back(i);
  Value out;
  if (reduction == "none") {
    out = n.reshape(loss, ys);
  } else if (reduction == "sum") {
    out = n.reshape(n.reduce<tosa::ReduceSumOp>(loss, all), {});
  } else if (reduction == "mean") {
    Value total = n.reduce<tosa::ReduceSumOp>(loss, all);
    if (wsel)
      out = *n.div(total, n.reduce<tosa::ReduceSumOp>(wsel, all));
    else
      out = *n.mul(
          total, n.scalar(elt,
                          1.0 / (double)cast<RankedTensorType>(labels.getType())
                                    .getNumElements(),
                          rank));
    out = n.reshape(out, {});
  } else {
    return n.error() << "unknown reduction '" << reduction << "'", failure();
  }
  n.setOutput(outIdx, out);
  return success();
}

static LogicalResult lowerSoftmaxCrossEntropy(NodeImporter &n) {
  Value scores = n.input(0);
  if (failed(requireFloat(n, scores)))
    return failure();
  if (NodeImporter::shapeOf(scores).size() < 2)
    return n.error() << "scores must have rank >= 2", failure();
  Value logp = softmax(n, scores, 1, /*log=*/true);
  if (failed(nllLoss(n, logp, n.input(1), n.hasInput(2) ? n.input(2) : Value(),
                     0)))
    return failure();
  n.setOutput(1, logp);
  return success();
}

static LogicalResult lowerNLLLoss(NodeImporter &n) {
  Value logp = n.input(0);
  if (failed(requireFloat(n, logp)))
    return failure();
  if (NodeImporter::shapeOf(logp).size() < 2)
    return n.error() << "input must have rank >= 2", failure();
  return nllLoss(n, logp, n.input(1), n.hasInput(2) ? n.input(2) : Value(), 0);
}

void mlir::zero::onnx_import::registerNNLowerings(
    llvm::StringMap<LoweringFn> &m) {
  m["MatMul"] = lowerMatMul;
  m["Gemm"] = lowerGemm;
  m["ReduceSum"] = lowerReduce<ReduceKind::Sum, true>;
  m["ReduceMean"] = lowerReduce<ReduceKind::Mean, false>;
  m["ReduceMax"] = lowerReduce<ReduceKind::Max, false>;
  m["ReduceMin"] = lowerReduce<ReduceKind::Min, false>;
  m["ReduceProd"] = lowerReduce<ReduceKind::Prod, false>;
  m["ReduceSumSquare"] = lowerReduce<ReduceKind::SumSquare, false>;
  m["ReduceL1"] = lowerReduce<ReduceKind::L1, false>;
  m["ReduceL2"] = lowerReduce<ReduceKind::L2, false>;
  m["ReduceLogSum"] = lowerReduce<ReduceKind::LogSum, false>;
  m["ReduceLogSumExp"] = lowerReduce<ReduceKind::LogSumExp, false>;
  m["Softmax"] = lowerSoftmax<false>;
  m["LogSoftmax"] = lowerSoftmax<true>;
  m["LayerNormalization"] = lowerLayerNorm;
  m["BatchNormalization"] = lowerBatchNorm;
  m["Conv"] = lowerConv;
  m["MaxPool"] = lowerPool<true>;
  m["AveragePool"] = lowerPool<false>;
  m["GlobalAveragePool"] = lowerGlobalPool<false>;
  m["GlobalMaxPool"] = lowerGlobalPool<true>;
  m["SoftmaxCrossEntropyLoss"] = lowerSoftmaxCrossEntropy;
  m["NegativeLogLikelihoodLoss"] = lowerNLLLoss;
}
