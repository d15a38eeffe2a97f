//===- ZeroToRuntime.cpp - zero collectives as runtime calls ---*- C++ -*-===//
//
// One conversion pattern per op: a started collective becomes
// zero_rt_comm_start, returning the handle that stands for its request; a
// wait becomes zero_rt_comm_wait; a rank query zero_rt_rank; bucket packs
// and unpacks copies between views. The runtime then maps each request onto
// its own mechanism (the CPU runtime's communication thread).
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Conversion/ZeroToRuntime/ZeroToRuntime.h"

#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Conversion/RuntimeFunctions.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/Buckets.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::zero {
#define GEN_PASS_DEF_CONVERTZEROTORUNTIME
#include "zero-opt/Conversion/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

/// Byte address of a contiguous buffer's first element, as i64.
FailureOr<Value> address(OpBuilder &b, Location loc, Value memref) {
  auto t = cast<MemRefType>(memref.getType());
  if (!t.areTrailingDimsContiguous(t.getRank()))
    return failure();
  auto md = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  int64_t bytes = t.getElementType().getIntOrFloatBitWidth() / 8;
  Value off = arith::MulIOp::create(
      b, loc, md.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
  Value addr = arith::AddIOp::create(b, loc, base, off);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), addr).getResult();
}

func::FuncOp runtimeFunction(Operation *op, RuntimeFunction fn) {
  return op->getParentOfType<ModuleOp>().lookupSymbol<func::FuncOp>(
      runtimeFunctionName(fn));
}

/// zero_rt_comm_start(kind, dtype, send, recv, count, stream = 0).
FailureOr<Value> startCollective(ConversionPatternRewriter &rewriter,
                                 CollectiveOpInterface op, Value send,
                                 Value recv) {
  Location loc = op->getLoc();
  Type elt = cast<MemRefType>(send.getType()).getElementType();
  int32_t dtype = runtimeDataType(elt);
  if (dtype < 0)
    return rewriter.notifyMatchFailure(
        op, "the runtime carries 32/64/16-bit floats");
  auto sendAddr = address(rewriter, loc, send);
  auto recvAddr = address(rewriter, loc, recv);
  if (failed(sendAddr) || failed(recvAddr))
    return rewriter.notifyMatchFailure(op, "a buffer is not contiguous");
  Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
  Value args[] = {
      arith::ConstantIntOp::create(rewriter, loc, i32,
                                   int64_t(op.getCollectiveKind())),
      arith::ConstantIntOp::create(rewriter, loc, i32, dtype),
      *sendAddr,
      *recvAddr,
      arith::ConstantIntOp::create(rewriter, loc, i64, op.getCountPerRank()),
      arith::ConstantIntOp::create(rewriter, loc, i64, 0)};
  return func::CallOp::create(
             rewriter, loc,
             runtimeFunction(op, RuntimeFunction::CommStart), args)
      .getResult(0);
}

/// zero_rt_comm_wait(handle).
func::CallOp waitCollective(OpBuilder &b, Operation *op, Value handle) {
  return func::CallOp::create(b, op->getLoc(),
                              runtimeFunction(op, RuntimeFunction::CommWait),
                              ValueRange{handle});
}

/// A started collective becomes zero_rt_comm_start, whose handle replaces
/// its request; a synchronous buffer collective is that and the wait at
/// once. Buffer types are not converted, so the op's own operands serve.
struct CollectiveLowering
    : OpInterfaceConversionPattern<CollectiveOpInterface> {
  using Base::Base;
  LogicalResult
  matchAndRewrite(CollectiveOpInterface op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<MemRefType>(op.getSendBuffer().getType()))
      return rewriter.notifyMatchFailure(op, "collective was not bufferized");
    auto handle = startCollective(rewriter, op, op.getSendBuffer(),
                                  op.getRecvBuffer());
    if (failed(handle))
      return failure();
    if (op->getNumResults() == 1 &&
        isa<RequestType>(op->getResult(0).getType())) {
      rewriter.replaceOp(op, *handle);
      return success();
    }
    waitCollective(rewriter, op, *handle);
    rewriter.eraseOp(op);
    return success();
  }
};

struct WaitOpLowering : OpConversionPattern<WaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    waitCollective(rewriter, op, adaptor.getRequest());
    rewriter.eraseOp(op);
    return success();
  }
};

struct RankOpLowering : OpConversionPattern<RankOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RankOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = func::CallOp::create(rewriter, op.getLoc(),
                                   runtimeFunction(op, RuntimeFunction::Rank),
                                   ValueRange{})
                  .getResult(0);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        op, rewriter.getIndexType(), r);
    return success();
  }
};

template <typename BucketOp, bool pack>
struct BucketCopyLowering : OpConversionPattern<BucketOp> {
  using OpConversionPattern<BucketOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BucketOp op, typename BucketOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value member;
    if constexpr (pack)
      member = adaptor.getSource();
    else
      member = adaptor.getDest();
    auto mt = cast<MemRefType>(member.getType());
    if (!mt.getLayout().isIdentity() && mt.getRank() != 1)
      return rewriter.notifyMatchFailure(op, "member buffer is not flat");
    int64_t rows = op.getRows();
    Value m = bucketMemberView(rewriter, loc, member, rows);
    Value s = bucketSlotView(rewriter, loc, adaptor.getStaging(), rows,
                             op.getOffset(), mt.getNumElements() / rows);
    if constexpr (pack)
      memref::CopyOp::create(rewriter, loc, m, s);
    else
      memref::CopyOp::create(rewriter, loc, s, m);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ConvertZeroToRuntimePass
    : zero::impl::ConvertZeroToRuntimeBase<ConvertZeroToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Declarations first: patterns only look them up.
    bool comm = false, rank = false;
    WalkResult checked = module.walk([&](Operation *op) {
      comm |= isa<CollectiveOpInterface, WaitOp>(op);
      rank |= isa<RankOp>(op);
      auto coll = dyn_cast<CollectiveOpInterface>(op);
      if (!coll)
        return WalkResult::advance();
      Type elt = cast<ShapedType>(coll.getSendBuffer().getType())
                     .getElementType();
      if (runtimeDataType(elt) >= 0)
        return WalkResult::advance();
      op->emitError() << "the runtime's collectives carry f32, f64, bf16 or "
                         "f16 data, not "
                      << elt;
      return WalkResult::interrupt();
    });
    if (checked.wasInterrupted())
      return signalPassFailure();
    if (comm) {
      lookupOrDeclareRuntimeFunction(module, RuntimeFunction::CommStart);
      lookupOrDeclareRuntimeFunction(module, RuntimeFunction::CommWait);
    }
    if (rank)
      lookupOrDeclareRuntimeFunction(module, RuntimeFunction::Rank);

    TypeConverter converter;
    populateZeroToRuntimeTypeConversions(converter);
    RewritePatternSet patterns(&getContext());
    populateZeroToRuntimeConversionPatterns(converter, patterns);
    ConversionTarget target(getContext());
    configureZeroToRuntimeTarget(target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void zero::populateZeroToRuntimeTypeConversions(TypeConverter &converter) {
  converter.addConversion([](Type t) { return t; });
  converter.addConversion([](RequestType t) -> Type {
    return IntegerType::get(t.getContext(), 64);
  });
}

void zero::populateZeroToRuntimeConversionPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<CollectiveLowering>(converter, ctx);
  patterns.add<WaitOpLowering, RankOpLowering,
               BucketCopyLowering<BucketPackOp, true>,
               BucketCopyLowering<BucketUnpackOp, false>>(converter, ctx);
}

void zero::configureZeroToRuntimeTarget(ConversionTarget &target) {
  target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                         memref::MemRefDialect>();
  target.addIllegalOp<AllReduceOp, ReduceScatterOp, AllGatherOp,
                      AllReduceStartOp, ReduceScatterStartOp,
                      AllGatherStartOp, WaitOp, RankOp, BucketPackOp,
                      BucketUnpackOp>();
}
