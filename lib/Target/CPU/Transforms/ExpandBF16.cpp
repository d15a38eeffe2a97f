//===- ExpandBF16.cpp - bf16 conversions as integer arithmetic -*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUEXPANDBF16
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
struct ZeroCPUExpandBF16Pass
    : zero::cpu::impl::ZeroCPUExpandBF16Base<ZeroCPUExpandBF16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
