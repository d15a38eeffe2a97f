//===- BF16MemoryAsBits.cpp - bf16 loads and stores as i16 -----*- C++ -*-===//
//
// After zero-cpu-expand-bf16 a bf16 value is only loaded, stored and
// bitcast to or from its bits. Left as bf16, LLVM's combiner moves those
// bitcasts through selects and the vectorizer then legalizes a bf16
// vector through f32 and `__truncsfbf2`, which the system's libgcc lacks.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUBF16MEMORYASBITS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
bool isBF16(Value v) { return v.getType().isBF16(); }

/// store (bitcast i16 -> bf16 %x)  ->  store %x
struct StoreBits : OpRewritePattern<LLVM::StoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LLVM::StoreOp op,
                                PatternRewriter &rewriter) const override {
    auto cast = op.getValue().getDefiningOp<LLVM::BitcastOp>();
    if (!cast || !isBF16(cast.getResult()) ||
        !cast.getArg().getType().isInteger(16))
      return failure();
    rewriter.modifyOpInPlace(
        op, [&] { op.getValueMutable().assign(cast.getArg()); });
    return success();
  }
};

/// A bf16 load that is only bitcast to i16 or stored loads i16.
struct LoadBits : OpRewritePattern<LLVM::LoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LLVM::LoadOp op,
                                PatternRewriter &rewriter) const override {
    Value loaded = op.getResult();
    if (!isBF16(loaded) || loaded.use_empty())
      return failure();
    for (OpOperand &use : loaded.getUses()) {
      auto store = dyn_cast<LLVM::StoreOp>(use.getOwner());
      if (store && use.getOperandNumber() == 0 && !store.getVolatile_())
        continue;
      auto cast = dyn_cast<LLVM::BitcastOp>(use.getOwner());
      if (!cast || !cast.getType().isInteger(16))
        return failure();
    }
    Operation *bits = rewriter.clone(*op);
    bits->getResult(0).setType(rewriter.getI16Type());
    Value b = bits->getResult(0);
    for (OpOperand &use : llvm::make_early_inc_range(loaded.getUses())) {
      if (auto cast = dyn_cast<LLVM::BitcastOp>(use.getOwner()))
        rewriter.replaceOp(cast, b);
      else
        rewriter.modifyOpInPlace(use.getOwner(), [&] { use.set(b); });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct ZeroCPUBF16MemoryAsBitsPass
    : zero::cpu::impl::ZeroCPUBF16MemoryAsBitsBase<
          ZeroCPUBF16MemoryAsBitsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StoreBits, LoadBits>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
