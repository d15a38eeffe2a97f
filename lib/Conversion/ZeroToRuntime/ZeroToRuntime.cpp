//===- ZeroToRuntime.cpp - collectives as runtime calls --------*- C++ -*-===//
#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-rt/Runtime.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {
#define GEN_PASS_DEF_CONVERTZEROTORUNTIME
#include "zero-opt/Conversion/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

static func::FuncOp declare(ModuleOp module, StringRef name,
                            FunctionType type) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  auto f = func::FuncOp::create(b, module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

/// Byte address of a contiguous buffer's first element.
static FailureOr<Value> address(OpBuilder &b, Location loc, Value memref) {
  auto t = cast<MemRefType>(memref.getType());
  if (!t.areTrailingDimsContiguous(t.getRank())) {
    emitError(loc, "collective on a non-contiguous buffer");
    return failure();
  }
  auto i64 = b.getI64Type();
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  unsigned bytes = t.getElementType().getIntOrFloatBitWidth() / 8;
  Value off = arith::MulIOp::create(
      b, loc, md.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
  Value addr = arith::AddIOp::create(b, loc, base, off);
  return arith::IndexCastOp::create(b, loc, i64, addr).getResult();
}

namespace {
struct ConvertZeroToRuntimePass
    : zero::impl::ConvertZeroToRuntimeBase<ConvertZeroToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(&getContext());
    auto i32 = b.getI32Type(), i64 = b.getI64Type();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<AllReduceOp, ReduceScatterOp, AllGatherOp, RankOp>(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    func::FuncOp start =
        declare(module, "zero_rt_comm_start",
                b.getFunctionType({i32, i32, i64, i64, i64, i64}, {i64}));
    func::FuncOp wait =
        declare(module, "zero_rt_comm_wait", b.getFunctionType({i64}, {}));
    func::FuncOp rank =
        declare(module, "zero_rt_rank", b.getFunctionType({}, {i64}));
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      Location loc = op->getLoc();
      if (isa<RankOp>(op)) {
        Value r = func::CallOp::create(b, loc, rank, ValueRange{}).getResult(0);
        op->getResult(0).replaceAllUsesWith(
            arith::IndexCastOp::create(b, loc, b.getIndexType(), r));
        op->erase();
        continue;
      }
      Value in = op->getOperand(0), out = op->getOperand(1);
      if (!isa<MemRefType>(in.getType())) {
        op->emitError("collective was not bufferized");
        return signalPassFailure();
      }
      auto inT = cast<MemRefType>(in.getType());
      auto outT = cast<MemRefType>(out.getType());
      Type elt = inT.getElementType();
      if (!elt.isF32() && !elt.isF64()) {
        op->emitError("collectives carry f32 or f64 data");
        return signalPassFailure();
      }
      int32_t kind = isa<AllReduceOp>(op)       ? ZERO_RT_ALL_REDUCE
                     : isa<ReduceScatterOp>(op) ? ZERO_RT_REDUCE_SCATTER
                                                : ZERO_RT_ALL_GATHER;
      int64_t count = kind == ZERO_RT_REDUCE_SCATTER ? outT.getNumElements()
                                                     : inT.getNumElements();
      auto send = address(b, loc, in), recv = address(b, loc, out);
      if (failed(send) || failed(recv))
        return signalPassFailure();
      // Started and waited for at once; zero-cpu-schedule-collectives moves
      // the wait to the first use.
      Value handle =
          func::CallOp::create(
              b, loc, start,
              ValueRange{
                  arith::ConstantIntOp::create(b, loc, i32, kind),
                  arith::ConstantIntOp::create(
                      b, loc, i32, elt.isF64() ? ZERO_RT_F64 : ZERO_RT_F32),
                  *send, *recv,
                  arith::ConstantIntOp::create(b, loc, i64, count),
                  arith::ConstantIntOp::create(b, loc, i64, 0)})
              .getResult(0);
      func::CallOp::create(b, loc, wait, ValueRange{handle});
      op->erase();
    }
  }
};
} // namespace
