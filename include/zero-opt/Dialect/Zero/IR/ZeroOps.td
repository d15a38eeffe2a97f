//===- ZeroOps.td - zero dialect attributes and ops --------*- tablegen -*-===//
#ifndef ZERO_OPS_TD
#define ZERO_OPS_TD

include "zero-opt/Dialect/Zero/IR/ZeroDialect.td"
include "zero-opt/Dialect/Zero/IR/ZeroInterfaces.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Roles
//===----------------------------------------------------------------------===//

def Zero_RoleInput : I32EnumAttrCase<"input", 0>;
def Zero_RoleParameter : I32EnumAttrCase<"parameter", 1>;
def Zero_RoleGradient : I32EnumAttrCase<"gradient", 2>;
def Zero_RoleOptimizerState : I32EnumAttrCase<"optimizer_state", 3>;
def Zero_RoleMasterWeight : I32EnumAttrCase<"master_weight", 4>;
def Zero_RoleOutput : I32EnumAttrCase<"output", 5>;
def Zero_RoleHyperparameter : I32EnumAttrCase<"hyperparameter", 6>;
def Zero_RoleLoss : I32EnumAttrCase<"loss", 7>;
def Zero_RoleMetric : I32EnumAttrCase<"metric", 8>;
// Model state that the optimizer never touches (BatchNorm running
// statistics): updated by the forward itself, or constant.
def Zero_RoleBuffer : I32EnumAttrCase<"buffer", 9>;
// The counter of the step's random draws: (step, micro-batch index in the
// global batch), as tensor<2xi64>.
def Zero_RoleRng : I32EnumAttrCase<"rng", 10>;

def Zero_Role : I32EnumAttr<"Role", "role of a value in the training step",
    [Zero_RoleInput, Zero_RoleParameter, Zero_RoleGradient,
     Zero_RoleOptimizerState, Zero_RoleMasterWeight, Zero_RoleOutput,
     Zero_RoleHyperparameter, Zero_RoleLoss, Zero_RoleMetric,
     Zero_RoleBuffer, Zero_RoleRng]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::zero";
}

def Zero_RoleAttr : EnumAttr<Zero_Dialect, Zero_Role, "role"> {
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Memory accounting
//===----------------------------------------------------------------------===//

def Zero_MemParameters : I32EnumAttrCase<"parameters", 0>;
def Zero_MemGradients : I32EnumAttrCase<"gradients", 1>;
def Zero_MemOptimizerState : I32EnumAttrCase<"optimizer_state", 2>;
def Zero_MemActivations : I32EnumAttrCase<"activations", 3>;
def Zero_MemBuffers : I32EnumAttrCase<"buffers", 4>;
def Zero_MemOther : I32EnumAttrCase<"other", 5>;

// The numbering is the runtime's (zero_rt_mem_alloc's category argument).
def Zero_MemoryCategory : I32EnumAttr<"MemoryCategory",
    "what a buffer holds, for the memory plan",
    [Zero_MemParameters, Zero_MemGradients, Zero_MemOptimizerState,
     Zero_MemActivations, Zero_MemBuffers, Zero_MemOther]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::zero";
}

def Zero_PhaseForward : I32EnumAttrCase<"forward", 0>;
def Zero_PhaseBackward : I32EnumAttrCase<"backward", 1>;
def Zero_PhaseOptimizer : I32EnumAttrCase<"optimizer", 2>;

def Zero_Phase : I32EnumAttr<"Phase", "part of the training step",
    [Zero_PhaseForward, Zero_PhaseBackward, Zero_PhaseOptimizer]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::zero";
}

def Zero_BufferClassAttr : AttrDef<Zero_Dialect, "BufferClass"> {
  let mnemonic = "buffer";
  let summary = "memory category and step phase of the buffers an op makes";
  let description = [{
    Carried as the metadata of a `FusedLoc` around an op's location, so
    that it reaches the `memref.alloc` that bufferization creates for the
    op (locations survive lowering and bufferization; discardable
    attributes of `tensor.empty` do not). Example:
    `loc(fused<#zero.buffer<gradients, backward>>["model.onnx":0:0])`.
  }];
  let parameters = (ins EnumParameter<Zero_MemoryCategory>:$category,
                        EnumParameter<Zero_Phase>:$phase);
  let assemblyFormat = "`<` $category `,` $phase `>`";
}

def Zero_DropoutMaskAttr : AttrDef<Zero_Dialect, "DropoutMask"> {
  let mnemonic = "dropout_mask";
  let summary = "the counter-based draw of a dropout mask";
  let description = [{
    An element of a mask `[R, ...]` is kept when the top 24 bits of the
    first word of Philox4x32-10, keyed by `seed` (low word first) and
    counting (element within its row, row of the global batch, step,
    `stream`), are below `keep`. The row of the global batch is the
    micro-batch's index (the step's `rng` counter, `[step, micro-batch]`)
    times `R` plus the row; the element counts the other dimensions row
    by row. The importer puts it on the `linalg.generic` that draws a
    Dropout node's mask (`zero.dropout_mask`), so that a fusion can draw
    the same mask elsewhere; a pass that changes that op drops it.
    Example: `#zero.dropout_mask<seed = 0, stream = 1, keep = 15099494>`
    (a ratio of 0.1).
  }];
  let parameters = (ins "uint64_t":$seed, "uint32_t":$stream,
                        "uint32_t":$keep);
  let assemblyFormat = "`<` struct(params) `>`";
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

def Zero_OptAdamW : I32EnumAttrCase<"adamw", 0>;
def Zero_OptAdam : I32EnumAttrCase<"adam", 1>;
def Zero_OptSGD : I32EnumAttrCase<"sgd", 2>;
def Zero_OptAdagrad : I32EnumAttrCase<"adagrad", 3>;

// The optimizers a training step can be built with (PyTorch semantics).
def Zero_OptimizerKind : I32EnumAttr<"OptimizerKind", "optimizer",
    [Zero_OptAdamW, Zero_OptAdam, Zero_OptSGD, Zero_OptAdagrad]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::zero";
}

def Zero_RematNone : I32EnumAttrCase<"none", 0>;
def Zero_RematBlocks : I32EnumAttrCase<"blocks", 1>;
def Zero_RematSqrt : I32EnumAttrCase<"sqrt", 2>;
def Zero_RematBudget : I32EnumAttrCase<"budget", 3>;

// How the training step chooses the activations it recomputes.
def Zero_RematPolicy : I32EnumAttr<"RematPolicy", "rematerialization policy",
    [Zero_RematNone, Zero_RematBlocks, Zero_RematSqrt,
     Zero_RematBudget]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::zero";
}

def Zero_FloatTensor : TensorOf<[AnyFloat]>;
// Learning rate and step count stay in double precision, as the Python
// floats of the reference optimizers.
def Zero_ScalarF64 : 0DTensorOf<[F64]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getF64Type())";
}

// The gradient multiplier of fp16 loss scaling (see zero.adam).
def Zero_GradScale : 0DTensorOf<[F32]>;

class Zero_OptimizerOp<string mnemonic, list<Trait> traits = []>
    : Zero_Op<mnemonic, traits # [Pure,
        DeclareOpInterfaceMethods<Zero_OptimizerOpInterface>]> {
  let hasVerifier = 1;
}

def Zero_AdamOp : Zero_OptimizerOp<"adam", [AttrSizedOperandSegments]> {
  let summary = "Adam / AdamW update of one parameter (PyTorch semantics)";
  let description = [{
    One step of Adam with bias correction, as PyTorch computes it. `step` is
    the 1-based step count. With `decoupled`, weight decay shrinks the
    parameter by `lr * weight_decay` first (AdamW); otherwise it is added to
    the gradient (Adam with L2).

    With `master` (mixed precision), the update applies to the master
    weight, of the states' type, and `new_param` is the updated master
    rounded to the parameter's narrower type; `param` is then only the
    destination of that copy. The gradient may be narrower than the states:
    it is widened element by element.

    With `grad_scale` (fp16 loss scaling), the widened gradient is first
    multiplied by it: the inverse loss scale times the clipping
    coefficient, applied at the states' precision, where unscaled fp16
    gradients would underflow. A non-finite `grad_scale` marks a step whose
    gradients overflowed: every result is then its operand unchanged, on
    every rank alike, without control flow.

    ```mlir
    %p1, %m1, %v1 = zero.adam %p, %g, %m, %v, %lr, %t
        {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01,
         decoupled} : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>,
         tensor<16xf32>, tensor<f64>, tensor<f64>)
         -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Zero_FloatTensor:$param, Zero_FloatTensor:$grad,
                   Zero_FloatTensor:$exp_avg, Zero_FloatTensor:$exp_avg_sq,
                   Optional<Zero_FloatTensor>:$master,
                   Zero_ScalarF64:$lr, Zero_ScalarF64:$step,
                   Optional<Zero_GradScale>:$grad_scale,
                   F64Attr:$beta1, F64Attr:$beta2, F64Attr:$eps,
                   F64Attr:$weight_decay, UnitAttr:$decoupled);
  let results = (outs Zero_FloatTensor:$new_param,
                      Zero_FloatTensor:$new_exp_avg,
                      Zero_FloatTensor:$new_exp_avg_sq,
                      Optional<Zero_FloatTensor>:$new_master);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr `,` $step
    (`master` $master^)? (`grad_scale` $grad_scale^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let builders = [OpBuilder<(ins "Value":$param, "Value":$grad,
      "Value":$exp_avg, "Value":$exp_avg_sq, "Value":$master, "Value":$lr,
      "Value":$step, "Value":$gradScale, "double":$beta1, "double":$beta2, "double":$eps,
      "double":$weightDecay, "bool":$decoupled)>];
}

def Zero_SGDOp : Zero_OptimizerOp<"sgd", [AttrSizedOperandSegments]> {
  let summary = "SGD update with optional momentum (PyTorch semantics)";
  let description = [{
    `states` are the momentum buffer, present iff `momentum` is nonzero,
    then, with `master`, the master weight (as for `zero.adam`); `new_states`
    are their updates. At step 1 the buffer becomes the gradient, as in
    PyTorch. `grad_scale`: as for `zero.adam`.
  }];
  let arguments = (ins Zero_FloatTensor:$param, Zero_FloatTensor:$grad,
                   Zero_ScalarF64:$lr, Zero_ScalarF64:$step,
                   Variadic<Zero_FloatTensor>:$states,
                   Optional<Zero_GradScale>:$grad_scale,
                   F64Attr:$momentum, F64Attr:$dampening,
                   F64Attr:$weight_decay, UnitAttr:$nesterov,
                   UnitAttr:$master);
  let results = (outs Zero_FloatTensor:$new_param,
                      Variadic<Zero_FloatTensor>:$new_states);
  let assemblyFormat = [{
    $param `,` $grad `,` $lr `,` $step (`,` `states` $states^)?
    (`grad_scale` $grad_scale^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The momentum buffer and the master weight, or null.
    ::mlir::Value getMomentumBuffer();
    ::mlir::Value getMasterWeightState();
    ::mlir::Value getNewMomentumBuffer();
    ::mlir::Value getNewMaster();
  }];
}

def Zero_AdagradOp : Zero_OptimizerOp<"adagrad",
                                     [AttrSizedOperandSegments]> {
  let summary = "Adagrad update (PyTorch semantics)";
  let description = [{
    `master` and `grad_scale`: as for `zero.adam`.
  }];
  let arguments = (ins Zero_FloatTensor:$param, Zero_FloatTensor:$grad,
                   Zero_FloatTensor:$sum, Optional<Zero_FloatTensor>:$master,
                   Zero_ScalarF64:$lr, Zero_ScalarF64:$step,
                   Optional<Zero_GradScale>:$grad_scale,
                   F64Attr:$lr_decay, F64Attr:$eps, F64Attr:$weight_decay);
  let results = (outs Zero_FloatTensor:$new_param, Zero_FloatTensor:$new_sum,
                      Optional<Zero_FloatTensor>:$new_master);
  let assemblyFormat = [{
    $param `,` $grad `,` $sum `,` $lr `,` $step (`master` $master^)?
    (`grad_scale` $grad_scale^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Gradients inside a graph
//===----------------------------------------------------------------------===//

def Zero_GradientOp : Zero_Op<"gradient", [Pure]> {
  let summary = "Gradient of a scalar with respect to earlier values";
  let description = [{
    `d y / d xs`, where `y` and `xs` are values of the same block and `y`
    depends on them through ops that have derivative rules. The
    `zero-expand-gradients` pass replaces it with the backward computation.
    This is ONNX's `Gradient` (ai.onnx.preview.training) in IR form.
  }];
  let arguments = (ins AnyRankedTensor:$y, Variadic<AnyRankedTensor>:$xs);
  let results = (outs Variadic<AnyRankedTensor>:$grads);
  let assemblyFormat = [{
    $y `wrt` $xs attr-dict `:` type($y) `,` functional-type($xs, $grads)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradient clipping
//===----------------------------------------------------------------------===//

def Zero_ClipGradNormOp : Zero_Op<"clip_grad_norm", [Pure]> {
  let summary = "Global gradient norm, and gradients clipped to max_norm";
  let description = [{
    PyTorch's `clip_grad_norm_`: the 2-norm of the per-tensor 2-norms of
    `grads`, and each gradient scaled by `min(1, max_norm / (norm + 1e-6))`
    (with `max_norm` = 0, the gradients are returned unchanged). The norm is
    returned before clipping, in its own element type: f64 when a gradient
    is f64, f32 otherwise.

    With `sharded`, each gradient is this rank's shard of the whole
    gradient: the per-tensor sums of squares are summed over the
    `world_size` ranks before the norms are taken.
  }];
  let arguments = (ins Variadic<Zero_FloatTensor>:$grads, F64Attr:$max_norm,
                   UnitAttr:$sharded, OptionalAttr<I64Attr>:$world_size);
  let results = (outs 0DTensorOf<[F32, F64]>:$norm,
                      Variadic<Zero_FloatTensor>:$clipped);
  let assemblyFormat = [{
    $grads attr-dict `:` functional-type($grads, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def Zero_CollAllReduce : I32EnumAttrCase<"all_reduce", 0>;
def Zero_CollReduceScatter : I32EnumAttrCase<"reduce_scatter", 1>;
def Zero_CollAllGather : I32EnumAttrCase<"all_gather", 2>;

// The numbering is the runtime's (zero_rt_comm_start's kind argument).
def Zero_CollectiveKind : I32EnumAttr<"CollectiveKind",
    "kind of a collective over the data-parallel group",
    [Zero_CollAllReduce, Zero_CollReduceScatter, Zero_CollAllGather]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::zero";
}

// Collectives are in destination-passing style: on tensors they return the
// filled destination, on buffers (after bufferization) they write it.
class Zero_CollectiveOp<string mnemonic, string kind, list<Trait> traits = []>
    : Zero_Op<mnemonic, traits # [DestinationStyleOpInterface,
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
        Zero_CollectiveOpInterface]> {
  let arguments = (ins AnyShaped:$input, AnyShaped:$init,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$world_size);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $input `into` $init attr-dict `:` type($input) `,` type($init)
    (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
    ::mlir::zero::CollectiveKind getCollectiveKind() {
      return ::mlir::zero::CollectiveKind::}] # kind # [{;
    }
  }];
}

def Zero_AllReduceOp : Zero_CollectiveOp<"all_reduce", "all_reduce"> {
  let summary = "Sum of the input over all ranks, on every rank";
}

def Zero_ReduceScatterOp : Zero_CollectiveOp<"reduce_scatter",
                                             "reduce_scatter"> {
  let summary = "Rank r gets slice r of the sum of the inputs";
  let description = [{
    The 1-D input of `world_size * S` elements is summed over the ranks;
    rank r receives elements `[r * S, (r + 1) * S)`.
  }];
}

def Zero_AllGatherOp : Zero_CollectiveOp<"all_gather", "all_gather"> {
  let summary = "Concatenation of every rank's input, on every rank";
  let description = [{
    The 1-D inputs of S elements, in rank order: `world_size * S` elements.
  }];
}

def Zero_ReplicaSumOp : Zero_Op<"replica_sum", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Sum of a value over the data-parallel replicas";
  let description = [{
    A collective that the model itself asks for (SyncBatchNorm's
    statistics) before data parallelism is decided: the sum of `input` over
    the ranks that each run a replica of the step. On one rank it is the
    identity; `zero-partition-data-parallel` lowers it to an all-reduce.
    Its derivative is itself: with the global loss the mean of the
    replicas' losses and gradients averaged over the replicas, the
    cotangent of each replica's input is the sum of the replicas'
    cotangents.
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Zero_ReplicaCountOp : Zero_Op<"replica_count", [Pure]> {
  let summary = "Number of data-parallel replicas, as a tensor";
  let description = [{
    N, the number of ranks that each run a replica of the step, splat into
    a floating-point tensor: what a model's own Gradient divides by to
    differentiate the global loss, the mean of the replicas' losses.
    Before data parallelism is decided, and on one rank, it is 1;
    `zero-partition-data-parallel` lowers it to a constant.
  }];
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Zero_MicroBatchIndexOp : Zero_Op<"micro_batch_index", [Pure]> {
  let summary = "Index of a micro-batch in the step's global batch";
  let description = [{
    Micro-batch `local` of this replica is micro-batch `local * N + r` of
    the global batch (N replicas, this one r), the rows zero-run gives it.
    Before data parallelism is decided, and on one rank, it is `local`;
    `zero-partition-data-parallel` lowers it. Random draws count by it, so
    a sample draws the same numbers on any number of ranks.
  }];
  let arguments = (ins Index:$local);
  let results = (outs Index:$global);
  let assemblyFormat = "$local attr-dict";
}

// Recomputation's inputs are kept apart from the forward's: a CSE of a
// recomputed op with the op it copies would keep the forward's value alive
// into the backward, undoing the recomputation.
def Zero_RematResource : Resource<"::mlir::zero::RematResource">;

def Zero_RematBarrierOp : Zero_Op<"remat_barrier", [
    MemoryEffects<[MemWrite<Zero_RematResource>]>,
    AllTypesMatch<["inputs", "results"]>]> {
  let summary = "The values a recomputation starts from";
  let description = [{
    Returns its operands unchanged. `zero-rematerialize` passes the saved
    values (checkpoints and parameters) that a recomputed segment reads
    through one barrier, placed where the segment is recomputed in the
    backward pass: the recomputed ops then read other SSA values than the
    forward ops they copy, so no CSE or folding merges the two, and its
    effect on its own resource keeps it, and the recomputation after it,
    in place. Bufferization forwards the operands' buffers and drops it;
    it copies nothing.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

def Zero_RequestType : Zero_Type<"Request", "request"> {
  let summary = "A collective in flight";
  let description = [{
    Returned by a `zero.*_start` op and completed by `zero.wait`. Between
    the two, the collective may still read its send buffer and write its
    receive buffer, so neither may be touched there.
  }];
}

// Every rank must issue its collectives in the same order: each start and
// wait writes this resource, so no pass reorders them against each other.
def Zero_CommunicatorResource
    : Resource<"::mlir::zero::CommunicatorResource">;

class Zero_StartOp<string mnemonic, string kind>
    : Zero_Op<mnemonic, [
        MemoryEffects<[MemWrite<Zero_CommunicatorResource>]>,
        Zero_CollectiveOpInterface]> {
  let arguments = (ins Arg<AnyStaticShapeMemRef, "send buffer",
                           [MemRead]>:$input,
                       Arg<AnyStaticShapeMemRef, "receive buffer",
                           [MemWrite]>:$output,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$world_size);
  let results = (outs Zero_RequestType:$request);
  let assemblyFormat = [{
    $input `into` $output attr-dict `:` type($input) `,` type($output)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::zero::CollectiveKind getCollectiveKind() {
      return ::mlir::zero::CollectiveKind::}] # kind # [{;
    }
  }];
}

def Zero_AllReduceStartOp : Zero_StartOp<"all_reduce_start", "all_reduce"> {
  let summary = "Start summing a buffer over all ranks";
  let description = [{
    The asynchronous `zero.all_reduce` on buffers: `output` holds the sum
    once `zero.wait` has completed the returned request. `input` and
    `output` may be the same buffer.

    ```mlir
    %r = zero.all_reduce_start %g into %g {world_size = 4 : i64}
        : memref<16xf32>, memref<16xf32>
    zero.wait %r
    ```
  }];
}

def Zero_ReduceScatterStartOp
    : Zero_StartOp<"reduce_scatter_start", "reduce_scatter"> {
  let summary = "Start a reduce-scatter: rank r gets slice r of the sum";
}

def Zero_AllGatherStartOp : Zero_StartOp<"all_gather_start", "all_gather"> {
  let summary = "Start gathering every rank's shard into a full buffer";
}

def Zero_WaitOp : Zero_Op<"wait", [
    MemoryEffects<[MemRead, MemWrite, MemWrite<Zero_CommunicatorResource>]>]> {
  let summary = "Complete a collective";
  let description = [{
    Blocks until the collective that returned `request` has finished: its
    receive buffer holds the result and its send buffer may be reused. It
    writes memory it does not name (the receive buffer of its start), so
    no pass moves a read of that buffer above it.
  }];
  let arguments = (ins Zero_RequestType:$request);
  let assemblyFormat = "$request attr-dict";
}

//===----------------------------------------------------------------------===//
// Buckets
//===----------------------------------------------------------------------===//

def Zero_BucketPackOp : Zero_Op<"bucket_pack"> {
  let summary = "Copy a collective's buffer into its place in a bucket";
  let description = [{
    A bucket runs several collectives of one kind as one on a flat staging
    buffer of `rows` rows of W elements (W = staging size / rows). The
    source, flattened, is `rows` rows of C elements; row r is copied to
    staging elements `[r * W + offset, r * W + offset + C)`. Reduce-scatter
    and all-gather buckets use one row per rank, so that rank r's part of
    the bucket holds every member's r-th shard; all-reduce buckets one row.

    ```mlir
    zero.bucket_pack %g into %stage[4] rows 2 : memref<4xf32>, memref<12xf32>
    ```
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "member buffer",
                           [MemRead]>:$source,
                       Arg<MemRefRankOf<[AnyType], [1]>, "staging buffer",
                           [MemWrite]>:$staging,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$rows);
  let assemblyFormat = [{
    $source `into` $staging `[` $offset `]` `rows` $rows attr-dict `:`
    type($source) `,` type($staging)
  }];
  let hasVerifier = 1;
}

def Zero_BucketUnpackOp : Zero_Op<"bucket_unpack"> {
  let summary = "Copy a collective's result out of a bucket";
  let description = [{
    The inverse of `zero.bucket_pack`: row r of `dest`, flattened, gets
    staging elements `[r * W + offset, r * W + offset + C)`.
  }];
  let arguments = (ins Arg<MemRefRankOf<[AnyType], [1]>, "staging buffer",
                           [MemRead]>:$staging,
                       Arg<AnyStaticShapeMemRef, "member buffer",
                           [MemWrite]>:$dest,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$rows);
  let assemblyFormat = [{
    $staging `[` $offset `]` `rows` $rows `into` $dest attr-dict `:`
    type($staging) `,` type($dest)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matmuls
//===----------------------------------------------------------------------===//

def Zero_RoundedMatmulOp : Zero_Op<"rounded_matmul", [
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "A 16-bit matmul summed in f32 and rounded once";
  let description = [{
    `init[c] = round(sum over k of f32(a[ia]) * f32(b[ib]))`: a GEMM with
    up to two batch loops, its loops given by `indexing_maps` (A, B, C;
    projected permutations, as a linalg contraction's), A, B and C all
    bf16 or all f16. The products are summed in f32 and the sum is rounded
    to nearest even once, as a tensor-core GEMM writing a 16-bit C does;
    `init`'s contents are not read. With `accumulate`, `init` is read and
    added to the sums in f32 before that one rounding
    (`init[c] = round(f32(init[c]) + sum ...)`: cuBLAS's beta = 1), which
    is how a broadcast bias joins the GEMM (`zero-gpu-bias-into-gemms`).
    No linalg op says this: a
    `linalg.matmul` with a 16-bit output sums in 16 bits, and one with an
    f32 output needs the f32 result in memory before it is rounded.
    `zero-round-matmul-results` forms it; the BLAS lowering calls a GEMM
    with a 16-bit C.

    ```mlir
    %r = zero.rounded_matmul %a, %b into %e
           maps [#mk, #kn, #mn]
           : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xbf16>
           -> tensor<8x4xbf16>
    ```
  }];
  let arguments = (ins AnyShaped:$a, AnyShaped:$b, AnyShaped:$init,
                       AffineMapArrayAttr:$indexing_maps,
                       UnitAttr:$accumulate);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $a `,` $b `into` $init (`accumulate` $accumulate^)? `maps` $indexing_maps
    attr-dict `:` type($a) `,`
    type($b) `,` type($init) (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getInitMutable();
    }
    ::llvm::SmallVector<::mlir::AffineMap> getIndexingMapsArray() {
      return ::llvm::to_vector(
          getIndexingMaps().getAsValueRange<::mlir::AffineMapAttr>());
    }
    /// The extent of each loop, read off the operands' shapes.
    ::llvm::SmallVector<int64_t> getStaticLoopRanges();
  }];
}

def Zero_AttentionOp : Zero_Op<"attention", [
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Scaled dot-product attention that keeps the softmax's "
                "log-sum-exp instead of its probabilities";
  let description = [{
    For each index of the other dimensions (batch, heads) and each query
    row `i` of `query` (`[..., Tq, D]`), over the rows `j` of `key` and
    `value` (`[..., Tk, D]`, the same other dimensions):
    `s[j] = scale * sum over d of q[i, d] * k[j, d]` summed in f32, `-inf`
    for `j > i` when `causal` (then `Tq == Tk`);
    `lse[i] = log(sum over j of exp(s[j]))` (`[..., Tq]`, f32); and
    `out[i, :] = sum over j of exp(s[j] - lse[i]) * v[j, :]`, summed in
    f32 and rounded once to `out`'s type (`query`'s). With 16-bit inputs
    the probabilities enter their product with `v` rounded to that type,
    as a tensor-core product takes them (a kernel may round them before
    their normalization, as `exp(s[j] - m)` with `m` a running maximum).
    `out` and `lse` are written, not read. The probabilities are never
    stored: a backward pass computes them again from `query`, `key` and
    `lse`.

    The rows are the dimension before the depth unless `seq_dim` names
    another: with `seq_dim 1`, `[B, T, H, D]` operands are the heads of a
    projection as it lies (FlashAttention's layout), which a kernel reads
    with their strides instead of a transposed copy. `lse` is shaped as
    the query without its depth either way.

    With `dropout`, the probabilities that meet `v` are dropped out:
    `p[i, j]` times `dropout_scale` where the mask keeps `(i, j)`, else 0
    (the log-sum-exp is the undropped softmax's). The mask is the draw
    `dropout` (`#zero.dropout_mask`) at `rng` (the step and the
    micro-batch, the two words of the step's counter) over `[..., Tq,
    Tk]`, the other dimensions in their order and the first of them the
    mask's rows: the mask the importer draws for a Dropout node of that
    shape and draw.

    ```mlir
    %o, %l = zero.attention %q, %k, %v into %oi, %li scale 0.125 causal
               : tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>,
                 tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>,
                 tensor<2x4x64xf32>
               -> tensor<2x4x64x16xbf16>, tensor<2x4x64xf32>
    ```
  }];
  let arguments = (ins AnyShaped:$query, AnyShaped:$key, AnyShaped:$value,
                       AnyShaped:$out, AnyShaped:$lse, F64Attr:$scale,
                       UnitAttr:$causal, OptionalAttr<I64Attr>:$seq_dim,
                       OptionalAttr<Zero_DropoutMaskAttr>:$dropout,
                       OptionalAttr<F64Attr>:$dropout_scale,
                       Variadic<I64>:$rng);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $query `,` $key `,` $value `into` $out `,` $lse `scale` $scale
    (`causal` $causal^)? (`seq_dim` $seq_dim^)?
    (`dropout` $dropout^ `scaled` $dropout_scale `rng` `(` $rng `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($out) `,` type($lse)
    (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(getOperation(), 3, 2);
    }
    /// The dimension of the rows (queries, keys): `seq_dim` or the one
    /// before the depth.
    int64_t getRowsDim();
  }];
}

def Zero_AttentionGradOp : Zero_Op<"attention_grad", [
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "The gradients of zero.attention from its inputs, the "
                "output's gradient and the log-sum-exp it kept";
  let description = [{
    The backward pass of `zero.attention` with the same `query`, `key`,
    `value`, `scale` and `causal`, its `lse`, the gradient `dout` of its
    output (shaped and typed as the query) and `delta[..., i] = sum over d
    of dout[i, d] * out[i, d]` in f32 (shaped as `lse`), which the caller
    computes from the forward output. With the probabilities computed
    again, `p[i, j] = exp(s[i, j] - lse[i])` (0 for `j > i` when causal),
    `dp[i, j] = sum over d of dout[i, d] * v[j, d]` and
    `ds[i, j] = p[i, j] * (dp[i, j] - delta[i])`:
    `dvalue[j, :] = sum over i of p[i, j] * dout[i, :]`,
    `dkey[j, :] = scale * sum over i of ds[i, j] * q[i, :]` and
    `dquery[i, :] = scale * sum over j of ds[i, j] * k[j, :]`, each summed
    in f32 and rounded once to its destination's type (the inputs'). With
    16-bit inputs `p` and `ds` are rounded to that type before their
    products, as a tensor-core product takes them. The destinations are
    written, not read; nothing of size `[..., Tq, Tk]` is stored.
    `seq_dim` is the forward's. With the forward's `dropout`,
    `dropout_scale` and `rng`, the same mask is drawn again: `dvalue` sums
    the dropped-out `p`, and `dp` is dropped out (scaled where kept, else
    0) before `ds`; `delta` is still `dout . out`.

    ```mlir
    %dq, %dk, %dv = zero.attention_grad %q, %k, %v, %do, %lse, %delta
        into %dqi, %dki, %dvi scale 0.125 causal
        : tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>,
          tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>,
          tensor<2x4x64xf32>, tensor<2x4x64xf32>, tensor<2x4x64x16xbf16>,
          tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>
        -> tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>,
           tensor<2x4x64x16xbf16>
    ```
  }];
  let arguments = (ins AnyShaped:$query, AnyShaped:$key, AnyShaped:$value,
                       AnyShaped:$dout, AnyShaped:$lse, AnyShaped:$delta,
                       AnyShaped:$dquery, AnyShaped:$dkey, AnyShaped:$dvalue,
                       F64Attr:$scale, UnitAttr:$causal,
                       OptionalAttr<I64Attr>:$seq_dim,
                       OptionalAttr<Zero_DropoutMaskAttr>:$dropout,
                       OptionalAttr<F64Attr>:$dropout_scale,
                       Variadic<I64>:$rng);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $dout `,` $lse `,` $delta `into` $dquery
    `,` $dkey `,` $dvalue `scale` $scale (`causal` $causal^)?
    (`seq_dim` $seq_dim^)?
    (`dropout` $dropout^ `scaled` $dropout_scale `rng` `(` $rng `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,` type($dout) `,` type($lse) `,` type($delta) `,`
    type($dquery) `,` type($dkey) `,` type($dvalue) (`->` type($results)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return ::mlir::MutableOperandRange(getOperation(), 6, 3);
    }
    /// The dimension of the rows, as in zero.attention.
    int64_t getRowsDim();
  }];
}

def Zero_RankOp : Zero_Op<"rank", [Pure]> {
  let summary = "This process's rank in the data-parallel group";
  let results = (outs Index:$rank);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

def Zero_LaunchGroupOp : Zero_Op<"launch_group", [
    SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "Independent kernel roots that run as one GPU launch";
  let description = [{
    Linalg ops on buffers (each with the fill that initializes it), copies
    and bucket copies, none of which reads or writes what another writes,
    in program order. The
    CUDA target outlines the group into one kernel and maps it to one
    launch: each op keeps its own blocks, threads and order of work, and
    the grid is theirs laid end to end (a horizontal fusion: the global
    norm's hundreds of per-tensor sums, or a bucket's member copies, one
    launch).

    ```mlir
    zero.launch_group {
      linalg.fill ins(%zero : f32) outs(%a : memref<f32>)
      linalg.generic ... ins(%g0 : memref<32xf32>) outs(%a : memref<f32>)
      linalg.generic ... ins(%g1 : memref<96xf32>) outs(%b : memref<f32>)
    }
    ```
  }];
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$body attr-dict";
  let hasVerifier = 1;
}

def Zero_RowGroupOp : Zero_Op<"row_group", [
    SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "Kernel roots over the same rows that run as one GPU launch";
  let description = [{
    Linalg ops on buffers (each with the fill that initializes it), in
    program order, whose first `row_dims` loops are parallel loops over
    the same rows: the same static extents in every op, each a whole
    dimension of every operand it indexes, in bodies that read no loop
    index (checked: `zero::isRowSliceable`); and every buffer that one op
    writes and another accesses is the same value to both, indexed by
    those loops alone at its leading dimensions (the producer's promise,
    as `zero-gpu-row-groups` checks it). A row's results depend
    only on that row's earlier results, so the CUDA target runs the group
    as one launch whose blocks each take some rows through every op in
    turn, with a barrier between ops (a vertical fusion: a softmax's or
    layer norm's partial statistics, their combination and the
    normalization read the rows from memory once, the second time from
    the cache).

    ```mlir
    zero.row_group rows(1) {
      linalg.fill ins(%zero : f32) outs(%sum : memref<64xf32>)
      linalg.generic ... ins(%x : memref<64x1024xf32>) outs(%sum : memref<64xf32>)
      linalg.generic ... ins(%x, %sum : memref<64x1024xf32>, memref<64xf32>)
                         outs(%y : memref<64x1024xf32>)
    }
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$row_dims);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "`rows` `(` $row_dims `)` $body attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The extents of the rows (the first op's first `row_dims` loops);
    /// empty for an empty group.
    SmallVector<int64_t> getRowExtents();
    /// The number of rows: the product of the extents.
    int64_t getNumRows();
  }];
}

#endif // ZERO_OPS_TD
