//===- LinalgToBLAS.cpp - f32 matmuls as runtime BLAS calls ----*- C++ -*-===//
//
// A GEMM written as loops runs far below the core's peak; the runtime calls
// an optimized BLAS instead. Each operand is passed as its aligned base
// pointer, offset and strides, so views (transposes, slices) need no copy
// when one of their two inner strides is 1; the runtime handles the rest.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Conversion/RuntimeFunctions.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROLINALGTOBLAS
#include "zero-opt/Conversion/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;


/// Appends pointer, offset and the three strides of a rank-2 or rank-3 view
/// (a rank-2 view gets batch stride 0); `transposed` swaps the two inner
/// strides, so BLAS reads the stored operand as its transpose.
static void appendOperand(OpBuilder &b, Location loc, Value memref,
                          bool transposed, SmallVectorImpl<Value> &args) {
  auto i64 = b.getI64Type();
  auto toI64 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, i64, v).getResult();
  };
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  args.push_back(toI64(ptr));
  args.push_back(toI64(md.getOffset()));
  SmallVector<Value> strides(md.getStrides());
  if (transposed)
    std::swap(strides[strides.size() - 2], strides.back());
  if (strides.size() == 2)
    args.push_back(arith::ConstantIntOp::create(b, loc, i64, 0));
  for (Value s : strides)
    args.push_back(toI64(s));
}

/// The `linalg.fill` of zeros into `c` that the GEMM `op` would
/// accumulate onto, when nothing between them touches memory: BLAS then
/// writes C without reading it (beta = 0) and the fill goes.
static linalg::FillOp zeroFillBefore(Operation *op, Value c) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getOutputs().front() != c)
        return {};
      auto cst = fill.getInputs().front().getDefiningOp<arith::ConstantOp>();
      auto value = cst ? dyn_cast<FloatAttr>(cst.getValue()) : FloatAttr();
      return value && value.getValue().isZero() ? fill : linalg::FillOp();
    }
    if (!isMemoryEffectFree(prev))
      return {};
  }
  return {};
}

static bool isF32Memref(Value v, unsigned rank) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getRank() == rank && t.getElementType().isF32() &&
         t.hasStaticShape();
}

namespace {
struct ZeroLinalgToBLASPass
    : zero::impl::ZeroLinalgToBLASBase<ZeroLinalgToBLASPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::LinalgOp, zero::GemmTransposes>> gemms;
    module.walk([&](linalg::LinalgOp op) {
      auto transposed = zero::getGemmTransposes(op);
      if (!transposed || !op.hasPureBufferSemantics() ||
          op->getNumOperands() != 3)
        return;
      unsigned rank = isa<linalg::MatmulOp>(op.getOperation()) ? 2 : 3;
      if (llvm::all_of(op->getOperands(),
                       [&](Value v) { return isF32Memref(v, rank); }))
        gemms.push_back({op, *transposed});
    });
    if (gemms.empty())
      return;

    OpBuilder b(module.getBodyRegion());
    auto i64 = b.getI64Type();
    func::FuncOp callee =
        zero::lookupOrDeclareRuntimeFunction(module,
                                             zero::RuntimeFunction::Sgemm);

    for (auto [op, transposed] : gemms) {
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      // Loops are (m, n, k), or (batch, m, n, k), whatever the maps.
      SmallVector<int64_t> loops = op.getStaticLoopRanges();
      if (loops.size() == 3)
        loops.insert(loops.begin(), 1);
      SmallVector<Value> args;
      for (int64_t d : loops)
        args.push_back(arith::ConstantIntOp::create(b, loc, i64, d));
      appendOperand(b, loc, op->getOperand(0), transposed.a, args);
      appendOperand(b, loc, op->getOperand(1), transposed.b, args);
      appendOperand(b, loc, op->getOperand(2), false, args);
      linalg::FillOp fill = zeroFillBefore(op, op->getOperand(2));
      args.push_back(arith::ConstantIntOp::create(b, loc, i64, fill ? 0 : 1));
      if (fill)
        fill->erase();
      func::CallOp::create(b, loc, callee, args);
      op->erase();
    }
  }
};
} // namespace
