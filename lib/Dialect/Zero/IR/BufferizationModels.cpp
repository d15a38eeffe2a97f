//===- BufferizationModels.cpp - zero ops on buffers -----------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/IR/DstBufferizableOpInterfaceImpl.h"

using namespace mlir;
using namespace mlir::zero;

namespace {
/// A collective writes its destination in place; on buffers it is the same
/// op without a result.
template <typename OpTy>
struct CollectiveModel
    : public bufferization::DstBufferizableOpInterfaceExternalModel<
          CollectiveModel<OpTy>, OpTy> {
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    auto c = cast<OpTy>(op);
    if (isa<MemRefType>(c.getInput().getType()))
      return success();
    FailureOr<Value> in =
        bufferization::getBuffer(rewriter, c.getInput(), options, state);
    FailureOr<Value> out =
        bufferization::getBuffer(rewriter, c.getInit(), options, state);
    if (failed(in) || failed(out))
      return failure();
    rewriter.setInsertionPoint(op);
    OpTy::create(rewriter, op->getLoc(), TypeRange{}, *in, *out,
                 c.getWorldSizeAttr());
    bufferization::replaceOpWithBufferizedValues(rewriter, op, *out);
    return success();
  }
};

/// The buffer of each of `op`'s operands.
FailureOr<SmallVector<Value>>
operandBuffers(RewriterBase &rewriter, Operation *op,
               const bufferization::BufferizationOptions &options,
               bufferization::BufferizationState &state) {
  SmallVector<Value> buffers;
  for (Value v : op->getOperands()) {
    // Scalars (an attention's step and micro-batch) stay as they are.
    if (!isa<TensorType>(v.getType())) {
      buffers.push_back(v);
      continue;
    }
    FailureOr<Value> buffer =
        bufferization::getBuffer(rewriter, v, options, state);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  return buffers;
}

/// `op` (destination style, on tensors) as the same op on its operands'
/// buffers, without results: its results are its destinations' buffers.
LogicalResult
bufferizeOnBuffers(DestinationStyleOpInterface op, RewriterBase &rewriter,
                   const bufferization::BufferizationOptions &options,
                   bufferization::BufferizationState &state) {
  if (op.hasPureBufferSemantics())
    return success();
  FailureOr<SmallVector<Value>> buffers =
      operandBuffers(rewriter, op, options, state);
  if (failed(buffers))
    return failure();
  rewriter.setInsertionPoint(op);
  OperationState same(op->getLoc(), op->getName(), *buffers, TypeRange{},
                      op->getAttrs());
  rewriter.create(same);
  SmallVector<Value> inits;
  for (OpOperand &init : op.getDpsInitsMutable())
    inits.push_back((*buffers)[init.getOperandNumber()]);
  bufferization::replaceOpWithBufferizedValues(rewriter, op, inits);
  return success();
}

/// A rounded matmul writes its destination without reading it (unless it
/// accumulates); on buffers it is the same op without a result.
struct RoundedMatmulModel
    : public bufferization::DstBufferizableOpInterfaceExternalModel<
          RoundedMatmulModel, RoundedMatmulOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const bufferization::AnalysisState &) const {
    auto mm = cast<RoundedMatmulOp>(op);
    return !mm.isDpsInit(&operand) || mm.getAccumulate();
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    return bufferizeOnBuffers(cast<RoundedMatmulOp>(op), rewriter, options,
                              state);
  }
};

/// Attention and its gradient write their destinations without reading
/// them; on buffers each is the same op without results.
template <typename OpTy>
struct AttentionModel
    : public bufferization::DstBufferizableOpInterfaceExternalModel<
          AttentionModel<OpTy>, OpTy> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const bufferization::AnalysisState &) const {
    return !cast<OpTy>(op).isDpsInit(&operand);
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    return bufferizeOnBuffers(cast<OpTy>(op), rewriter, options, state);
  }
};

/// A recomputation's barrier passes its operands' buffers on: each result
/// is its operand, nothing is read, written or copied.
struct RematBarrierModel
    : public bufferization::BufferizableOpInterface::ExternalModel<
          RematBarrierModel, RematBarrierOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const bufferization::AnalysisState &) const {
    return false;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const bufferization::AnalysisState &) const {
    return false;
  }
  bufferization::AliasingValueList
  getAliasingValues(Operation *op, OpOperand &operand,
                    const bufferization::AnalysisState &) const {
    return {{op->getResult(operand.getOperandNumber()),
             bufferization::BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const bufferization::BufferizationOptions &options,
                          bufferization::BufferizationState &state) const {
    FailureOr<SmallVector<Value>> buffers =
        operandBuffers(rewriter, op, options, state);
    if (failed(buffers))
      return failure();
    bufferization::replaceOpWithBufferizedValues(rewriter, op, *buffers);
    return success();
  }
};
} // namespace

void mlir::zero::registerZeroBufferizationModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ZeroDialect *) {
    AllReduceOp::attachInterface<CollectiveModel<AllReduceOp>>(*ctx);
    ReduceScatterOp::attachInterface<CollectiveModel<ReduceScatterOp>>(*ctx);
    AllGatherOp::attachInterface<CollectiveModel<AllGatherOp>>(*ctx);
    RematBarrierOp::attachInterface<RematBarrierModel>(*ctx);
    RoundedMatmulOp::attachInterface<RoundedMatmulModel>(*ctx);
    AttentionOp::attachInterface<AttentionModel<AttentionOp>>(*ctx);
    AttentionGradOp::attachInterface<AttentionModel<AttentionGradOp>>(*ctx);
  });
}
