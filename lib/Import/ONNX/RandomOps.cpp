//===- RandomOps.cpp - Dropout with a counter-based generator ---*- C++ -*-===//
//
// A random mask is a pure function of (seed, step, row of the global batch,
// element, node): Philox4x32-10 keyed by the seed and counting (element,
// row, step, node), Utils/Philox.h. So N ranks at any ZeRO stage draw for
// a sample the mask one rank draws, and a recomputation draws the
// forward's mask again. The step and the micro-batch come from the
// function's `rng` argument, which the training step fills in.
//
//===----------------------------------------------------------------------===//
#include "NodeImporter.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/Philox.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::zero::onnx_import;

/// Keep flags (i1) of `shape`: an element is kept with probability
/// `keep` / 2^24 (24 uniform bits of its Philox word below `keep`).
static Value keepMask(NodeImporter &n, ArrayRef<int64_t> shape, uint32_t keep,
                      uint64_t seed, uint32_t stream) {
  OpBuilder &b = n.b;
  Location loc = n.loc;
  Value counter = n.state.randomCounter(b);
  auto at = [&](int64_t i) {
    Value idx = arith::ConstantIndexOp::create(b, loc, i);
    return tensor::ExtractOp::create(b, loc, counter, ValueRange{idx})
        .getResult();
  };
  Value step = at(0);
  // The micro-batch's first row of this tensor in the global batch.
  Value rowBase = arith::MulIOp::create(
      b, loc, at(1),
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(shape[0])));
  auto type = RankedTensorType::get(shape, b.getI1Type());
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getI1Type());
  SmallVector<utils::IteratorType> iters(shape.size(),
                                         utils::IteratorType::parallel);
  auto gen = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{}, ValueRange{init},
      ArrayRef<AffineMap>{b.getMultiDimIdentityMap(shape.size())}, iters,
      [&](OpBuilder &rb, Location l, ValueRange) {
        auto i64 = [&](Value index) {
          return arith::IndexCastOp::create(rb, l, rb.getI64Type(), index)
              .getResult();
        };
        // Element within its row, row-major over the other dimensions.
        Value elem = arith::ConstantOp::create(rb, l, rb.getI64IntegerAttr(0));
        for (size_t d = 1; d < shape.size(); ++d) {
          Value scaled = arith::MulIOp::create(
              rb, l, elem,
              arith::ConstantOp::create(rb, l, rb.getI64IntegerAttr(shape[d])));
          elem = arith::AddIOp::create(
              rb, l, scaled, i64(linalg::IndexOp::create(rb, l, d)));
        }
        Value row = arith::AddIOp::create(
            rb, l, rowBase, i64(linalg::IndexOp::create(rb, l, 0)));
        auto word = [&](Value v) {
          return arith::TruncIOp::create(rb, l, rb.getI32Type(), v)
              .getResult();
        };
        Value elem32 = word(elem), row32 = word(row), step32 = word(step);
        linalg::YieldOp::create(rb, l,
                                zero::buildDropoutKeep(rb, l, elem32, row32,
                                                       step32, seed, stream,
                                                       keep));
      });
  gen->setAttr(zero::kDropoutMaskAttr,
               zero::DropoutMaskAttr::get(b.getContext(), seed, stream, keep));
  return gen.getResult(0);
}

static LogicalResult lowerDropout(NodeImporter &n) {
  double ratio = 0.5;
  if (n.hasInput(1)) {
    auto c = n.constInput(1);
    if (!c)
      return n.unsupported("Dropout's ratio computed at run time; make it "
                           "an initializer or a Constant");
    ratio = (*c->getValues<APFloat>().begin()).convertToDouble();
  }
  bool training = false;
  if (n.hasInput(2)) {
    auto c = n.constInput(2);
    if (!c)
      return n.unsupported("Dropout's training_mode computed at run time; "
                           "make it an initializer or a Constant");
    training = *c->getValues<bool>().begin();
  }
  Value x = n.input(0);
  ArrayRef<int64_t> shape = NodeImporter::shapeOf(x);
  auto maskType = RankedTensorType::get(shape, n.b.getI1Type());
  // Inference, or nothing dropped: the identity.
  if (!training || ratio == 0.0) {
    n.setOutput(0, x);
    if (n.hasOutput(1))
      n.setOutput(1, n.splat(maskType, 1.0));
    return success();
  }
  if (!(ratio > 0.0 && ratio < 1.0))
    return n.error() << "Dropout ratio " << ratio
                     << " is outside [0, 1); a ratio of 1 drops everything",
           failure();
  if (shape.empty())
    return n.error() << "Dropout in training mode needs an input with a "
                        "batch dimension",
           failure();
  // The node's seed attribute, else the compile's --seed.
  uint64_t seed = n.attr("seed") ? uint64_t(n.intAttr("seed", 0))
                                 : n.state.randomSeed;
  uint32_t keep = zero::dropoutKeepThreshold(ratio);
  Value mask = keepMask(n, shape, keep, seed, n.state.randomStreams++);
  // Kept values are scaled by 1 / (1 - ratio), as PyTorch does.
  Type elt = NodeImporter::eltOf(x);
  int64_t rank = shape.size();
  Value scaled = *n.mul(x, n.scalar(elt, 1.0 / (1.0 - ratio), rank));
  Value zero = n.scalar(elt, 0.0, rank);
  n.setOutput(0, tosa::SelectOp::create(n.b, n.loc, scaled.getType(), mask,
                                        scaled, zero)
                     .getResult());
  if (n.hasOutput(1))
    n.setOutput(1, mask);
  return success();
}

void mlir::zero::onnx_import::registerRandomLowerings(
    llvm::StringMap<LoweringFn> &m) {
  m["Dropout"] = lowerDropout;
}
