//===- LinalgToBLAS.cpp - matmuls as runtime BLAS calls --------*- C++ -*-===//
//
// A GEMM written as loops runs far below the core's peak; the runtime calls
// an optimized BLAS instead. Each operand is passed as its aligned base
// pointer, offset and strides, so views (transposes, slices) need no copy
// when one of their two inner strides is 1; the runtime handles the rest.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Conversion/RuntimeFunctions.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
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

/// A loop of the GEMM, or none (a batch loop the GEMM does not have:
/// extent 1, stride 0).
static constexpr unsigned kNoLoop = ~0u;

/// Appends the aligned pointer and offset of `memref`, read through `map`,
/// and its element stride along each of `loops` (0 along a loop that does
/// not index it: the operand is broadcast). The strides say everything:
/// a transposed map or a permuted view is an operand whose inner strides
/// are swapped, a split batch is two batch strides.
static void appendOperand(OpBuilder &b, Location loc, Value memref,
                          AffineMap map, ArrayRef<unsigned> loops,
                          SmallVectorImpl<Value> &args) {
  auto i64 = b.getI64Type();
  auto toI64 = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, i64, v).getResult();
  };
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  args.push_back(toI64(ptr));
  args.push_back(toI64(md.getOffset()));
  for (unsigned loop : loops) {
    std::optional<unsigned> pos =
        loop == kNoLoop ? std::nullopt
                        : map.getResultPosition(b.getAffineDimExpr(loop));
    args.push_back(
        pos ? toI64(md.getStrides()[*pos])
            : arith::ConstantIntOp::create(b, loc, i64, 0).getResult());
  }
}

/// The element type of a static memref, or null.
static Type staticElementType(Value v) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.hasStaticShape() ? t.getElementType() : Type();
}

/// The runtime function for a GEMM's operand types: f32 or f64
/// throughout, or 16-bit A and B (bf16, f16) accumulating into f32 C.
static std::optional<zero::RuntimeFunction> gemmFunction(Operation *op) {
  Type a = staticElementType(op->getOperand(0));
  Type b = staticElementType(op->getOperand(1));
  Type c = staticElementType(op->getOperand(2));
  if (!a || a != b || !c)
    return std::nullopt;
  if (a.isF64() && c.isF64())
    return zero::RuntimeFunction::Dgemm;
  if (!c.isF32())
    return std::nullopt;
  if (a.isF32())
    return zero::RuntimeFunction::Sgemm;
  if (a.isBF16() || a.isF16())
    return zero::RuntimeFunction::Gemm16;
  return std::nullopt;
}

/// The runtime call of a GEMM over `op`'s three operands, read through
/// `maps`; C is written without being read when `overwrite`, else the
/// products are added to it. A 16-bit GEMM passes A's and C's types.
static void emitGemmCall(OpBuilder &b, Operation *op, ArrayRef<AffineMap> maps,
                         const zero::GemmLoops &gemm, ArrayRef<int64_t> ranges,
                         zero::RuntimeFunction fn, bool overwrite) {
  Location loc = op->getLoc();
  auto i64 = b.getI64Type();
  auto module = op->getParentOfType<ModuleOp>();
  func::FuncOp callee = zero::lookupOrDeclareRuntimeFunction(module, fn);
  // Two batch loops, outer first; a missing one has extent 1.
  SmallVector<unsigned> batch(2 - gemm.batch.size(), kNoLoop);
  batch.append(gemm.batch.begin(), gemm.batch.end());
  SmallVector<Value> args;
  if (fn == zero::RuntimeFunction::Gemm16)
    for (unsigned operand : {0, 2})
      args.push_back(arith::ConstantIntOp::create(
          b, loc, b.getI32Type(),
          zero::runtimeDataType(staticElementType(op->getOperand(operand)))));
  for (unsigned loop : {batch[0], batch[1], gemm.m, gemm.n, gemm.k})
    args.push_back(arith::ConstantIntOp::create(
        b, loc, i64, loop == kNoLoop ? 1 : ranges[loop]));
  appendOperand(b, loc, op->getOperand(0), maps[0],
                {batch[0], batch[1], gemm.m, gemm.k}, args);
  appendOperand(b, loc, op->getOperand(1), maps[1],
                {batch[0], batch[1], gemm.k, gemm.n}, args);
  appendOperand(b, loc, op->getOperand(2), maps[2],
                {batch[0], batch[1], gemm.m, gemm.n}, args);
  args.push_back(arith::ConstantIntOp::create(b, loc, i64, overwrite ? 0 : 1));
  func::CallOp::create(b, loc, callee, args);
}

namespace {
struct ZeroLinalgToBLASPass
    : zero::impl::ZeroLinalgToBLASBase<ZeroLinalgToBLASPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    struct Gemm {
      linalg::LinalgOp op;
      zero::GemmLoops loops;
      zero::RuntimeFunction fn;
    };
    SmallVector<Gemm> gemms;
    SmallVector<zero::RoundedMatmulOp> rounded;
    module.walk([&](Operation *op) {
      if (auto mm = dyn_cast<zero::RoundedMatmulOp>(op)) {
        if (isa<MemRefType>(mm.getInit().getType()))
          rounded.push_back(mm);
        return;
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (!linalgOp)
        return;
      std::optional<zero::GemmLoops> loops = zero::getGemmLoops(linalgOp);
      if (!loops || !linalgOp.hasPureBufferSemantics() ||
          op->getNumOperands() != 3)
        return;
      if (std::optional<zero::RuntimeFunction> fn = gemmFunction(op))
        gemms.push_back({linalgOp, *loops, *fn});
    });

    OpBuilder b(module.getBodyRegion());
    for (auto [op, gemm, fn] : gemms) {
      b.setInsertionPoint(op);
      linalg::FillOp fill = zero::zeroFillBefore(op, op->getOperand(2));
      emitGemmCall(b, op, op.getIndexingMapsArray(), gemm,
                   op.getStaticLoopRanges(), fn, /*overwrite=*/bool(fill));
      if (fill)
        fill->erase();
      op->erase();
    }
    // C is 16-bit: the runtime rounds the f32 sums (and C, when the op
    // accumulates) into it.
    for (zero::RoundedMatmulOp mm : rounded) {
      b.setInsertionPoint(mm);
      SmallVector<AffineMap> maps = mm.getIndexingMapsArray();
      emitGemmCall(b, mm, maps, *zero::getGemmLoops(maps),
                   mm.getStaticLoopRanges(), zero::RuntimeFunction::Gemm16,
                   /*overwrite=*/!mm.getAccumulate());
      mm->erase();
    }
  }
};
} // namespace
