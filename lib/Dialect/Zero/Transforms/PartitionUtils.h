//===- PartitionUtils.h - building blocks of the ZeRO partitioning -*- C++
//-*-===//
#ifndef ZERO_OPT_LIB_DIALECT_ZERO_TRANSFORMS_PARTITIONUTILS_H
#define ZERO_OPT_LIB_DIALECT_ZERO_TRANSFORMS_PARTITIONUTILS_H

#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Utils/TosaBuilder.h"

namespace mlir::zero::partition {

/// Attribute names on a partitioned step function.
constexpr llvm::StringLiteral kWorldSizeAttr = "zero.world_size";
constexpr llvm::StringLiteral kStageAttr = "zero.stage";
/// Marks the reduce-scatter of a parameter's gradient (stage 1 and up).
constexpr llvm::StringLiteral kGradScatterAttr = "zero.grad_scatter";
/// Marks the all-gather of a parameter's updated shards (stages 1-2).
constexpr llvm::StringLiteral kParamGatherAttr = "zero.param_gather";

/// Elements of one rank's shard of `numel` elements over `n` ranks: the
/// whole is padded at the end to a multiple of `n`.
inline int64_t shardSize(int64_t numel, int64_t n) {
  return (numel + n - 1) / n;
}

/// TOSA and tensor builders shared by the partition passes.
struct Builder : TosaBuilder {
  using TosaBuilder::TosaBuilder;

  /// `v` flattened and padded with zeros to `total` elements.
  Value flatPadded(Value v, int64_t total);
  /// The first `numel` elements of a flat tensor, reshaped to `shape`.
  Value unpad(Value flat, ArrayRef<int64_t> shape);
  /// This rank's shard [rank * s, (rank + 1) * s) of a flat tensor.
  Value rankSlice(Value flat, int64_t s);
  Value empty(RankedTensorType t);
  Value allReduce(Value v, int64_t n);
  Value reduceScatter(Value flat, int64_t n);
  Value allGather(Value shard, int64_t n);
};

/// Positions of one block's ops that stay valid while `hoistAfter` moves
/// them. MLIR drops a block's op order on every move and renumbers the
/// whole block at the next `isBeforeInBlock`, once per move (quadratic in
/// the step); here a moved op takes the middle of the gap it lands in, and
/// the block is renumbered only when a gap is used up.
class BlockOrder {
public:
  bool isBefore(Operation *a, Operation *b) {
    return position(a) < position(b);
  }
  void moveAfter(Operation *op, Operation *after);
  /// After ops were created or erased outside `moveAfter`.
  void invalidate() { block = nullptr; }

private:
  uint64_t position(Operation *op);

  Block *block = nullptr;
  DenseMap<Operation *, uint64_t> positions;
};

/// Moves `op` and the producers of its operands defined after `point` (in
/// the same block) to just after `point`, producers first.
void hoistAfter(Operation *op, Operation *point, BlockOrder &order);

/// World size recorded on a function by the data-parallel pass (0: none).
int64_t worldSizeOf(func::FuncOp fn);

} // namespace mlir::zero::partition

#endif
