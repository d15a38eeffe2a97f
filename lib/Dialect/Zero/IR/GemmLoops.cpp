//===- GemmLoops.cpp - the loops of a GEMM given by its maps ----*- C++ -*-===//
#include "zero-opt/Dialect/Zero/IR/GemmLoops.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

using namespace mlir;

std::optional<zero::GemmLoops> zero::getGemmLoops(ArrayRef<AffineMap> maps) {
  if (maps.size() != 3)
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(maps);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.size() != 1)
    return std::nullopt;
  AffineMap c = maps[2];
  auto cPosition = [&](unsigned loop) {
    return *c.getResultPosition(getAffineDimExpr(loop, c.getContext()));
  };
  auto byPosition = [&](unsigned x, unsigned y) {
    return cPosition(x) < cPosition(y);
  };
  SmallVector<unsigned> m(dims->m.begin(), dims->m.end());
  SmallVector<unsigned> n(dims->n.begin(), dims->n.end());
  llvm::sort(m, byPosition);
  llvm::sort(n, byPosition);
  GemmLoops loops;
  loops.batch.assign(dims->batch.begin(), dims->batch.end());
  loops.batch.append(m.begin(), m.end() - 1);
  loops.batch.append(n.begin(), n.end() - 1);
  if (loops.batch.size() > 2 || loops.batch.size() + 3 != c.getNumDims())
    return std::nullopt;
  loops.m = m.back();
  loops.n = n.back();
  loops.k = dims->k.front();
  return loops;
}
