//===- PadGemmDims.cpp - 16-bit GEMMs on multiples of 8 -------*- C++ -*-===//
//
// cuBLAS runs a bf16 GEMM whose M, N or K is not a multiple of 8 with
// Turing-era kernels: on an H100, GPT-2's vocabulary of 50257 made the
// logits GEMM 7.9 times slower than at 50264 (13.3 against 1.7 ms), its
// two gradients 5 times. The leading dimensions made no difference. Such a
// GEMM runs on operands zero-padded to the next multiple of 8 instead, and
// its users read the original extent as a slice of the padded result.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUPADGEMMDIMS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {
/// The multiple cuBLAS's tensor-core kernels want of 16-bit GEMMs' M, N, K.
constexpr int64_t kMultiple = 8;

bool isStatic16BitFloat(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && isa<FloatType>(t.getElementType()) &&
         t.getElementTypeBitWidth() == 16;
}

struct ZeroGPUPadGemmDimsPass
    : zero::cuda::impl::ZeroGPUPadGemmDimsBase<ZeroGPUPadGemmDimsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minExtent < 1) {
      getOperation()->emitError()
          << "min-extent is " << static_cast<int64_t>(minExtent)
          << "; give a dimension length of at least 1";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, zero::GemmLoops>> gemms;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() ||
          !llvm::all_of(op.getDpsInputs(), isStatic16BitFloat) ||
          !cast<RankedTensorType>(op.getDpsInits()[0].getType())
               .hasStaticShape())
        return;
      if (std::optional<zero::GemmLoops> loops = zero::getGemmLoops(op))
        gemms.push_back({op, *loops});
    });
    IRRewriter rewriter(&getContext());
    bool changed = false;
    for (auto &[op, loops] : gemms) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      SmallVector<int64_t> dims;
      for (unsigned d : {loops.m, loops.n, loops.k})
        if (ranges[d] % kMultiple && ranges[d] >= minExtent)
          dims.push_back(d);
      if (dims.empty())
        continue;
      linalg::LinalgPaddingOptions options;
      options.setPaddingDimensions(dims);
      options.setPadToMultipleOf(SmallVector<int64_t>(dims.size(), kMultiple));
      SmallVector<Attribute> zeros;
      for (Value v : op->getOperands())
        zeros.push_back(rewriter.getZeroAttr(getElementTypeOrSelf(v)));
      options.setPaddingValues(zeros);
      options.setCopyBackOp(linalg::LinalgPaddingOptions::CopyBackOp::None);
      linalg::LinalgOp padded;
      SmallVector<Value> replacements;
      SmallVector<tensor::PadOp> pads;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::rewriteAsPaddedOp(rewriter, op, options, padded,
                                           replacements, pads)))
        continue;
      rewriter.replaceOp(op, replacements);
      changed = true;
    }
    if (!changed)
      return;
    // A zero accumulator padded with zeros is a fill of the padded shape,
    // which the BLAS lowering still sees as the GEMM's beta = 0.
    RewritePatternSet patterns(&getContext());
    linalg::FillOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::PadOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
