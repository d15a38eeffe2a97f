//===- MatmulLayout.cpp - matmuls that read operands transposed -*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

AffineMap zero::swapInnermostResults(AffineMap map) {
  SmallVector<AffineExpr> results(map.getResults());
  std::swap(results[results.size() - 2], results.back());
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                        map.getContext());
}

static SmallVector<AffineMap> defaultMaps(linalg::LinalgOp op) {
  if (isa<linalg::MatmulOp>(op.getOperation()))
    return linalg::MatmulOp::getDefaultIndexingMaps(op->getContext());
  if (isa<linalg::BatchMatmulOp>(op.getOperation()))
    return linalg::BatchMatmulOp::getDefaultIndexingMaps(op->getContext());
  return {};
}

std::optional<zero::GemmTransposes>
zero::getGemmTransposes(linalg::LinalgOp op) {
  SmallVector<AffineMap> defaults = defaultMaps(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (defaults.empty() || maps.size() != 3 || maps[2] != defaults[2])
    return std::nullopt;
  bool transposed[2];
  for (unsigned i = 0; i < 2; ++i) {
    if (maps[i] == defaults[i])
      transposed[i] = false;
    else if (maps[i] == swapInnermostResults(defaults[i]))
      transposed[i] = true;
    else
      return std::nullopt;
  }
  return GemmTransposes{transposed[0], transposed[1]};
}

SmallVector<AffineMap> zero::getGemmMaps(linalg::LinalgOp op,
                                         GemmTransposes t) {
  SmallVector<AffineMap> maps = defaultMaps(op);
  if (t.a)
    maps[0] = swapInnermostResults(maps[0]);
  if (t.b)
    maps[1] = swapInnermostResults(maps[1]);
  return maps;
}

std::optional<zero::GemmLoops> zero::getGemmLoops(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  return getGemmLoops(op.getIndexingMapsArray());
}

bool mlir::zero::isZeroFill(linalg::FillOp fill) {
  auto cst = fill.getInputs().front().getDefiningOp<arith::ConstantOp>();
  auto value = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
  return value && value.getValue().isZero();
}

linalg::FillOp mlir::zero::zeroFillBefore(Operation *op, Value c) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs().front() != c)
        return {};
      return isZeroFill(fill) ? fill : linalg::FillOp();
    }
    if (!isMemoryEffectFree(prev))
      return {};
  }
  return {};
}

bool mlir::zero::isGemmZeroFill(linalg::FillOp fill) {
  Operation *next = fill->getNextNode();
  while (next && isMemoryEffectFree(next))
    next = next->getNextNode();
  auto gemm = dyn_cast_or_null<linalg::LinalgOp>(next);
  return gemm && gemm.getNumDpsInits() == 1 && getGemmLoops(gemm) &&
         zeroFillBefore(gemm, gemm.getDpsInits()[0]) == fill;
}

std::optional<AffineMap> zero::readThroughUnitReshape(Operation *reshape,
                                                      AffineMap map) {
  MLIRContext *ctx = map.getContext();
  SmallVector<AffineExpr> results;
  auto nonUnit = [](ArrayRef<int64_t> shape, const ReassociationIndices &g)
      -> std::optional<std::optional<int64_t>> {
    std::optional<int64_t> kept;
    for (int64_t d : g) {
      if (shape[d] == 1)
        continue;
      if (kept)
        return std::nullopt;
      kept = d;
    }
    return kept;
  };
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape)) {
    ArrayRef<int64_t> shape = expand.getResultType().getShape();
    for (const ReassociationIndices &g : expand.getReassociationIndices()) {
      auto kept = nonUnit(shape, g);
      if (!kept)
        return std::nullopt;
      results.push_back(*kept ? map.getResult(**kept)
                              : getAffineConstantExpr(0, ctx));
    }
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape)) {
    ArrayRef<int64_t> shape = collapse.getSrcType().getShape();
    for (auto [i, g] : llvm::enumerate(collapse.getReassociationIndices())) {
      auto kept = nonUnit(shape, g);
      if (!kept)
        return std::nullopt;
      for (int64_t d : g)
        results.push_back(*kept && **kept == d ? map.getResult(i)
                                               : getAffineConstantExpr(0, ctx));
    }
  } else {
    return std::nullopt;
  }
  return AffineMap::get(map.getNumDims(), 0, results, ctx);
}

/// Whether `arg` is only rounded to `type`, to nearest even.
static bool onlyRounded(BlockArgument arg, Type type) {
  return llvm::all_of(arg.getUsers(), [&](Operation *user) {
    auto trunc = dyn_cast<arith::TruncFOp>(user);
    return trunc && trunc.getType() == type && !trunc.getRoundingmodeAttr();
  });
}

std::optional<zero::RoundedUses> zero::getRoundedUses(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || !getGemmLoops(op))
    return std::nullopt;
  auto types = llvm::map_to_vector(op->getOperands(), [](Value v) {
    return dyn_cast<RankedTensorType>(v.getType());
  });
  if (types.size() != 3 || llvm::any_of(types, [](RankedTensorType t) {
        return !t || !t.hasStaticShape();
      }))
    return std::nullopt;
  Type t = types[0].getElementType();
  // The GEMM's sums start from nothing.
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!(t.isBF16() || t.isF16()) || types[1].getElementType() != t ||
      !types[2].getElementType().isF32() || !fill || !isZeroFill(fill))
    return std::nullopt;
  RoundedUses uses;
  SmallVector<Value> worklist = {op->getResult(0)};
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
      if (!onlyRounded(arg, t))
        return std::nullopt;
      uses.consumers.push_back({generic, arg});
    }
  }
  if (uses.consumers.empty())
    return std::nullopt;
  return uses;
}
