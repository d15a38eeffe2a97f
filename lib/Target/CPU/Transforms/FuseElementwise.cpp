//===- FuseElementwise.cpp - fusion that keeps GEMMs intact ----*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUFUSEELEMENTWISE
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

/// Contractions and convolutions stay named ops for the BLAS lowering.
static bool isGemmLike(Operation *op) {
  auto l = dyn_cast_if_present<linalg::LinalgOp>(op);
  return l && (linalg::isaContractionOpInterface(l) ||
               linalg::isaConvolutionOpInterface(l));
}

namespace {
struct ZeroCPUFuseElementwisePass
    : zero::cpu::impl::ZeroCPUFuseElementwiseBase<ZeroCPUFuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    linalg::ControlFusionFn control = [](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      return producer && producer->hasOneUse() && !isGemmLike(producer) &&
             !isGemmLike(operand->getOwner());
    };
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
