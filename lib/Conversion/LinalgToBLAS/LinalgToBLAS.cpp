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

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROLINALGTOBLAS
#include "zero-opt/Conversion/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;


/// Appends pointer, offset and the three strides of a rank-2 or rank-3 view
/// (a rank-2 view gets batch stride 0).
static void appendOperand(OpBuilder &b, Location loc, Value memref,
                          SmallVectorImpl<Value> &args) {
  auto i64 = b.getI64Type();
  auto toI64 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, i64, v).getResult();
  };
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  args.push_back(toI64(ptr));
  args.push_back(toI64(md.getOffset()));
  auto strides = md.getStrides();
  if (strides.size() == 2)
    args.push_back(arith::ConstantIntOp::create(b, loc, i64, 0));
  for (Value s : strides)
    args.push_back(toI64(s));
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
    SmallVector<linalg::LinalgOp> gemms;
    module.walk([&](linalg::LinalgOp op) {
      unsigned rank;
      if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
        if (mm.hasUserDefinedMaps())
          return;
        rank = 2;
      } else if (auto bmm =
                     dyn_cast<linalg::BatchMatmulOp>(op.getOperation())) {
        if (bmm.hasUserDefinedMaps())
          return;
        rank = 3;
      } else {
        return;
      }
      if (!op.hasPureBufferSemantics() || op->getNumOperands() != 3)
        return;
      if (llvm::all_of(op->getOperands(),
                       [&](Value v) { return isF32Memref(v, rank); }))
        gemms.push_back(op);
    });
    if (gemms.empty())
      return;

    OpBuilder b(module.getBodyRegion());
    auto i64 = b.getI64Type();
    func::FuncOp callee =
        zero::lookupOrDeclareRuntimeFunction(module,
                                             zero::RuntimeFunction::Sgemm);

    for (linalg::LinalgOp op : gemms) {
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      Value a = op->getOperand(0), bm = op->getOperand(1),
            c = op->getOperand(2);
      auto ct = cast<MemRefType>(c.getType());
      auto at = cast<MemRefType>(a.getType());
      int64_t batch = ct.getRank() == 3 ? ct.getDimSize(0) : 1;
      int64_t m = ct.getDimSize(ct.getRank() - 2);
      int64_t n = ct.getDimSize(ct.getRank() - 1);
      int64_t k = at.getDimSize(at.getRank() - 1);
      SmallVector<Value> args;
      for (int64_t d : {batch, m, n, k})
        args.push_back(arith::ConstantIntOp::create(b, loc, i64, d));
      appendOperand(b, loc, a, args);
      appendOperand(b, loc, bm, args);
      appendOperand(b, loc, c, args);
      func::CallOp::create(b, loc, callee, args);
      op->erase();
    }
  }
};
} // namespace
