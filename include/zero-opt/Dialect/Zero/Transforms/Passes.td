//===- Passes.td - zero dialect transforms -----------------*- tablegen -*-===//
#ifndef ZERO_OPT_DIALECT_ZERO_TRANSFORMS_PASSES
#define ZERO_OPT_DIALECT_ZERO_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def ZeroMixedPrecision : Pass<"zero-mixed-precision", "func::FuncOp"> {
  let summary = "Compute a forward function in bf16 or fp16, with fp32 "
                "where precision needs it";
  let description = [{
    Parameters (arguments with `zero.role<parameter>`) become `precision`
    arguments; zero-build-train-step then keeps an fp32 master weight for
    each. Ops compute by one rule list (`ruleFor` in MixedPrecision.cpp):

      - GEMMs (`tosa.matmul`, which convolutions lower to) read 16-bit
        operands and accumulate in fp32; the result is rounded to 16 bits
        unless only the loss's ops read it;
      - reductions compute in fp32 (log-softmax sums and maxima,
        layer-norm and batch-norm statistics);
      - a softmax (`linalg.softmax`) of a 16-bit input has a 16-bit result,
        computed in fp32 (`zero-decompose-softmax`);
      - elementwise ops compute in 16 bits when their operands are 16-bit,
        in fp32 when they are fp32 (a chain of statistics), and in fp32
        rounded to 16 bits when they mix the two (`x - mean`,
        `e * (1 / sum)`); constants take the precision of their user;
      - data movement (reshape, transpose, slice, concat, pad, gather,
        select) keeps its operands' precision;
      - the loss, and everything else that no GEMM reads after it,
        computes in fp32;
      - any other op computes in fp32 (its 16-bit operands are widened),
        and the function's results keep their types.

    Autodiff follows the forward's types: the backward of a 16-bit op is
    16-bit, a GEMM's backward GEMMs accumulate in fp32.
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"bf16\"",
           "Compute precision: bf16 or fp16">,
  ];
  let dependentDialects = ["mlir::tosa::TosaDialect"];
}

def ZeroBuildTrainStep : Pass<"zero-build-train-step", "ModuleOp"> {
  let summary = "Build the training step from a forward function with a loss";
  let description = [{
    From the forward function `func` (loss = the result named `loss`, else
    the first scalar floating-point result), builds `<func>_grad`, returning
    the loss and `zero.gradient` of it with respect to every parameter, and
    `train_step`, which:

    1. runs `<func>_grad` on each of `accumulation` micro-batches (rows
       `[j*b, (j+1)*b)` of each input) and averages losses and gradients;
    2. computes the global gradient norm and, with `clip` > 0, scales the
       gradients by `min(1, clip / (norm + 1e-6))`;
    3. updates every parameter with a `zero` optimizer op; optimizer state
       tensors are arguments with `zero.role<optimizer_state>`.

    Updated parameters and states are returned as results marked
    `zero.updates = <argument index>`, so bufferization writes them in place.
    The learning rate and the 1-based step count are `tensor<f64>`
    arguments named `lr` and `step`.

    With `loss-scaling` (fp16), a third, `loss_scale`, multiplies the loss
    before the backward pass, so that small fp16 gradients do not flush
    to zero. The norm is then taken of the scaled gradients (one
    non-finite gradient on any rank makes it non-finite on every rank,
    through the collectives that sum it) and returned unscaled; the
    optimizer ops unscale and clip the gradients with one multiplier at
    their fp32 precision, and skip the update where the norm overflowed.
    The runtime adjusts the scale between steps.
  }];
  let options = [
    Option<"funcName", "func", "std::string", "\"main\"", "Forward function">,
    Option<"lossName", "loss", "std::string", "\"\"",
           "Name of the loss result (default: first scalar float result)">,
    Option<"optimizer", "optimizer", "::mlir::zero::OptimizerKind",
           "::mlir::zero::OptimizerKind::adamw", "Optimizer",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zero::OptimizerKind::adamw, "adamw",
                        "AdamW (decoupled weight decay)"),
             clEnumValN(::mlir::zero::OptimizerKind::adam, "adam",
                        "Adam (L2 weight decay)"),
             clEnumValN(::mlir::zero::OptimizerKind::sgd, "sgd",
                        "SGD with optional momentum"),
             clEnumValN(::mlir::zero::OptimizerKind::adagrad, "adagrad",
                        "Adagrad"))}]>,
    Option<"beta1", "beta1", "double", "0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", "0.999", "Adam beta2">,
    Option<"eps", "eps", "double", "1e-8", "Adam / Adagrad epsilon">,
    Option<"weightDecay", "weight-decay", "double", "0.0", "Weight decay">,
    Option<"momentum", "momentum", "double", "0.0", "SGD momentum">,
    Option<"dampening", "dampening", "double", "0.0", "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", "false", "SGD Nesterov momentum">,
    Option<"lrDecay", "lr-decay", "double", "0.0", "Adagrad lr decay">,
    Option<"initialAccumulator", "initial-accumulator", "double", "0.0",
           "Adagrad initial accumulator value">,
    Option<"accumulation", "accumulation", "int64_t", "1",
           "Micro-batches per optimizer step">,
    Option<"clip", "clip", "double", "0.0",
           "Clip gradients to this global norm (0: off)">,
    Option<"lossScaling", "loss-scaling", "bool", "false",
           "Scale the loss by a `loss_scale` argument; skip overflowed "
           "steps (fp16)">,
  ];
  let dependentDialects = ["mlir::zero::ZeroDialect", "mlir::scf::SCFDialect",
                           "mlir::tosa::TosaDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def ZeroExpandGradients : Pass<"zero-expand-gradients", "func::FuncOp"> {
  let summary = "Replace zero.gradient with the backward computation";
  let description = [{
    Reverse-mode differentiation through the ops' AutoDiffOpInterface
    rules. Backward ops carry `zero.backward`; forward values the backward
    does not read are left to die.
  }];
  let dependentDialects = ["mlir::tosa::TosaDialect", "mlir::scf::SCFDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def ZeroFormAttention : Pass<"zero-form-attention", "func::FuncOp"> {
  let summary = "Form zero.attention from 16-bit scores, softmax and their "
                "product with the values, before differentiation";
  let description = [{
    Runs on the forward function after mixed precision and before
    `zero-build-train-step`, so that the step's backward is
    `zero.attention_grad` (the op's derivative rule) and neither the
    scores nor the probabilities of `[..., Tq, Tk]` are ever stored. It
    finds, in TOSA as the importer and `zero-mixed-precision` give it:
    `tosa.matmul(q [N, Tq, D], kT [N, D, Tk])` (16-bit operands, an f32
    product, rounded by a `tosa.cast` to their type), reshaped to
    `[..., Tq, Tk]` (leading dimensions of product N) or not, times a
    constant scalar scale (none: 1), optionally a `tosa.select` on a
    constant i1 mask of `[..., Tq, Tk]` (leading dimensions 1 or the
    scores') that hides exactly the keys after each query (causal), its
    fill a constant at or below `max-fill`, then `linalg.softmax` along the
    keys, whose one use is (after a reshape back to `[N, Tq, Tk]`) the A
    operand of `tosa.matmul` with `v [N, Tk, D]`, rounded to the 16-bit
    type. That rounded product becomes `zero.attention q, transpose(kT),
    v scale s [causal]`; the rest is left dead. Where q, kT and v are
    each a merge of the first two dimensions of a transpose of a rank-4
    value (the heads of `[B, T, H, D]` projections moved to `[B, H, T, D]`
    and `[B, H, D, T]`, any order of B, T and H with the depth last, the
    same for all three) and the output's one use is the merge undone and
    the transpose back to that layout, the op takes those values as they
    lie, `seq_dim` naming their rows' dimension, and gives the output in
    that layout: no transpose of the operands, the output or (through
    the derivative rule) their gradients is left. A dropout of the
    probabilities between the softmax and the product (the importer's:
    `tosa.select` of its mask, the probabilities times a constant factor,
    and 0, the mask a `linalg.generic` marked `zero.dropout_mask` drawn
    from the function's `rng` argument over the softmax's shape) is the
    op's `dropout`: the kernels draw the same mask, and the op's other
    dimensions are the mask's leading ones (merged pairs are split as
    the mask's). The shapes must fit the
    kernel a target has: Tq and Tk multiples of `block`, D a multiple of
    `depth-multiple` up to `max-depth`, N at most `max-pairs` (the
    defaults are the CUDA target's, which forms it for bf16 and fp16).
    Anything else is left as it is.
  }];
  let options = [
    Option<"block", "block", "int64_t", "64",
           "Queries and keys must be multiples of this">,
    Option<"depthMultiple", "depth-multiple", "int64_t", "16",
           "The head depth must be a multiple of this">,
    Option<"maxDepth", "max-depth", "int64_t", "128",
           "The largest head depth">,
    Option<"maxPairs", "max-pairs", "int64_t", "65535",
           "The most (batch, head) pairs">,
    Option<"maxFill", "max-fill", "double", "-1e4",
           "A select's negative fill at or below this counts as -inf "
           "(-104 or less)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::tosa::TosaDialect",
                           "mlir::zero::ZeroDialect"];
}

def ZeroDecomposeSoftmax : Pass<"zero-decompose-softmax", "func::FuncOp"> {
  let summary = "Spell linalg.softmax in TOSA once it has been differentiated";
  let description = [{
    The importer keeps an ONNX Softmax whole as `linalg.softmax`, so that
    its derivative is the softmax's own, `dx = y * (dy - sum(dy * y))`, which
    reads only the output `y` that the next GEMM keeps anyway; the chain rule
    through its parts would keep the exponentials as well. After
    differentiation the op becomes what the rest of the compiler reads:
    `m = reduce_max(x)`, `e = exp(x - m)`, `s = reduce_sum(e)` and
    `y = e * reciprocal(s)` along its dimension. A 16-bit softmax (mixed
    precision) computes in fp32 and rounds its result once. The softmax's
    discardable attributes (`zero.backward`, `zero.recompute`) and location
    go to every op it becomes.
  }];
  let dependentDialects = ["mlir::tosa::TosaDialect"];
}

def ZeroLowerOptimizers : Pass<"zero-lower-optimizers", "func::FuncOp"> {
  let summary = "Lower zero optimizer and clipping ops";
  let description = [{
    Each update becomes one `linalg.generic` that reads the parameter,
    gradient and states once and writes the parameter and states into their
    own tensors, so bufferization performs the update in place.
    `zero.clip_grad_norm` becomes TOSA arithmetic, with one `zero.all_reduce`
    of the per-tensor sums of squares when the gradients are sharded.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tosa::TosaDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::tensor::TensorDialect"];
}

def ZeroOrderByArrival : Pass<"zero-order-by-arrival", "func::FuncOp"> {
  let summary = "Order the optimizer step by when each gradient is ready";
  let description = [{
    Runs on the training step at the tensor level, after the ZeRO
    partition and `zero-lower-optimizers`. The ops after the last backward
    op of a block (the optimizer step: each gradient's average, its sum of
    squares for the global norm, its update, a parameter's gather back)
    come in parameter order, so the first of them waits for the gradient
    that is ready last (the embedding's, whose last use is the model's
    first op), and the collective of the bucket holding it, while the
    updates of gradients reduced long before wait behind it. This orders
    them by arrival instead: each op gets the latest position, in the
    backward, of the values it depends on (a gradient's collective or its
    last accumulation), an op that depends on nothing from there joins its
    first user, and the ops are stably sorted by it. A collective of the
    step itself (stage 1's reduce-scatters, which follow the backward)
    keeps its earliest place, so the collectives still start first, in the
    order their gradients are ready; what reads a collective's result
    counts as ready after it. Updates then run while the last buckets are
    still in flight, and a clipped step's sums of squares likewise.

    Only independent ops change places: every use stays after its value,
    and every op that reads or writes an argument the step updates in place
    (a parameter, a state) keeps its order with the others that touch it,
    so bufferization makes no copy and the numbers are bit for bit the
    same. Collectives move with their ops: the order is still one static
    program, the same on every rank. A region holding an op with other
    memory effects is left as it is.
  }];
}

def ZeroPartitionDataParallel
    : Pass<"zero-partition-data-parallel", "func::FuncOp"> {
  let summary = "ZeRO stage 0 (DDP): average gradients and loss over ranks";
  let description = [{
    On a training step (a function that returns a `zero.role<loss>`
    result), every gradient entering `zero.clip_grad_norm` is replaced by
    its `zero.all_reduce` over `world-size` ranks times 1/N, and so is the
    returned loss, so each rank holds the mean over the global batch. The
    replica ops the step asked for before data parallelism was decided are
    lowered: `zero.replica_sum` to an all-reduce, `zero.replica_count` to
    N, `zero.micro_batch_index` to its index in the global batch. The
    function records `zero.world_size` and `zero.stage`. With one rank, and
    in any other function, the replica ops are the identity (a count of 1).

    With `reduce-in-f32` (DeepSpeed's `communication_data_type: fp32`), a
    gradient narrower than f32 is widened before its all-reduce and the
    average rounded back, so the sum over ranks rounds once.

    With `reduce-when-complete` (stage 0: the pipelines leave it off when
    a later stage turns the all-reduces into reduce-scatters) each
    gradient's all-reduce, with its widening, moves to right after the op
    that completes the gradient in the backward and is marked
    `zero.backward`, as a DDP reducer starts a bucket while the backward
    goes on; the 1/N average stays with the optimizer step. The full
    gradient lives to the update either way.
  }];
  let options = [Option<"worldSize", "world-size", "int64_t", "1",
                        "Data-parallel ranks">,
                 Option<"reduceInF32", "reduce-in-f32", "bool", "false",
                        "Reduce 16-bit gradients in f32">,
                 Option<"reduceWhenComplete", "reduce-when-complete", "bool",
                        "false",
                        "All-reduce each gradient where the backward "
                        "completes it">];
  let dependentDialects = ["mlir::zero::ZeroDialect",
                           "mlir::tosa::TosaDialect",
                           "mlir::tensor::TensorDialect"];
}

def ZeroPartitionOptimizerStates
    : Pass<"zero-partition-optimizer-states", "func::FuncOp"> {
  let dependentDialects = ["mlir::zero::ZeroDialect",
                           "mlir::tosa::TosaDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect"];
  let summary = "ZeRO stage 1: shard optimizer state, scatter gradients";
  let description = [{
    Runs after `zero-partition-data-parallel`. Each gradient's all-reduce
    becomes a reduce-scatter of the flattened, end-padded gradient: rank r
    keeps shard r of ceil(numel / N) elements. Norm and clipping work on the
    shards (`sharded`); every optimizer update runs on this rank's shard of
    the parameter and on optimizer-state arguments that are now shards
    (`zero.shard`); the updated shards are all-gathered back into the full,
    replicated parameter.
  }];
}

def ZeroDeferParameterGathers
    : Pass<"zero-defer-parameter-gathers", "func::FuncOp"> {
  let dependentDialects = ["mlir::zero::ZeroDialect",
                           "mlir::tosa::TosaDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::bufferization::BufferizationDialect"];
  let summary = "Stages 1-2: gather a 16-bit parameter from its master "
                "weight's shards at the start of the next step";
  let description = [{
    Runs after `zero-partition-optimizer-states` (and
    `zero-partition-gradients`), before `zero-lower-optimizers`. At stages
    1 and 2 each rank updates its shard of a parameter and all-gathers the
    updated shards back into the replicated parameter. That gather needs
    the update first, and nothing of the step is left to hide it behind.

    Where the parameter is a 16-bit copy of a sharded fp32 master weight
    (mixed precision), its value is the master rounded, so it can be
    gathered from the master's shards at any time before its next use:
    this pass moves the gather to the start of the step, before the
    forward, in the order the step first uses the parameters. Each is then
    bucketed, started at once and waited for at its first use, so the
    forward hides what the end of the last step exposed. The update no
    longer writes the 16-bit copy.

    Between steps the parameter buffer holds the values it had when the
    step started, one update behind its master weight; a reader outside the
    step (a checkpoint) takes the 16-bit copy as the master rounded. The
    first step gathers what the buffer already holds. fp32 parameters, with
    no other copy, keep their gather at the end.
  }];
}

def ZeroPartitionGradients
    : Pass<"zero-partition-gradients", "func::FuncOp"> {
  let summary = "ZeRO stage 2: reduce-scatter each gradient when complete";
  let description = [{
    Runs after `zero-partition-optimizer-states`. Each gradient's
    reduce-scatter moves to right after the gradient is complete in the
    backward pass, so the full gradient is freed at once and only the shard
    lives on. With gradient accumulation, each micro-batch's gradient is
    reduce-scattered inside the loop, which carries only the shard; the
    mean over micro-batches is taken on the shard after the loop.
  }];
  let dependentDialects = ["mlir::zero::ZeroDialect",
                           "mlir::tosa::TosaDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def ZeroRematerialize : Pass<"zero-rematerialize", "func::FuncOp"> {
  let summary = "Recompute activations in the backward pass instead of "
                "keeping them from the forward pass";
  let description = [{
    Runs on the differentiated training step, before the ZeRO partition. In
    each block that holds backward ops (`zero.backward`), the forward ops
    before them are cut into segments; the values that enter a segment
    from outside it (its checkpoints) are kept for the backward pass, and
    every other value of the segment that the backward reads is recomputed
    from them: the segment's ops that lead to those values are copied,
    marked `zero.backward` and `zero.recompute`, right before the first
    backward op that reads one of them, and the backward reads the copies.
    The copies read the checkpoints and parameters through one
    `zero.remat_barrier`, so that nothing merges them back into the
    forward's ops. Forward values outside every segment, and results of
    ops with memory effects (updates of running statistics), are kept.
    Random draws are functions of the step's counter, so a recomputed draw
    equals the forward's.

    Policies:
      - `none`: nothing is recomputed;
      - `blocks`: a segment per repeated block, found from the ONNX node
        names as PyTorch exports them: the path up to its first component
        that ends in `.<index>` (`/blocks.3/attn/MatMul` is in
        `/blocks.3`, `/layer2/layer2.1/conv1/Conv` in `/layer2/layer2.1`),
        where at least two indices share a prefix;
      - `sqrt`: the forward's computing ops in program order, cut into
        `segments` segments of equal op count (Chen et al. 2016; the
        default is the square root of the op count);
      - `budget`: the least recompute cost whose activations fit `budget`
        bytes, solved as a MILP with CBC (Checkmate, Jain et al. 2020) on
        the step's op order: each value the backward reads is kept or
        recomputed; a recomputed value is copied, with the ops between it
        and the kept values it reads, at the first backward op that needs
        it (for itself or for another copy) and lives until its last
        reader. The cost of an op is its time on `hardware` (a machine
        description) by the timeline's cost model (GEMMs at their type's
        peak: f32 at `matmul-precision`, bf16/f16 on tensor cores with
        `gpu`), or its FLOPs without one. Problems too large for the MILP, or not solved within
        `time-limit` seconds, take a heuristic (the cheapest fitting
        choice among the greedy one, cheapest recompute per byte first,
        and the cuts `blocks` and `sqrt` would make, then values kept
        again while the budget allows; past the MILP the blocks'
        boundary values the backward does not read are candidates too),
        and the report says so.

    The function gets a `zero.remat` report: the activation bytes the
    backward reads from the forward before and after, the FLOPs added,
    the step's FLOPs, the saved values, and for `budget` the solver's
    figures and problem.
  }];
  let options = [
    Option<"policy", "policy", "::mlir::zero::RematPolicy",
           "::mlir::zero::RematPolicy::none", "Rematerialization policy",
           [{::llvm::cl::values(
             clEnumValN(::mlir::zero::RematPolicy::none, "none",
                        "keep every activation"),
             clEnumValN(::mlir::zero::RematPolicy::blocks, "blocks",
                        "keep the inputs of repeated blocks"),
             clEnumValN(::mlir::zero::RematPolicy::sqrt, "sqrt",
                        "keep the inputs of sqrt(n) segments"),
             clEnumValN(::mlir::zero::RematPolicy::budget, "budget",
                        "least recompute within a memory budget"))}]>,
    Option<"segments", "segments", "int64_t", "0",
           "sqrt: number of segments (0: the square root of the forward's "
           "op count)">,
    Option<"budget", "budget", "int64_t", "-1",
           "budget: bytes the activations may hold at once">,
    Option<"hardware", "hardware", "std::string", "",
           "budget: machine description whose op times are the cost "
           "(empty: FLOPs)">,
    Option<"matmulPrecision", "matmul-precision", "std::string", "\"fp32\"",
           "budget: the peak f32 matmuls run at on `hardware` (fp32, or "
           "tf32)">,
    Option<"gpu", "gpu", "bool", "false",
           "budget: `hardware` is a GPU the CUDA target runs on (16-bit "
           "matmuls on tensor cores)">,
    Option<"timeLimit", "time-limit", "double", "60",
           "budget: seconds the MILP may take">,
    Option<"leastPeak", "least-peak", "int64_t", "-1",
           "budget: the least peak of the step's activations when already "
           "known (skips solving for it)">];
  let dependentDialects = ["mlir::zero::ZeroDialect"];
}

def ZeroPartitionParameters
    : Pass<"zero-partition-parameters", "func::FuncOp"> {
  let summary = "ZeRO stage 3: shard the parameters themselves";
  let description = [{
    Runs after `zero-partition-gradients`. Parameters with at least
    `persistence-threshold` elements become shard arguments; each is
    all-gathered right before its first use in the forward pass and again
    before its first use in the backward pass, so bufferization frees the
    gathered copy after its last use in each phase. The optimizer updates
    the shard in place; smaller parameters stay replicated.

    Reuse distance (stage3_max_reuse_distance): a parameter whose reuse
    window, from its last use in the forward pass to its first use in the
    backward pass, holds uses of at most `max-reuse-distance` elements of
    other sharded parameters is not released: the backward uses the
    forward's gathered copy instead of gathering again. Kept parameters are
    all held across the end of the forward pass, so they are chosen by
    shortest distance first while, with the largest parameter in use
    beside them, they stay within `max-live-parameters` elements.
  }];
  let options = [Option<"persistenceThreshold", "persistence-threshold",
                        "int64_t", "0",
                        "Parameters with fewer elements stay replicated">,
                 Option<"maxReuseDistance", "max-reuse-distance", "int64_t",
                        "-1",
                        "Keep a gathered parameter for the backward when at "
                        "most this many other parameter elements are used "
                        "in between (-1: always gather again)">,
                 Option<"maxLiveParameters", "max-live-parameters", "int64_t",
                        "-1",
                        "Gathered parameter elements the kept parameters "
                        "may hold (-1: no bound)">];
  let dependentDialects = ["mlir::zero::ZeroDialect",
                           "mlir::tosa::TosaDialect",
                           "mlir::tensor::TensorDialect"];
}

def ZeroCommReport : Pass<"zero-comm-report", "ModuleOp"> {
  let summary = "Record the bytes each rank sends per step, by collective";
  let description = [{
    Counts the collectives (`CollectiveOpInterface`: synchronous or
    started) of every `zero.entry` function, the bodies of `scf.for` loops
    times their static trip counts (once when unknown), by the ring
    algorithm's volume per rank (all_reduce 2(N-1)/N of the buffer;
    reduce_scatter and all_gather (N-1)/N of the whole N-rank buffer, in
    whole elements), the same rule the runtime's counters apply. The result
    is the module attribute `zero.comm`, keyed by function name. The
    memory plan runs it again after `zero-bucket-collectives`: a bucket
    sends in one call what its members sent in several, each call's ring
    rounding its share down, and the plan gives what the runtime sends.
  }];
}

def ZeroElideDestinationCopies
    : Pass<"zero-elide-destination-copies", "func::FuncOp"> {
  let summary = "Let an attention op write the view its fresh destination "
                "is copied into";
  let description = [{
    Runs on buffers, after bufferization and before the deallocation
    pipeline and the memory plan. A `zero.attention` or
    `zero.attention_grad` destination that is a fresh allocation of static
    shape, used by nothing but the op and one `memref.copy` of all of it
    (through `memref.expand_shape` / `memref.collapse_shape` views, each
    used once) into a static view of another allocation of the same
    block, is replaced by that view seen through the inverse reshapes, when
    nothing from the op to the copy reads or writes the view's bytes
    (other copies into disjoint slices may lie between) and the op reads
    none of them: the copy and the allocation go, and the view's
    allocation moves before the op if it was after it. One-shot
    bufferization cannot do this for an op with several results:
    `zero.attention_grad`'s dq, dk and dv, joined by a concatenation (the
    QKV projection's gradient), are slices of one tensor written by one
    op, whose disjointness its analysis does not see, so it gives each a
    buffer and a copy. The attention kernels take any strided operand
    whose last dimension is contiguous; other ops are left alone.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ZeroClassifyBuffers : Pass<"zero-classify-buffers", "func::FuncOp"> {
  let summary = "Tag each op with the memory category and phase of its "
                "buffers";
  let description = [{
    Wraps the location of every tensor-producing op of a `zero.entry`
    function in `fused<#zero.buffer<category, phase>>`, so that the buffers
    bufferization later creates for it can be counted by category:

    - parameters: parameter arguments and what is copied or gathered from
      them (stage 3's all-gathers, transposed weights);
    - optimizer_state: optimizer-state arguments and copies of them;
    - gradients: each parameter's gradient, from the backward op that
      produces it through reshapes, scaling, accumulation and tied sums to
      the collective or optimizer update that consumes it;
    - buffers: flat, padded communication buffers and collectives on other
      values (loss, norms);
    - activations: other values of the forward pass;
    - other: other values of the backward pass and the optimizer step.

    The phase is `backward` for ops marked `zero.backward` and the
    accumulation that follows them in a micro-batch loop, `optimizer` after
    the last backward op of the function, `forward` otherwise. The
    destination (`tensor.empty`, `linalg.fill`) of a destination-style op
    gets that op's class.
  }];
}

def ZeroVerifyCollectives : Pass<"zero-verify-collectives", "func::FuncOp"> {
  let summary = "Reject collectives that some ranks could skip";
  let description = [{
    Every rank must issue the same collectives in the same order, or the
    ranks that wait for a missing partner hang. A value may differ between
    ranks if it comes from `zero.rank`, from an input argument (the rank's
    own batch), from a shard argument or a `zero.reduce_scatter`, or is
    computed from one of those; `zero.all_reduce` and `zero.all_gather`
    results are the same on every rank. A collective nested in an `scf.if`
    or `scf.index_switch` whose condition, an `scf.for` whose bounds, or an
    `scf.while` whose condition may differ is an error, and so is a
    collective in a function with unstructured control flow. Collectives
    are the ops of `CollectiveOpInterface`, synchronous or started
    (`zero.*_start`), and the `zero.wait` that completes a started one, so
    the check holds before and after the schedule.
  }];
}

//===----------------------------------------------------------------------===//
// The communication schedule (buffer-level, target-independent)
//===----------------------------------------------------------------------===//

def ZeroBucketCollectives : Pass<"zero-bucket-collectives", "ModuleOp"> {
  let summary = "Fuse small collectives into flat buckets";
  let description = [{
    Runs on bufferized `zero` collectives, before `zero-async-collectives`.
    In each block, consecutive reduce-scatters (and all-reduces) of one
    world size and element type are grouped, in program order, while the
    elements of the members' whole tensors (all N parts of a reduce-scatter
    or all-gather) stay within `reduce-bucket-size` (DeepSpeed's
    reduce_bucket_size: elements, so a bucket holds that many times the
    element size in bytes); all-gathers likewise within
    `allgather-bucket-size`. A bucket closes early when an op touches the
    result of one of its members, except an op that can wait until the
    bucket has run: a plain copy of it into another buffer (a gathered
    parameter written back to its replica) and, after reduce-scatters and
    all-reduces, elementwise linalg work on buffers (a gradient's 1/N
    average, its rounding to 16 bits), whose outputs are no member's. Such
    an op moves after the bucket's collective, in order, unless something
    before it touches what the op writes or writes what it reads: then the
    bucket closes there. Work on gathered parameters keeps its place
    (deferring it would gather ahead of compute, which
    `zero-prefetch-gathers` decides).

    The all-gathers that open a block, with nothing before them but ops
    writing their inputs (a step's 16-bit parameters gathered from their
    masters ahead of the forward, `zero-defer-parameter-gathers`) and
    nothing using their results yet, run one after another while the
    first is waited for at once: there the k-th bucket holds at most 2^k
    times the first gather's elements (within `allgather-bucket-size`), so
    the first wait is for a small bucket and each later one arrives while
    the parameters before it are used.

    Each member's input is packed (`zero.bucket_pack`), where the member
    was (it is ready there), into a flat staging buffer laid out as
    world-size rows of per-rank parts, so that rank r's part of the bucket
    holds every member's r-th shard; one collective runs on the staging
    buffers where the last member was, and each member's result is
    unpacked (`zero.bucket_unpack`) right before the first op that touches
    it. Staging buffers are in memory category `buffers`. The order is the
    same on every rank; the bytes each rank sends are unchanged.
  }];
  let options = [
    Option<"reduceBucketSize", "reduce-bucket-size", "int64_t", "0",
           "Elements a reduce-scatter or all-reduce bucket holds (0: none)">,
    Option<"allgatherBucketSize", "allgather-bucket-size", "int64_t", "0",
           "Elements an all-gather bucket holds (0: none)">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ZeroUnpackInPlace : Pass<"zero-unpack-in-place", "ModuleOp"> {
  let summary = "Unpack a bucket's result straight into the buffer it is "
                "copied to";
  let description = [{
    Runs after `zero-bucket-collectives`. Where a `zero.bucket_unpack`
    writes a buffer of its own that is then copied whole (`memref.copy` or
    `linalg.copy`, through reshapes of it) into another contiguous buffer
    of its element type,
    and nothing else reads it, the unpack writes that buffer instead, in
    the copy's place: a gathered parameter goes from the bucket into the
    parameter itself, without a parameter-sized temporary and a second
    pass over its bytes. Left as it is when anything between the two ops
    touches the target or writes the staging buffer, or when the copy
    reads only part of the buffer (a padded parameter's shards).

    The in-place unpacks of a bucket then move on, together and in their
    order, to just before the first op that touches one of their targets
    (past ops that do not write the staging buffer): the bucket's wait
    (`zero-schedule-collectives`) comes where the step first needs one of
    its parameters, as for the gathers that `zero-defer-parameter-gathers`
    puts ahead of the forward, and the unpacks stay one launch. Unpacks
    whose targets the step does not touch again (a gather back after the
    update) stay where they are, each bucket's running while the next one
    travels.
  }];
}

def ZeroPackInPlace : Pass<"zero-pack-in-place", "ModuleOp"> {
  let summary = "An elementwise producer writes its result into its bucket";
  let description = [{
    Runs after `zero-bucket-collectives`, the mirror of
    `zero-unpack-in-place`. Where a `zero.bucket_pack` copies a buffer of
    its own (an allocation, through reshapes) that one elementwise
    `linalg.generic` writes (all loops parallel, every map the identity,
    contiguous static operands, no index read) and nothing else reads, that
    op writes the staging buffer's slot instead: its operands are viewed as
    the pack's rows, its output is the slot's strided view, and the pack,
    the buffer and its reshapes go. A 16-bit gradient's rounding (a bias's
    or a layer norm's, whose sums are kept in f32) then lands in the bucket
    in the same launch: no copy, and on a GPU no launch of its own. Into a
    one-row (all-reduce) bucket the slot is contiguous, so any linalg op or
    `zero.rounded_matmul` that writes the buffer itself (with the zero
    fills before it) writes the slot viewed in the buffer's shape: stage
    0's weight gradients go from their GEMMs straight into the bucket. The
    staging buffer's allocation moves up to the first of them when it came
    after it. The values are the same; nothing else touches the slot.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect"];
}

def ZeroKeep16BitRounding : Pass<"zero-keep-16bit-rounding"> {
  let summary = "Keep the rounding of every 16-bit float op through folds";
  let description = [{
    Runs right after upstream's `arith-emulate-unsupported-floats`, which
    computes each bf16 or f16 op in f32 between an `arith.extf` and an
    `arith.truncf` marked `fastmath<contract>`: that flag lets a fold
    replace `extf(truncf(x))` by `x`, so two 16-bit ops in one loop body
    round once, while the same ops in two loops, the value stored between
    them, round twice. Clearing `contract` on the conversions to and from
    16-bit floats keeps one rounding per op, as a device with 16-bit
    arithmetic rounds: the step's numbers then do not depend on what
    fusion puts in one loop (the CUDA target computes a 16-bit producer
    again in each of its users, the CPU target stores it).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def ZeroAsyncCollectives : Pass<"zero-async-collectives", "ModuleOp"> {
  let summary = "Split each buffer collective into a start and a wait";
  let description = [{
    `zero.all_reduce`, `zero.reduce_scatter` and `zero.all_gather` on
    buffers become `zero.*_start`, returning a `!zero.request`, followed at
    once by `zero.wait` of it: the same program, with the collective's
    completion now an op of its own that the schedule can move.
  }];
}

def ZeroScheduleCollectives
    : Pass<"zero-schedule-collectives", "ModuleOp"> {
  let summary = "Move each collective's wait to the first use of its buffers";
  let description = [{
    After `zero-async-collectives`, a `zero.wait` follows its start. This
    moves the wait down its block to just before the first op that reads
    or writes the collective's send or receive buffer (or a view of them),
    or before the terminator (waits may pass one another: each waits for
    its own collective), so that the compute in between runs while the
    collective is in flight. The order of starts, and so of collectives on
    every rank, is unchanged. Without overlap (DeepSpeed's `overlap_comm:
    false`) the pipelines leave this pass out, and each wait stays at its
    start.
  }];
}

def ZeroReleaseEarly : Pass<"zero-release-early", "ModuleOp"> {
  let summary = "Free each temporary buffer right after its last use";
  let description = [{
    Runs after `buffer-deallocation-pipeline`, which frees buffers at the
    end of their block. A `memref.dealloc` of a `memref.alloc` of the same
    block moves to just after the last op of the block that uses the buffer
    or any value derived from it (views, the request of a collective
    started on it, up to its wait). Buffers that escape the block (yielded,
    returned, stored) keep their dealloc where it is. This makes each
    activation, gradient and gathered parameter live only as long as the
    step needs it, which the memory plan then reflects.
  }];
}

def ZeroPrefetchGathers : Pass<"zero-prefetch-gathers", "ModuleOp"> {
  let summary = "Start stage-3 all-gathers ahead of use, within the "
                "prefetch budget and the live-parameter limit";
  let description = [{
    Runs after `zero-release-early`, when each buffer's deallocation
    follows its last use, so the parameter elements (memory category
    `parameters`) live at every op are known. In each block, the
    all-gathers are taken in order; gather j starts right after the wait
    of an earlier gather j-k (taking its receive buffer's allocation and
    views along), for the largest k such that the gathers j-k+1 .. j, all
    then ahead of their use, hold at most `prefetch-bucket-size` elements
    (stage3_prefetch_bucket_size) and the live parameter elements over the
    moved range stay within `max-live-parameters`
    (stage3_max_live_parameters). The order of collectives is unchanged,
    so it stays the same on every rank. A step that holds more gathered
    parameter elements than the limit even without prefetching is an
    error naming the op and the least limit that works.
  }];
  let options = [
    Option<"prefetchBucketSize", "prefetch-bucket-size", "int64_t", "0",
           "Elements of gathered parameters fetched ahead of use">,
    Option<"maxLiveParameters", "max-live-parameters", "int64_t", "-1",
           "Elements of gathered parameters held at once (-1: no limit)">,
  ];
}

def ZeroTimelineReport : Pass<"zero-timeline-report", "ModuleOp"> {
  let summary = "Predict each step's timeline on a described machine";
  let description = [{
    Runs on the scheduled buffer-level IR (after
    `zero-schedule-collectives`). For every `zero.entry` function it
    simulates one step on one rank: compute ops in program order on one
    stream (each allocation costing `alloc_overhead`), each op costing
    `op_overhead` plus the larger of its FLOPs over the peak rate and its
    bytes over the memory bandwidth (GEMMs at the peak of their operands'
    type, `HardwareModel::matmulPeakKey`: f32 at the `precision` peak, f64
    at `fp64`, bf16 and f16 at `bf16` and `fp16` with `gpu`, else at the
    f32 one, as the CPU runtime widens them; other linalg ops at
    `loop_flops`); each `zero.*_start` queues its collective on a
    communication stream (alpha-beta time: measured figures for the world
    size when the description has them, else ring or tree over the
    described links); each `zero.wait` makes compute wait for it. The world
    size is the function's `zero.world_size`. The result is the module
    attribute `zero.timeline`, keyed by function name: step, compute,
    communication and exposed seconds, the step without overlap, the lower
    bound max(compute, communication), FLOPs and MFU.

    With `gpu`, the step is costed as launches on a GPU described with
    `device.threads` (resident threads): every kernel root is one launch
    costing `op_overhead` plus its arithmetic over its share of the
    resident threads at `loop_flops` or its bytes over its warps' share of
    the bandwidth, whichever is larger. A linalg op runs on one thread per
    parallel iteration (`zero-opt --report=timeline --target=cuda` gives
    the CUDA target's own mapping instead); a loop or conditional of pure
    compute, or an op without parallel loops, on one thread
    (`serial_launches`); copies on one thread per element; GEMMs are
    library calls at their type's peak; allocations are free (one
    preplanned block). Where the description has `device.memory_latency`,
    a launch costs at least the loads each thread waits for one after
    another times that latency, once per wave of resident threads: a
    thread's share of the op's iterations in batches of `load-batch`
    (what `zero-gpu-batch-loads` issues together), each batch one round,
    one more where a load needs another's value first (a guarded select's
    side, an element at a loaded index); a round that only reads what the
    cache serves (a row group's second read, a mask or bias read more often
    than it has elements) at `device.cache_latency`; a copy one per
    element; a loop kernel one per iteration for the body's own loads (in
    batches where the loop does not write their buffer) and its op's
    rounds in the iterations whose row is in the thread's part.
  }];
  let options = [
    Option<"hardware", "hardware", "std::string", "",
           "Hardware description (JSON, as in hardware/)">,
    Option<"gpu", "gpu", "bool", "false",
           "Cost the CUDA target's launches on a GPU description">,
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "Peak FLOP rate f32 matmuls run at (a key of peak_flops: fp32, "
           "or tf32)">,
    Option<"overlapComm", "overlap-comm", "bool", "true",
           "Collectives run beside compute (false: each completes where it "
           "starts, as the runtime does without overlap_comm)">,
    Option<"loadBatch", "load-batch", "int64_t", "1",
           "With gpu: iterations of a thread's loop whose loads go out "
           "together (zero-opt --target=cuda: the CUDA target's batch)">,
  ];
}

def ZeroFoldTransposesIntoMatmuls
    : Pass<"zero-fold-transposes-into-matmuls", "func::FuncOp"> {
  let summary = "Read transposed matmul operands in place instead of "
                "materializing the transpose";
  let description = [{
    The backward pass of `Y = X W` computes `X^T dY` and `dY W^T`; imported
    and differentiated graphs spell those as a `linalg.transpose` feeding
    a `linalg.matmul` or `linalg.batch_matmul`. On tensors, this pass
    rewrites such a matmul to read the transpose's input through a
    transposed indexing map (upstream's `indexing_maps` on named matmuls),
    when the transpose swaps the two innermost dimensions and leaves any
    batch dimension alone, up to dimensions of size 1 (the operand is then
    the transpose's input reshaped, a view). The transpose then has no
    buffer of its own once
    it has no other use, and a BLAS library reads the operand as stored
    (its transpose flag), as `zero-linalg-to-blas` passes it.

    A permutation that moves batch dimensions (attention's head split
    `[B, T, H, d] -> [B, H, T, d]` collapsed to `[B*H, T, d]`, and the
    merge back) cannot be a named matmul's map. Such a GEMM becomes a
    multiply-add `linalg.generic` with one loop per batch dimension (the
    collapsed batch split in two), whose maps read the permuted operands
    and write the permuted product as stored; `zero-linalg-to-blas` passes
    its strides along every loop. A permutation that would leave a batch
    dimension innermost, which BLAS cannot read, stays.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def ZeroRoundMatmulResults
    : Pass<"zero-round-matmul-results", "func::FuncOp"> {
  let summary = "Let 16-bit GEMMs write their rounded result";
  let description = [{
    Mixed precision writes a 16-bit GEMM as a matmul into a zero-filled f32
    tensor whose users round it to 16 bits (`arith.truncf` in the body of
    each consumer that elementwise fusion formed). The f32 product then
    lives in memory: written by the GEMM, read back by every consumer, and
    counted in the memory plan (GPT-2 XL's attention scores: 840 MB at a
    micro-batch of 8, against 420 MB rounded). A tensor-core GEMM rounds
    its f32 sums to a 16-bit C itself.

    On tensors, a matmul whose A and B are bf16 (or f16), whose destination
    is a fill of zeros, and whose every use, through `tensor.extract_slice`,
    `tensor.collapse_shape` and `tensor.expand_shape`, is a
    `linalg.generic` input that the body only rounds to A's type (round to
    nearest even, the default) becomes a `zero.rounded_matmul` into an
    empty 16-bit tensor; the views and the consumers' block arguments take
    the 16-bit type and the roundings go; a consumer left copying its one
    input unchanged (it only rounded) goes too, its result replaced by
    that input, rather than become a launch that copies the product. The
    values are the same: both
    round the same f32 sum once. A matmul any other op reads in f32 (the
    loss's logits, an accumulation onto a non-zero tensor) stays.
  }];
  let dependentDialects = ["mlir::zero::ZeroDialect",
                           "mlir::tensor::TensorDialect"];
}

def ZeroSplitMaskedMatmuls
    : Pass<"zero-split-masked-matmuls", "func::FuncOp"> {
  let summary = "GEMMs skip the blocks a constant mask hides";
  let description = [{
    A causal attention's score GEMMs form and read whole `[T, T]` matrices
    of which the mask hides half: the scores `Q K^T` and their gradient
    `dO V^T` are read only where the mask keeps them, and the
    probabilities `P` and their gradient `dS` are exactly zero where it
    hides. Memory-bound on a GPU (each is 420 MB for GPT-2 XL at a
    micro-batch of 8), each costs as much as the bytes it moves.

    On tensors, after `zero-round-matmul-results`, a contraction
    (`zero.rounded_matmul`, or a linalg contraction into a fill of an empty
    tensor) with one batch-free row loop, column loop and reduction loop
    is split into blocks of one of its parallel loops, where that saves
    at least a tenth of its work:
    - an operand that is exactly zero where a constant mask hides
      (`P`, `dS`: `zero::maskedZerosOf`) gives each block of its parallel
      loop the range of the reduction loop where it is not zero;
    - a result that every user reads only under a select on a constant
      mask (the body takes it, through elementwise ops, into one side of
      an `arith.select` whose condition is the mask's element) gives each
      block of the row (or column) loop the range of the other loop that
      a user keeps; the rest of the result is never written.
    Each block is the same op on `tensor.extract_slice`s of the operands,
    written with `tensor.insert_slice` into one
    `bufferization.alloc_tensor` (one buffer, each block a strided GEMM
    into it; slices of a `tensor.empty` would fold into empty tensors of
    their own, each block then copied in). Blocks are at least
    `min-rows` long (rounded up to a multiple of 8), at most `max-blocks`
    of them.

    The values read are the same: a dropped term was `0 * x`, zero for a
    finite `x` (as `zero-gpu-skip-masked-terms` assumes), and a result
    element left unwritten is one no user's select keeps.

    Then a parallel `linalg.generic` with an identity result map whose
    every use is a static `tensor.extract_slice` (a block's operand) or a
    consumer keeping the element only under selects on constant masks is
    marked `zero.written_region` (`zero::writtenRegionOf`): per run of
    rows of its last two dimensions, the columns some use reads, when
    that leaves a tenth of the result unread in at most 16 runs (a causal
    attention's `P` and `dS`). A target may leave the rest unwritten.
  }];
  let options = [
    Option<"minRows", "min-rows", "int64_t", "128",
           "The fewest rows (or columns) of a block">,
    Option<"maxBlocks", "max-blocks", "int64_t", "4",
           "The most blocks one GEMM is split into">,
    Option<"maxFill", "max-fill", "double", "-1e4",
           "A select's negative fill at or below this counts as -inf "
           "before an exponential (-104 or less)">,
  ];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def ZeroGatherOneHotReductions
    : Pass<"zero-gather-one-hot-reductions", "func::FuncOp"> {
  let summary = "Read a one-hot sum's one element instead of every class";
  let description = [{
    Losses pick each sample's target score as a sum over the classes of a
    one-hot select, `select(label == class, v, 0)` (the import of
    SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss, which keeps the
    pick differentiable), and their gradients sum a one-hot tensor the same
    way. Over a vocabulary, each such sum reads the whole score matrix, or
    writes and reads a one-hot tensor of its size, to keep one element per
    sample.

    On tensors, a `linalg.generic` or `linalg.reduce` whose body adds to
    its accumulator a summand that is, up to negations,
    `select(cmpi eq(label, class), v, +-0.0)`, where `class` reads a
    constant holding 0..C-1 along the op's one reduction loop of more than
    one iteration (any others have one) and `label` does not vary along
    it, becomes an elementwise op over the parallel loops that computes
    the body once, at the label's class. The summand, the condition and
    each operand that varies with the class may be written by elementwise
    `linalg.generic`s (read directly or through reshapes that only add or
    drop dimensions of size 1): their bodies are computed in place of
    reading them, and they stay for their other users. What still varies
    with the class (the scores a GEMM wrote) is read with `tensor.extract`
    at the label's class. A label outside [0, C) (an ignore_index)
    selects zero, as before. The initial value becomes an input and the
    destination an empty tensor, so that the op stays elementwise when
    fused into a consumer with more loops.

    The sums added only zeros besides the label's term, so the values are
    the same, up to the sign of a zero total from a -0.0 initial value.
    `zero-cpu-fuse-elementwise` applies the same rewrite after its first
    fusion, then fuses again: a one-hot tensor left with one user fuses
    into it.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def ZeroFormKernels : Pass<"zero-form-kernels", "ModuleOp"> {
  let summary = "Outline each compute group into a kernel function and "
                "deduplicate identical kernels";
  let description = [{
    Runs on buffer-level IR after the schedule and the memory plan, so that
    allocations, collectives and the plan stay where they are. In every
    function that is not itself a kernel, each compute group becomes a
    private `func.func` marked `zero.kernel` and a `func.call` to it:
      - a linalg op or `memref.copy`, together with a `linalg.fill` right
        before it that initializes one of its outputs (a reduction's
        accumulator);
      - a loop or conditional (scf) whose body holds only compute: no
        calls, no zero-dialect ops (collectives, waits, buckets); buffers
        it allocates inside are its own.
    The kernel takes the buffers and scalars the group uses, in order of
    first use; scalar constants are cloned in. A strided buffer argument
    that only linalg ops and copies use is passed with a dynamic offset, so
    that the same op on different views of a flat buffer (parameters in a
    gather bucket, one layer after another) is one kernel. Kernels that are
    structurally identical (same body, same argument types) are merged:
    the second layer of a transformer calls the first layer's kernels.
    What remains in the step is allocation, views, scalar bookkeeping,
    calls (kernels, BLAS, runtime) and the zero dialect's collectives.
    Kernels carry `zero.kernel` (the root op's name), and the module
    `zero.kernels = {formed, unique}`.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect"];
}

def ZeroApplyNoAlias : Pass<"zero-apply-noalias"> {
  let summary = "Mark the LLVM parameters listed in `zero.noalias_params` "
                "`llvm.noalias`";
  let description = [{
    Runs after conversion to the LLVM dialect, on a module or a
    `gpu.module`: each `llvm.func` directly in it carrying
    `zero.noalias_params` gets `llvm.noalias` on those pointer parameters,
    and the list goes. Conversion to LLVM drops `llvm.noalias` from an
    argument that expands into several (a memref descriptor), so the
    passes that know which buffers never alias record the parameters
    concerned, the descriptors' aligned pointers: `zero-cpu-kernel-noalias`
    on the CPU's kernels, `zero-gpu-outline-kernels` on the GPU's.
  }];
}

#endif
