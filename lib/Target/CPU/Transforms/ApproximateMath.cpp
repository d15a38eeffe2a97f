//===- ApproximateMath.cpp - vectorizable f32 transcendentals --*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUAPPROXIMATEMATH
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
struct ZeroCPUApproximateMathPass
    : zero::cpu::impl::ZeroCPUApproximateMathBase<ZeroCPUApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Only the functions whose error test/e2e/math_accuracy.py measures;
    // log stays with libm (the approximation is wrong for subnormal input).
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          return llvm::is_contained({math::ExpOp::getOperationName(),
                                     math::TanhOp::getOperationName(),
                                     math::ErfOp::getOperationName()},
                                    name);
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
