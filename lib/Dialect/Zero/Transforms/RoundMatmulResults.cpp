//===- RoundMatmulResults.cpp - 16-bit GEMMs write 16 bits ------*- C++ -*-===//
//
// A 16-bit GEMM whose f32 product every user rounds to 16 bits computes the
// same values as one GEMM that rounds its sums itself, without the f32
// product in memory. The matmul becomes `zero.rounded_matmul`; its users
// read the 16-bit result where they rounded the f32 one.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROROUNDMATMULRESULTS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

Type retyped(Type t, Type element) {
  return cast<RankedTensorType>(t).clone(element);
}

struct ZeroRoundMatmulResultsPass
    : zero::impl::ZeroRoundMatmulResultsBase<ZeroRoundMatmulResultsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, zero::RoundedUses>> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (std::optional<zero::RoundedUses> uses = zero::getRoundedUses(op))
        gemms.push_back({op, std::move(*uses)});
    });

    // Consumers that only rounded are left copying their input: upstream's
    // canonicalization replaces such a copy by the input.
    SetVector<Operation *> consumers;
    for (auto &[op, uses] : gemms) {
      Type t = getElementTypeOrSelf(op->getOperand(0).getType());
      Value init = op.getDpsInits()[0];
      auto fill = init.getDefiningOp<linalg::FillOp>();
      // The buffer keeps the f32 destination's location (its memory
      // category).
      Value dest = fill.getOutputs().front();
      OpBuilder b(op);
      auto empty = tensor::EmptyOp::create(
          b, dest.getLoc(), cast<RankedTensorType>(init.getType()).getShape(),
          t);
      auto mm = zero::RoundedMatmulOp::create(
          b, op.getLoc(), TypeRange{empty.getType()}, op->getOperand(0),
          op->getOperand(1), empty,
          b.getAffineMapArrayAttr(op.getIndexingMapsArray()));
      for (Value v : uses.views)
        v.setType(retyped(v.getType(), t));
      for (auto &[generic, arg] : uses.consumers) {
        consumers.insert(generic);
        arg.setType(t);
        for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
          user->getResult(0).replaceAllUsesWith(arg);
          user->erase();
        }
      }
      op->getResult(0).replaceAllUsesWith(mm.getResult()[0]);
      op->erase();
      if (fill->use_empty())
        fill->erase();
      if (Operation *def = dest.getDefiningOp();
          def && def->use_empty() && isa<tensor::EmptyOp>(def))
        def->erase();
    }
    if (consumers.empty())
      return;
    RewritePatternSet patterns(&getContext());
    linalg::GenericOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(consumers.takeVector(),
                                       std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace
