//===- ZeroDialect.h - zero dialect -----------------------------*- C++ -*-===//
#ifndef ZERO_OPT_DIALECT_ZERO_IR_ZERODIALECT_H
#define ZERO_OPT_DIALECT_ZERO_IR_ZERODIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "zero-opt/Dialect/Zero/IR/ZeroEnums.h.inc"
#include "zero-opt/Dialect/Zero/IR/ZeroInterfaces.h.inc"
#include "zero-opt/Dialect/Zero/IR/ZeroOpsDialect.h.inc"

namespace mlir::zero {
/// The communicator: every start and wait of a collective writes it, so
/// collectives keep their order (the same on every rank).
struct CommunicatorResource
    : public SideEffects::Resource::Base<CommunicatorResource> {
  StringRef getName() final { return "zero.communicator"; }
};
/// What `zero.remat_barrier` writes: it orders barriers, nothing else.
struct RematResource : public SideEffects::Resource::Base<RematResource> {
  StringRef getName() final { return "zero.remat"; }
};
} // namespace mlir::zero

#define GET_TYPEDEF_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroOpsTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroAttrs.h.inc"

#define GET_OP_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroOps.h.inc"

namespace mlir::zero {
/// Argument and result attribute names used on step functions.
constexpr llvm::StringLiteral kNameAttr = "zero.name";
constexpr llvm::StringLiteral kRoleAttr = "zero.role";
/// Marks ops of the backward pass.
constexpr llvm::StringLiteral kBackwardAttr = "zero.backward";
/// Marks a copy of a forward op that the backward pass recomputes
/// (zero-rematerialize); it also carries kBackwardAttr.
constexpr llvm::StringLiteral kRecomputeAttr = "zero.recompute";
/// On an op whose result needs no gradient although its operands are
/// differentiable (e.g. the max that stabilizes a softmax, which the
/// softmax's value does not depend on).
constexpr llvm::StringLiteral kStopGradientAttr = "zero.stop_gradient";
/// On the linalg.generic that draws a Dropout node's mask: its draw
/// (#zero.dropout_mask), for a fusion that draws the mask elsewhere.
constexpr llvm::StringLiteral kDropoutMaskAttr = "zero.dropout_mask";
/// Result attribute: the argument this result updates in place.
constexpr llvm::StringLiteral kUpdatesAttr = "zero.updates";
/// Function attribute: a compiled step with a C ABI entry.
constexpr llvm::StringLiteral kEntryAttr = "zero.entry";
/// Function attribute: the buffers of one call (arguments, and the
/// out-parameters results become) share no byte, as the runtime's are. The
/// entry's ABI promises it; buffer analyses then tell arguments apart.
constexpr llvm::StringLiteral kDisjointArgumentsAttr =
    "zero.disjoint_arguments";
/// Function attribute: a kernel outlined from a step (zero-form-kernels),
/// holding the name of the op it was formed around.
constexpr llvm::StringLiteral kKernelAttr = "zero.kernel";
/// On the op that gives a step its device arena (zero-gpu-arena): a buffer
/// of its own, which no argument of the step shares.
constexpr llvm::StringLiteral kArenaAttr = "zero.arena";
/// Argument attribute of a buffer: why the initializer is not trained.
constexpr llvm::StringLiteral kReasonAttr = "zero.reason";
/// Optimizer state of a parameter: which parameter and which state.
constexpr llvm::StringLiteral kStateOfAttr = "zero.state_of";
/// Argument attribute of a sharded tensor: {numel, shard, shape} of the
/// whole tensor it is this rank's flat, end-padded shard of.
constexpr llvm::StringLiteral kShardAttr = "zero.shard";

/// zero.attention's or zero.attention_grad's rows' dimension
/// (`getRowsDim`), and whether it is causal.
int64_t attentionRowsDim(Operation *attention);
bool isCausalAttention(Operation *attention);
/// The dropout of either attention op's probabilities, if it has one: the
/// mask's draw, the kept values' factor, and the step and micro-batch
/// (i64) it is drawn at.
struct AttentionDropout {
  DropoutMaskAttr mask;
  double scale;
  Value step, microBatch;
};
std::optional<AttentionDropout> attentionDropout(Operation *attention);
/// The last op of `block` that is or holds a backward op (kBackwardAttr),
/// or null: in a step's body, the ops after it are the optimizer step.
Operation *lastBackwardOp(Block &block);
/// The buffer class a location carries (see BufferClassAttr), or null.
BufferClassAttr getBufferClass(Location loc);
/// `loc` marked as a recomputation's: the mark outlives the op's
/// attributes through lowering, as ops take their source's location.
Location recomputeLoc(Location loc);
/// Whether a location carries the recomputation mark; a fusion of several
/// locations does only when each of them does.
bool isRecomputeLoc(Location loc);
/// Memory category of a step argument with the given role.
MemoryCategory memoryCategoryOf(Role role);
/// Whether a step argument with the given role stays in host memory on a
/// device target: the hyperparameters and the random counter, scalars the
/// host code reads (and passes to kernels by value).
bool isHostResidentRole(Role role);
/// The argument of `fn` that differs between data-parallel replicas (a
/// batch input, by its role or for want of one, or the random counter)
/// that `v` is computed from, not looking past ops for which `stop` holds;
/// nothing when `v` is the same on every replica.
std::optional<unsigned>
findPerReplicaArgument(Value v, FunctionOpInterface fn,
                       llvm::function_ref<bool(Operation *)> stop = {});

/// Whether every indexing map of the linalg op `op` has loop `loop` as a
/// whole result of its own, once at most, or not at all.
bool indexesLoopWhole(Operation *op, unsigned loop);
/// Whether the linalg op `op` can run row by row over its first `rowDims`
/// loops (a `zero.row_group` member): its body reads no loop index, and
/// each of those loops is a whole dimension of every operand it indexes.
bool isRowSliceable(Operation *op, int64_t rowDims);
/// Why `op` cannot be an op of a `zero.row_group` whose rows have extents
/// `rows`, or empty: it must be a linalg op on statically shaped buffers
/// whose first loops are parallel over `rows` and which runs row by row
/// (`isRowSliceable`).
std::string rowGroupMemberError(Operation *op, ArrayRef<int64_t> rows);

/// Function attribute: bytes of gradients the backward pass hands to the
/// optimizer step (set by zero-classify-buffers).
constexpr llvm::StringLiteral kResidentGradientsAttr =
    "zero.resident_gradients";

/// Registers bufferization of the collectives.
void registerZeroBufferizationModels(DialectRegistry &registry);
} // namespace mlir::zero

#endif
