//===- PadInPlace.cpp - padded operands written where they go ----*- C++
//-*-===//
//
// A tensor.pad bufferizes to a fill of the whole padded buffer and a copy
// of the source into it: the logits' gradient padded for its GEMMs was
// 823 MB filled, written, copied and held twice at the step's peak. When
// the source is an op's fresh result, the op can write into the padded
// buffer's interior instead, and only the border is filled.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUPADINPLACE
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// The op whose fresh result `v` views, through reshapes that each have one
/// use, with those reshapes (the last one nearest `v`); null when `v` is
/// not such a result.
std::pair<linalg::LinalgOp, SmallVector<Operation *>> freshProducer(Value v) {
  SmallVector<Operation *> views;
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    if (!def->hasOneUse())
      return {};
    views.push_back(def);
    v = def->getOperand(0);
  }
  // A linalg op writes any strided view; a collective's destination, say,
  // must be contiguous.
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!op || op->getNumResults() != 1 || !op.hasPureTensorSemantics() ||
      !v.hasOneUse())
    return {};
  OpOperand *init = op.getDpsInitOperand(0);
  auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
  // The op must not read its destination, and nothing else may write it.
  if (!empty || !empty->hasOneUse() || op.payloadUsesValueFromOperand(init))
    return {};
  std::reverse(views.begin(), views.end());
  return {op, views};
}

struct ZeroGPUPadInPlacePass
    : zero::cuda::impl::ZeroGPUPadInPlaceBase<ZeroGPUPadInPlacePass> {
  void runOnOperation() override {
    SmallVector<tensor::PadOp> pads;
    getOperation()->walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    IRRewriter rewriter(&getContext());
    for (tensor::PadOp pad : pads) {
      Value padValue = pad.getConstantPaddingValue();
      TypedAttr padAttr;
      RankedTensorType type = pad.getResultType();
      RankedTensorType srcType = pad.getSourceType();
      if (!padValue || !matchPattern(padValue, m_Constant(&padAttr)) ||
          !type.hasStaticShape() || !srcType.hasStaticShape() ||
          !llvm::all_of(pad.getStaticLow(), [](int64_t l) { return l == 0; }))
        continue;
      auto [producer, views] = freshProducer(pad.getSource());
      if (!producer)
        continue;
      Location loc = pad.getLoc();
      // The padded buffer, allocated where the producer's was, its border
      // filled: one slab per padded dimension.
      rewriter.setInsertionPoint(producer);
      padValue = arith::ConstantOp::create(rewriter, loc, padAttr);
      unsigned rank = type.getRank();
      Value padded = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                             type.getElementType());
      SmallVector<OpFoldResult> zeros(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
      SmallVector<OpFoldResult> full =
          getAsIndexOpFoldResult(&getContext(), type.getShape());
      for (unsigned d = 0; d < rank; ++d) {
        int64_t border = type.getDimSize(d) - srcType.getDimSize(d);
        if (border == 0)
          continue;
        SmallVector<OpFoldResult> offsets = zeros, sizes = full;
        offsets[d] = rewriter.getIndexAttr(srcType.getDimSize(d));
        sizes[d] = rewriter.getIndexAttr(border);
        Value slab = tensor::ExtractSliceOp::create(rewriter, loc, padded,
                                                    offsets, sizes, ones);
        Value filled =
            linalg::FillOp::create(rewriter, loc, padValue, slab).result();
        padded = tensor::InsertSliceOp::create(rewriter, loc, filled, padded,
                                               offsets, sizes, ones);
      }
      // The producer writes the interior, seen through the inverse views.
      SmallVector<OpFoldResult> interior =
          getAsIndexOpFoldResult(&getContext(), srcType.getShape());
      Value dest = tensor::ExtractSliceOp::create(rewriter, loc, padded, zeros,
                                                  interior, ones);
      for (Operation *view : llvm::reverse(views)) {
        if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(view))
          dest = tensor::ExpandShapeOp::create(
              rewriter, loc, collapse.getSrcType(), dest,
              collapse.getReassociationIndices());
        else
          dest = tensor::CollapseShapeOp::create(
              rewriter, loc, dest,
              cast<tensor::ExpandShapeOp>(view).getReassociationIndices());
      }
      OpOperand *init = producer.getDpsInitOperand(0);
      Operation *empty = init->get().getDefiningOp();
      rewriter.modifyOpInPlace(producer, [&] { init->set(dest); });
      rewriter.eraseOp(empty);
      rewriter.setInsertionPoint(pad);
      rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
          pad, pad.getSource(), padded, zeros, interior, ones);
    }
  }
};
} // namespace
