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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROROUNDMATMULRESULTS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;

namespace {

/// What a GEMM's f32 result reaches: views that keep its values (their
/// results retyped), and consumer inputs whose block argument is only
/// rounded.
struct Uses {
  SmallVector<Value> views;
  SmallVector<std::pair<linalg::GenericOp, BlockArgument>> consumers;
};

/// Whether `arg` is only rounded to `type`, to nearest even.
bool onlyRounded(BlockArgument arg, Type type) {
  return llvm::all_of(arg.getUsers(), [&](Operation *user) {
    auto trunc = dyn_cast<arith::TruncFOp>(user);
    return trunc && trunc.getType() == type && !trunc.getRoundingmodeAttr();
  });
}

/// The uses of `result` when every one ends in a rounding to `type`.
std::optional<Uses> roundedUses(Value result, Type type) {
  Uses uses;
  SmallVector<Value> worklist = {result};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp,
              tensor::ExpandShapeOp>(user) &&
          use.getOperandNumber() == 0) {
        uses.views.push_back(user->getResult(0));
        worklist.push_back(user->getResult(0));
        continue;
      }
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (!generic || !generic.hasPureTensorSemantics() ||
          !generic.isDpsInput(&use))
        return std::nullopt;
      BlockArgument arg = generic.getMatchingBlockArgument(&use);
      if (!onlyRounded(arg, type))
        return std::nullopt;
      uses.consumers.push_back({generic, arg});
    }
  }
  if (uses.consumers.empty())
    return std::nullopt;
  return uses;
}

Type retyped(Type t, Type element) {
  return cast<RankedTensorType>(t).clone(element);
}

struct ZeroRoundMatmulResultsPass
    : zero::impl::ZeroRoundMatmulResultsBase<ZeroRoundMatmulResultsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Uses>> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || !zero::getGemmLoops(op))
        return;
      auto types = llvm::map_to_vector(op->getOperands(), [](Value v) {
        return dyn_cast<RankedTensorType>(v.getType());
      });
      if (llvm::any_of(types, [](RankedTensorType t) {
            return !t || !t.hasStaticShape();
          }))
        return;
      Type t = types[0].getElementType();
      // The GEMM's sums start from nothing.
      auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
      if (!(t.isBF16() || t.isF16()) || types[1].getElementType() != t ||
          !types[2].getElementType().isF32() || !fill ||
          !zero::isZeroFill(fill))
        return;
      if (std::optional<Uses> uses = roundedUses(op->getResult(0), t))
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
