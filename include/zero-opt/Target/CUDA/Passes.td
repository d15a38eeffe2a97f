//===- Passes.td - CUDA target passes ----------------------*- tablegen -*-===//
#ifndef ZERO_OPT_TARGET_CUDA_PASSES
#define ZERO_OPT_TARGET_CUDA_PASSES

include "mlir/Pass/PassBase.td"

def ZeroGPUMapKernels : Pass<"zero-gpu-map-kernels", "ModuleOp"> {
  let summary = "Tile every kernel to GPU blocks and threads";
  let description = [{
    Runs on the kernels of `zero-form-kernels` (functions marked
    `zero.kernel`) and leaves the step alone. First the kernels take the
    form that tiling expects: `memref.copy` becomes `linalg.copy`, named
    linalg ops become `linalg.generic`, and unit dimensions are dropped
    (rank-reducing subviews). Then each linalg op at the top of a kernel
    is tiled twice into `scf.forall` loops: the outer one mapped to
    `#gpu.block`, the inner one to `#gpu.thread`, each over the innermost
    (up to three) parallel dimensions, innermost to x. A block holds at
    most `threads-per-block` threads (256 by default), shaped to the
    extents; the grid has one block per tile. Reduction dimensions, and
    parallel dimensions beyond the innermost three or past the grid's
    y/z limit of 65535, stay loops within a thread, so every output
    element is computed by one thread in the op's loop order. An op
    without reductions gives each thread several adjacent outputs along y
    (`zero::cuda::gpuBlockTiles` over `gpuBlockThreads`: 16 bytes of its
    narrowest operand while the grid keeps 2^20 threads), so a thread has
    several loads in flight; `zero.kernels` counts them (`gpu_coarsened`).

    A loop whose body is one linalg op with parallel dimensions, around
    index arithmetic, views and loads, runs on that op's grid with the loop
    inside every thread, when no thread can see another's writes: the op
    writes arguments that no other argument overlaps at any call (views of
    one arena are told apart by byte ranges), every view of them it uses
    reaches each distributed dimension, through subviews only, at the same
    buffer dimension and constant offset, and the loop loads nothing from them. The embedding
    gradient's scatter is such a loop, once its add's temporary copied back
    over the table's row is folded into an add in place: a thread per
    column adds the tokens' rows in order, the sums the loop gives on one
    thread. Values the thread's tile needs are hoisted out of the loop.
    When the op writes one row of its output per iteration at a row known
    only at run time (`zero::cuda::scatteredRow`: the table's row at the
    token's id), and every operand viewing that output views the same row,
    the rows are split into parts (`zero::cuda::gpuScatterParts`), the
    outermost block dimension: a thread runs the op only when the row lies
    in its part, so each element is still one thread's, in loop order, and
    the grid holds parts times as many threads.

    A `zero.row_group` (`zero-gpu-row-groups`) is mapped first, before
    unit dimensions are dropped: one block forall over its rows,
    `zero::cuda::rowsPerBlock` at a time, holding a thread forall per op
    (with the fill that initializes it) in order, y the block's row and x
    the row's 32 lanes: lane l computes the op on its row and iterations
    l, l + 32, ... of its lane loop (`zero::cuda::rowLane`, through
    strided subviews), an op without one on x = 0 alone. The thread
    foralls run one after another (a barrier between each two on a GPU),
    and every thread keeps the op's loop order.

    Other loops and ops with no parallel dimension (0-d ops, full
    reductions) run in a 1x1 forall pair mapped to `#gpu.block<z>` /
    `#gpu.thread<z>`; statically shaped allocations in them become stack
    buffers at the top of the thread's body.

    A `linalg.fill` that initializes the next op's accumulator is no
    launch of its own where `zero::fusedInitializationRoot` allows (the
    op's output map indexes every parallel loop, and no other operand
    overlaps the output at any call): each thread fills its tile of the
    output before it reduces into it. A serial op's thread fills first.

    The result is the mapped kernel IR: `--target=cuda` turns each block
    forall into a launch, and `scf-forall-to-for` runs it on the CPU
    (zero-opt `--simulate-gpu`), foralls in order, which is the order the
    GPU's barriers between launches give. The number of launches (block
    foralls, over the deduplicated kernels) is added to the module's
    `zero.kernels` as `gpu_launches`, the row groups among them as
    `gpu_row_groups`.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t",
           "mlir::zero::cuda::kDefaultThreadsPerBlock",
           "Most threads of one block (a power of two, 32 to 1024)">
  ];
  let dependentDialects = ["mlir::scf::SCFDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def ZeroGPUOutlineKernels : Pass<"zero-gpu-outline-kernels", "ModuleOp"> {
  let summary = "Mapped kernels as GPU launches of one gpu.module";
  let description = [{
    Runs after `zero-gpu-map-kernels`. Every block forall at the top of a
    `zero.kernel` function becomes a `gpu.launch` whose grid is the
    forall's iteration count per `#gpu.block` id and whose block is its
    thread forall's per `#gpu.thread` id (1 for an id not mapped); the
    foralls' induction variables become the block and thread ids (scaled
    by the block forall's step), so no thread needs a bounds check. The
    launch is outlined (upstream's `outlineKernelFunc`, constants sunk
    into it) into a `gpu.func` named `<kernel>_<n>` of one `gpu.module`
    (`module-name`) for the whole step, and replaced by a
    `gpu.launch_func`; the module becomes a `gpu.container_module`. One
    module is one cubin: one ptxas run and one module load per step
    instead of one per launch.

    A block forall holding several thread foralls (a row group's ops, in
    order) is one launch whose block is, per id, the largest of theirs:
    each thread forall runs on its own threads (a `tid < count` guard
    where it has fewer, a count of 1 for an id it does not map) and is
    followed by a `gpu.barrier`, the last
    excepted, so each runs when the one before has finished in the whole
    block.

    Each `gpu.func` carries `zero.noalias_params`: the aligned pointers of
    the memref parameters that alone reach a kernel argument which, at
    every call, overlaps no other argument (`zero::noAliasArguments`).
    Upstream's conversion drops `llvm.noalias` from a memref descriptor;
    `zero-apply-noalias` sets it on those parameters after it.

    A top-level forall that is not a block forall holding normalized
    thread foralls with static counts (and, besides them, ops without
    regions only) is an error.
  }];
  let options = [
    Option<"moduleName", "module-name", "std::string", [{"zero_kernels"}],
           "Name of the gpu.module that holds the device functions">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::arith::ArithDialect"];
}

def ZeroGPUHostKernels : Pass<"zero-gpu-host-kernels", "ModuleOp"> {
  let summary = "A host copy of every kernel, for the CUDA host emulator";
  let description = [{
    Runs after `zero-gpu-outline-kernels`. Every kernel `gpu.func` of a
    `gpu.module` gets a public host function `zero_host_kernel_<name>`
    taking what `cuLaunchKernel` takes: the parameter array (a pointer to
    each value of the launch's arguments, a memref as its descriptor's
    fields, as `gpu-to-llvm` passes them) and the grid and block sizes
    (x, y, z, i64). It runs the kernel's body for every block and thread
    in turn, the ids being loop variables, so a `--target=cuda` build can
    compute its values on a machine without a GPU: the host emulator calls
    it in place of the cubin's kernel. 16-bit float arithmetic and math
    run in f32 and round back, as the device code does. Next to each copy,
    a constant C string `<copy name>_args` describes the
    arguments, so that the emulator knows the device bytes a launch
    touches: `m<rank>:<element bytes>:<r|w|rw|->` per memref (what the
    kernel does with its buffer, through views too; an op that does not
    declare its memory effects counts as both) and `s` per scalar. The
    gpu.module and the launches are unchanged.

    A `gpu.barrier` at the top of the body (a row group's phases) splits
    it: each block runs every phase in turn for all its threads, which is
    what the barrier guarantees; a value a phase uses from an earlier
    phase is computed again in it when its ops are pure (index
    arithmetic).

    A kernel whose threads depend on each other otherwise (a loaded value
    across a barrier, barriers in loops or branches, `gpu.shuffle` of i32
    or f32, `nvgpu.mma.sync` m16n8k16 on bf16 or f16 with f32
    accumulators, `gpu.lane_id`, workgroup and private buffers of static
    shape, more than one block) gets `zero_host_thread_<name>` instead,
    which runs one thread: it takes the parameter array, the emulator's
    context for the thread (its first slots: the barrier, shuffle and mma
    functions, then the block's shared bytes, where the workgroup buffers
    lie in order, 16-byte aligned) and the grid and block sizes, block id
    and thread id (x, y, z each, i64). The emulator runs a block's
    threads side by side (`zero_host_thread_<name>_shared`: the shared
    bytes they need) and does what the hardware does where they meet:
    releases a barrier when every thread of the block reached it, and
    hands each lane of a warp the value a shuffle reads or its part of a
    matrix product (PTX's fragment layout) when all its lanes reached it.
    Other GPU operations, and argument types a launch cannot pass, are
    errors.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::cf::ControlFlowDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::ub::UBDialect"];
}

def ZeroGPUSkipMaskedTerms : Pass<"zero-gpu-skip-masked-terms"> {
  let summary = "Sums whose terms a constant mask makes zero select them "
                "away, so the GPU does not read them";
  let description = [{
    Runs on tensors after elementwise fusion (on the CPU with
    `--simulate-gpu` too). A causal softmax's probabilities are exactly
    zero where its constant mask is false: `exp(select(mask, s, -inf) -
    max)` is `exp(-inf)`. The softmax backward's row sum of `dP * P`
    still reads both operands whole, half of them to add those zeros.

    For a reduction (a `linalg.generic` whose body yields `term + acc`,
    `acc` its one output's block argument used nowhere else) with an
    input `P` such that `term` is zero wherever `P` is (`P` itself,
    widened or narrowed, times anything, divided by anything, negated),
    where `P` is the result of an elementwise generic whose yielded value
    is zero wherever an element of a constant i1 input is false (a select
    of zero, or the exponential of a select of `-inf`, less a row's
    statistic, scaled), the term becomes `select(mask, term, 0)` with the
    mask as a new input, indexed as the producer indexed it for that
    element of `P`. `zero-gpu-guard-loads` then loads neither operand
    where the mask is false, and the timeline prices the reads saved
    (`zero::guardedReadShare`). When the producer subtracts a statistic
    taken over some of its loops (a row's maximum), every slice of the
    mask along those loops must hold a true element, so that the
    statistic is finite and the masked values are `-inf`, not NaN.
    Models often write `-inf` as a large finite number (`-1e9`, a type's
    lowest value): a negative fill at or below `max-fill`, as the
    producer scales and shifts it, counts as `-inf`; its exponentials are
    then zero as long as the unmasked values the statistic is taken over
    lie more than 104 above it (`exp` of less than -104 is zero in f32).

    The sums are the same: each term dropped was `x * 0`, a zero for
    finite `x`, and adding it left the sum as it was. Only a term whose
    other factor is infinite or NaN (which would have made it NaN) reads
    differently: the masked products are dropped as a fused attention
    kernel never forms them.
  }];
  let options = [
    Option<"maxFill", "max-fill", "double", "-1e4",
           "A select's negative fill at or below this counts as -inf "
           "before an exponential (-104 or less)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect"];
}

def ZeroGPUPadGemmDims : Pass<"zero-gpu-pad-gemm-dims"> {
  let summary = "Pad 16-bit GEMMs' odd dimensions to multiples of 8";
  let description = [{
    Runs on tensors, before bufferization. On an H100, cuBLAS runs a bf16
    GEMM whose M, N or K is not a multiple of 8 with Turing-era kernels at
    a seventh of the speed: GPT-2's vocabulary of 50257 made the logits
    GEMM take 13.3 ms and its two gradients 10.3 and 9.9 ms, against
    1.7, 2.1 and 2.1 ms with the dimension rounded up to 50264
    (`bench/cublas_shapes.cpp`; leading dimensions made no difference).
    Frameworks pad the vocabulary in the model; here each such GEMM
    (bf16 or f16 operands, a dimension of at least `min-extent`) runs on
    operands zero-padded to the next multiple of 8 along it
    (`tensor.pad`, upstream's `linalg::rewriteAsPaddedOp`), and its users
    get the original extent as a slice of the padded result. Zeros along
    K add nothing; the extra rows or columns of the result are never
    read. The padded copies (the embedding table, the logits' gradient)
    are in the memory plan. f32 GEMMs run on CUDA cores at the same speed
    either way and are left alone.
  }];
  let options = [
    Option<"minExtent", "min-extent", "int64_t", "128",
           "Pad only dimensions at least this long (the padding adds "
           "under 8 / min-extent of the work)">,
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect",
                           "mlir::linalg::LinalgDialect"];
}

def ZeroGPUBiasIntoGemms : Pass<"zero-gpu-bias-into-gemms"> {
  let summary = "A bias added to a GEMM's product becomes the GEMM's C";
  let description = [{
    Runs on tensors after `zero-round-matmul-results` and
    `zero-split-masked-matmuls`. A linear layer's bias is added to its
    GEMM's product by an elementwise op that reads the product back from
    memory (GPT-2 XL's QKV projection: 79 MB read and written again a
    layer). cuBLAS adds C to the product when beta is 1. Where every user
    of a GEMM's result (through reshapes used once) is a `linalg.generic`
    that reads it through the identity and only adds one input to it, the
    same bias read alike by each, which is available before the GEMM: the
    bias is broadcast into the GEMM's destination (a `linalg.generic`
    into an empty tensor of the users' shape, reshaped back into the
    GEMM's), the GEMM accumulates into it (a `zero.rounded_matmul` gets
    `accumulate`; a linalg contraction loses its zero fill, so the BLAS
    call adds to C), each user's adds read the GEMM's value instead, the
    bias input a user no longer reads goes, and a user left copying its
    input is replaced by it. The GEMM: a `zero.rounded_matmul` into an
    empty tensor, or a linalg contraction into a zero fill of one.

    The sum is computed in f32 and rounded once, as cuBLAS's bias
    epilogue and PyTorch's `addmm` do: a 16-bit GEMM's `round(round(A B) +
    b)` becomes `round(A B + b)`.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect",
                           "mlir::linalg::LinalgDialect"];
}

def ZeroGPUPadInPlace : Pass<"zero-gpu-pad-in-place"> {
  let summary = "Let a padded or concatenated operand's producer write the "
                "padded or joined buffer";
  let description = [{
    Runs on tensors after `zero-cpu-split-empty-tensors`, before
    bufferization. A `tensor.pad` bufferizes to a fill of the whole padded
    buffer and a copy of the source into it; the logits' gradient that
    `zero-gpu-pad-gemm-dims` pads for its GEMMs was 823 MB (GPT-2's
    vocabulary, bf16, micro-batch 8) filled, written, copied and held
    twice. A pad by a constant, at the high end only, of a source that is
    an op's fresh result (its destination a `tensor.empty` used once and
    not read), seen through expand_shape / collapse_shape ops used once,
    becomes: an empty tensor of the padded shape whose border (one slab
    per padded dimension) is filled, the producer writing the interior
    (an `extract_slice`, through the inverse reshapes), and an
    `insert_slice` of the result back, which bufferizes in place. The
    values are the same; the fill covers the border alone and the copy
    and the second buffer are gone.

    A concat (tosa-to-tensor's chain of `insert_slice` ops into an empty
    tensor: the Q, K and V gradients joined for the QKV weight's GEMMs,
    3 x 26 MB copied a layer at GPT-2 XL's width) is rebuilt likewise when
    its slices are static and disjoint (so their order is free): the empty
    tensor moves before the first operand that is a fresh result (a linalg
    op's or a `zero.rounded_matmul`'s, which never reads its destination),
    each such producer writes an `extract_slice` of the chain so far
    (through the inverse reshapes, which move right after it) with its
    `insert_slice` right after it, and the other operands' inserts follow
    where the chain ended. Each fresh operand bufferizes in its slice; the
    others are copied as before.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect",
                           "mlir::linalg::LinalgDialect"];
}

def ZeroGPUScalarCopies : Pass<"zero-gpu-scalar-copies", "ModuleOp"> {
  let summary = "The step's scalar memory ops as device work";
  let description = [{
    Runs on the step functions (not kernels) before `zero-form-kernels`.
    On the GPU the step's buffers are device memory, which the host
    neither reads nor writes. Two kinds of host memory ops remain in a
    step, and both become device work:
      - element moves (the per-tensor sums of squares packed into one
        vector for the global norm): a `memref.store` of a value just
        loaded becomes a `memref.copy` between 0-d subviews, which
        `zero-form-kernels` makes a (deduplicated) kernel;
      - scalars computed on the device and used by compute ops (fp16's
        overflow flag and unscale factor, the clipping factor): every
        `linalg.generic` of the block that uses the loaded value, or a
        pure scalar op computed from it, takes the element as a 0-d input
        broadcast to all iterations and recomputes those scalar ops in its
        body; the buffer's free moves after the last such op.
    Loads of host-resident arguments (role `hyperparameter`: learning
    rate, step count, loss scale) stay on the host. A `linalg.generic`
    that reads a host-resident 0-d buffer (fp16's loss scale times the
    loss) gets its value instead: the host loads it before the op (before
    the loop or conditional of pure compute that holds it) and the body
    uses the value, which kernel formation passes as a kernel argument; a
    kernel cannot read host memory. Any other use of a host-resident
    buffer by a compute op, and any other load or store of device memory
    in the step, is an error at its location.
    `--simulate-gpu` runs this pass too, so the CPU checks its numerics.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::linalg::LinalgDialect"];
}

def ZeroGPUSplitReductions : Pass<"zero-gpu-split-reductions", "ModuleOp"> {
  let summary = "Reductions as parallel partials and an ordered combine";
  let description = [{
    Runs on the step functions before `zero-form-kernels`, on
    `linalg.generic`s and on `linalg.reduce`s (generalized first: bias
    gradients). A reduction with only reduction loops (a loss, a gradient's sum of
    squares for the global norm) would run in one GPU thread, and one with
    R rows (its parallel iterations: a cross-entropy over a large
    vocabulary, the statistics of a softmax or a layer norm) in R threads,
    each reducing a whole row.

    Its reduction loops are first collapsed into one (upstream's
    `collapseOpIterationDims`) where they are consecutive loops that every
    operand indexes in order as dimensions contiguous in memory, or not at
    all: a sum of squares over a [1600, 6400] gradient is one loop of
    10,240,000 iterations, and rows over a kept unit dimension and E
    features one loop of E. The iterations keep their order.

    The reduction loop that allows the most partials (its extent E, and
    at most its reduction's iterations over 32; the outermost of those
    that allow as many) is cut into P partials, W wanted: `min(max-partials,
    T / 32)` for a full reduction of T iterations and, for R > 1,
    `min(max-partials, ceil(row-threads / R), E / 32)` (enough partials
    for `row-threads` threads, each reducing at least 32 iterations). A
    sum over [8, 1024] tokens whose loops do not collapse (an input
    broadcast over the 8) splits the 1024.

    When that loop walks the contiguous (innermost, unit-stride) dimension
    of every input it indexes, the partials are interleaved: P = W
    (rounded to whole warps of 32 for rows with E >= 1024), or the largest
    count down to W / 2 (in whole warps where W is) that divides E, so
    that no iterations are left; partial p reduces iterations p, p + P,
    ... of the first `P * (E / P)`, so a warp's partials read adjacent
    elements; the inputs are expanded to [E / P, P] along that dimension,
    the loop over P comes last (x on a GPU) and the partials go to an
    [output shape, P] buffer. Otherwise (column reductions, whose rows are
    x already: bias and layer-norm parameter gradients, sums over tokens
    for each feature) W is `min(max-partials, ceil(column-threads / R))`,
    at most the iterations over 32: P is the fewest partials from W up to
    that bound that divide E, else E / ceil(E / W), in contiguous chunks:
    a loop over P in front of the op's loops, inputs expanded to [P,
    chunk], a [P, output shape] buffer. A column's combine reads its
    partials on one thread: at 64 partials or more it is split again, in
    chunks of the power of two nearest below the square root of their
    count (a sum over 8192 tokens of 1600 features: 256 partials, then 16
    of 16, then the output). A reduction with `row-threads` rows or more
    fills the GPU with a thread per row, but each thread then reads a row of its
    own; where its rows are contiguous and E >= 1024 it takes a warp of 32
    interleaved partials per row, so a warp reads 32 adjacent elements
    (the attention softmax's 204,800 rows of 1024 in GPT-2 XL).

    The partials' buffer starts at the combining op's neutral element; a
    second op combines the partials into the output in order with that op
    (found by upstream's `matchReduction`), and the original op reduces
    the iterations left after them. The output's `linalg.fill` right
    before the op moves right before the combine, which reads it first,
    when nothing the partials read may overlap the output: the two then
    form one kernel, and one launch. A combine over `min-iterations`
    partials or more a row is split again the same way (a full reduction of
    1.28M elements: 40,000 partials, then 1,250, then 39, then the
    output), each level in order, and so are iterations left after the
    partials that would otherwise take one thread (up to 65,535 of a full
    reduction). Sums are therefore reassociated, deterministically:
    `--simulate-gpu` runs the same order on the CPU. Reductions with fewer
    than `min-iterations` iterations, at least `row-threads` rows that are
    short or not contiguous, outputs indexed unlike each other or other
    than by parallel loops, an output with several combining ops (or one
    that reads another output's accumulator), or a split loop used in an
    index expression are left alone, and so are reductions over rows
    whose body reads its loop indices (`linalg.index`). A full reduction
    that does (the loss's sum over tokens, which gathers each token's
    target logit) is split, its body reading the original loop's indices:
    the split loop's rebuilt from the partial and the chunk's iteration,
    the tail's offset past the partials.

    Two consecutive column reductions to split alike (the same loops and
    the same partials), each with outputs indexed alike, that read a
    common buffer (one value, or views of one type at one place of one
    buffer) become one op with the outputs of both, read once: a layer
    norm's backward sums dy and dy * x-hat over the tokens for each
    feature, and reads dy once instead of twice. The second moves up to
    the first with its fills and the views and allocations they use, when
    neither touches the other's outputs and nothing in between writes what
    the second reads or touches its outputs. Each output keeps its
    partial buffer (its fill right before the stage, which initializes
    both in its threads), its own combine with its fill, and the order of
    its sums: its values are those of the two split apart.

    A column reduction that reads, through the buffer itself or its
    collapse, the whole output of an elementwise op before it (a GELU's
    backward, summed over the tokens for the MLP bias's gradient) computes
    that op too: its partial stage gets the op's inputs (in its loops:
    each indexes every dimension the reduction keeps, and the collapsed
    ones all in order or by constant zeros) and the op's buffer as a
    written output, which each iteration writes an element of as it adds
    the element up. The buffer is written once and not read back. Left
    apart: anything in between that touches the buffer or writes the op's
    inputs (their deallocations move after the reduction), a reduction
    reading the buffer twice or writing the op's inputs, and an op reading
    a row's statistic (which a row group reads beside its rows).
  }];
  let options = [
    Option<"maxPartials", "max-partials", "int64_t", "65536",
           "Most partial results (parallel chunks) per row">,
    Option<"minIterations", "min-iterations", "int64_t", "1024",
           "Fewest iterations of a reduction worth splitting">,
    Option<"rowThreads", "row-threads", "int64_t", "65536",
           "Threads a split row reduction aims for; reductions with at "
           "least this many rows split only into a warp per long "
           "contiguous row">,
    Option<"columnThreads", "column-threads", "int64_t", "262144",
           "Threads a split column reduction (partials not interleaved) "
           "aims for">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def ZeroGPUOnlineSoftmax : Pass<"zero-gpu-online-softmax", "ModuleOp"> {
  let summary = "A softmax's row maximum and sum of exponentials in one pass";
  let description = [{
    Runs after `zero-gpu-split-reductions`. A softmax's statistics are two
    reductions over the same rows: a maximum M (from -inf or the lowest
    finite value) and then a sum of `exp(x - M)` (from 0) whose `x` is
    computed from the same inputs, op for op, as the maximum's (with
    `recompute-shared`, the scale and mask are in both). They become one
    reduction with two outputs, a running maximum m and a sum s relative
    to it: `m' = max(m, x)`, `s' = s * exp(m - m') + exp(x - m')` (s
    counts as 0 while m is -inf, and is 0 while m' is), which reads the
    rows once instead of twice. When the split made partials of both,
    each partial keeps its own maximum; the maxima are combined as
    before, and the sums are combined rescaled, `S = sum of s_p *
    exp(m_p - M)` (0 for a partial whose maximum is -inf). A tail the
    split left after the partials keeps its maximum after the maxima's
    combine and its sum after the sums' combine, which rescales to the
    maximum with the tail's in it; the maximum may be read through a view
    of all of it. A maximum from
    -inf leaves the sum without a fill (its start is never read); one
    from the lowest finite value keeps the sum's zero fill. The values
    differ from the two-pass sum by rounding only. Left alone: a sum whose
    maximum is not computed alike, whose inputs something writes in
    between, or whose output something else uses in between.
  }];
  let dependentDialects = ["mlir::math::MathDialect"];
}

def ZeroGPURowGroups : Pass<"zero-gpu-row-groups", "ModuleOp"> {
  let summary = "A row reduction and the ops after it over its rows as one "
                "launch";
  let description = [{
    Runs on the step functions after `zero-gpu-online-softmax` and before
    `zero-gpu-group-launches`. A softmax or a layer norm is a reduction
    over rows (split into a warp of partials a row, then combined) and an
    op that reads the rows again with the statistics: separate launches,
    the second reading the rows from memory again.

    A group starts at a linalg reduction at the top of a step function
    whose first R loops are parallel (its rows), whose last parallel loop
    a warp's 32 lanes can split (`zero::cuda::rowLane`: the split's
    interleaved partials), and whose rows times 32 are at least
    `min-threads` (a block takes its rows through every op on a warp a
    row, so fewer rows would leave the device idle: a column sum's
    partials, a bias gradient). The ops that follow it over the same rows
    join it in a `zero.row_group` (with the fills that initialize
    them): linalg ops on statically shaped buffers, no GEMM, writing only
    their outputs, whose first R loops are parallel with the same extents
    and which every operand indexes as whole results or not at all, and
    whose bodies read no loop index. Views, constants and allocations may
    lie between them (they stay before the group); deallocations there move
    after it. An op joins only when every buffer it and an earlier member
    share, one writing it (`zero::mayOverlap`), is the same value to both,
    indexed by the rows at its leading dimensions: a block that takes some
    rows through each op in turn then computes what the launches did.
    The run stops at the first op that cannot join; a group is formed when
    some member uses what an earlier one writes. The module's
    `zero.kernels` gets `row_groups` and `row_grouped` (ops in groups,
    fills not counted).
  }];
  let options = [
    Option<"minThreads", "min-threads", "int64_t", "65536",
           "Fewest threads (rows times 32) a row group runs on (0: no "
           "minimum)">
  ];
  let dependentDialects = ["mlir::zero::ZeroDialect"];
}

def ZeroGPUMapAttention : Pass<"zero-gpu-map-attention", "ModuleOp"> {
  let summary = "zero.attention and zero.attention_grad on buffers as "
                "tensor-core kernels that never store the scores";
  let description = [{
    Runs on the kernel functions before `zero-gpu-map-kernels`. Each
    `zero.attention` (bf16 or f16; depth a multiple of 16 up to 128;
    queries and keys multiples of 64; contiguous last dimensions; at most
    65535 (batch, head) pairs) in a kernel's body becomes a block forall
    over (64-row query blocks, (batch, head) pairs) holding a forall of
    128 threads: four warps of 16 query rows. A warp loads its queries'
    A fragments once (`nvgpu.mma.sync` m16n8k16: lane `4g + t`, register
    r: row `g + 8 (r % 2)`, columns `2t + 8 (r / 2)` and the next) and
    walks the keys 64 at a time, up to its block's diagonal when causal.
    Each step computes 8 tiles of 8 keys' scores (B: key `8j + g`, depth
    `2t + 8r` and the next), scales them, masks keys past the row when
    causal, and updates each row's running maximum and sum (over the
    quad's four lanes, two `gpu.shuffle xor`), rescaling the sum and the
    output accumulators by `exp(old - new)`. The step's probabilities,
    `exp(s - max)` in f32 rounded to the element type, are the A operand
    of their product with the values as they lie in the score tiles'
    registers (two tiles a 16-key step); the values' B fragments are
    keys `2t + 8r` and the next at column `8n + g`. At the end each
    accumulator is divided by its row's sum and rounded, and the quad's
    first lane writes the row's `max + log(sum)`. The scores and
    probabilities never reach memory.

    Each `zero.attention_grad` (the same limits) becomes one launch whose
    grid's x is the key blocks and then the query blocks of 64, y the
    pairs. A key block's warp loads its 16 keys' and values' A fragments
    once and walks the query blocks that see them (from its diagonal when
    causal), carrying depth/8 tiles each of dV and dK: the transposed
    scores `K Q^T` and probability gradients `V dO^T` (8 tiles of 8
    queries; B: query `8j + g`, depth `2t + 8r` and the next), the
    probabilities `exp(scale s - lse[query])` (0 where the query comes
    before the key) and `ds = p (dp - delta[query])`, then, as the
    forward's values, `dV += P^T dO` and `dK += dS^T Q` with the rounded
    tiles as A operands. A query block's warp loads its queries' and
    dout's fragments and its rows' lse and delta, walks the key blocks it
    sees (to its diagonal when causal) and sums `dQ += dS K` alike. dK
    and dQ are stored times the scale. No block reads what another
    writes: the sums need no atomics and their order is fixed (the
    probabilities and their gradients are computed twice, once for each
    side). Anything else is an error naming why.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::nvgpu::NVGPUDialect",
                           "mlir::vector::VectorDialect",
                           "mlir::ub::UBDialect",
                           "mlir::affine::AffineDialect",
                           "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def ZeroGPUBF16MmaToNVVM : Pass<"zero-gpu-bf16-mma-to-nvvm"> {
  let summary = "Warp matrix products on bf16 to nvvm.mma.sync";
  let description = [{
    Runs in the device code before `convert-nvgpu-to-nvvm`, which deduces
    no PTX type for bf16 operands. Each `nvgpu.mma.sync` of shape
    m16n8k16 with bf16 A and B (`vector<4x2xbf16>`, `vector<2x2xbf16>`)
    and f32 accumulators (`vector<2x2xf32>`) becomes `nvvm.mma.sync` with
    A row-major and B column-major, each row of an operand one 32-bit
    register holding its two values (the first in the low half), as PTX
    packs them; the four accumulators come back as the result's rows.
    Other products are left to `convert-nvgpu-to-nvvm`.
  }];
  let dependentDialects = ["mlir::NVVM::NVVMDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::vector::VectorDialect"];
}

def ZeroGPUGuardLoads : Pass<"zero-gpu-guard-loads", "ModuleOp"> {
  let summary = "Load only what the side a select picks needs";
  let description = [{
    Runs on the kernels' loops (after `convert-linalg-to-loops`, before
    `zero-gpu-outline-kernels`; on the CPU with `--simulate-gpu` too). A
    loop body lowered from a linalg op loads every input before its
    computation, and a select then drops one side: a causal attention's
    masked scores are `select(mask, s * scale, -inf)`, so a thread whose
    mask element is false loads a score it never uses, and the launch
    reads the whole upper triangle of the scores for nothing.

    For each `arith.select` on an i1 condition, the ops of its block that
    compute one side and nothing else (pure ops and loads, no regions,
    `zero::exclusiveSelectSlice`) are guarded when they load something and
    nothing between the first of them and the select writes memory. They
    move to just before the select, and each of their loads reads the
    buffer's first element (indices selected by the condition) where the
    other side is picked: one address for all those threads, which the
    cache serves, so the side's elements are not read from memory, and
    without a branch, so the loads of a thread's loop still go out
    together (`zero-gpu-batch-loads`; a branch per load made each wait
    for the last). The side's arithmetic runs on what is loaded, and the
    select picks. Where that arithmetic includes an op that may not run on
    any loaded value (not speculatable: an integer division by it), both
    sides move into an `scf.if` on the condition instead, which yields the
    side's value in the select's place.
    The timeline prices the reads this saves: an input whose block
    argument feeds one side of a select whose condition is a constant
    mask's element is read in the mask's true (or false) share
    (`zero::guardedReadShare`). The module's `zero.kernels` gets
    `gpu_guarded_selects` (`--time-report` prints it).
  }];
  let dependentDialects = ["mlir::scf::SCFDialect"];
}

def ZeroGPUBatchLoads : Pass<"zero-gpu-batch-loads", "ModuleOp"> {
  let summary = "Unroll each thread's serial loops and issue a batch of "
                "loads at once";
  let description = [{
    Runs on the kernels' loops after `zero-gpu-guard-loads` (before
    `zero-gpu-outline-kernels`; on the CPU with `--simulate-gpu` too). A GPU
    thread issues its instructions in order and waits for a load at the
    value's first use, so a loop that loads an element and adds it into a
    running sum waits one memory latency per iteration: a cross-entropy's
    partial over 1570 logits made 1570 round trips one after another.

    Each innermost `scf.for` with constant bounds and at least two
    iterations whose body loads from a buffer nothing in the body writes
    is unrolled by `batch` (fewer when it has fewer iterations; the
    iterations left over form one more iteration of as many copies). Each
    unrolled body is reordered: first the ops that compute or only load
    from such buffers (a `memref.load`, or an `scf.if` holding nothing
    else) and need no other op of the body, by how many loads they wait
    for one after another (the batch's loads with their index arithmetic,
    then what needs a loaded value, such as a load at an index selected by
    a loaded mask), in their order within each level; then the rest, in
    its order. The batch's loads so come before the first iteration's
    stores and are in flight together. A load moves over a
    write only where the two buffers cannot overlap: views of one buffer
    with disjoint bytes (`zero::mayOverlap`), or two roots one of which is
    an allocation or an argument that overlaps no other at any call
    (`zero::noAliasArguments`, or `llvm.noalias`), or two different
    globals. A loop whose body has an op of unknown effects, or a write
    that names no buffer, is left alone. Arithmetic and stores keep their
    order: the values are the same. The timeline prices a launch's memory
    latency by these batches (`--report=timeline` with `--target=cuda`).
    The module's `zero.kernels` gets `gpu_batched_loops`.
  }];
  let options = [
    Option<"batchSize", "batch", "int64_t", "::mlir::zero::cuda::kLoadBatch",
           "Iterations whose loads a thread issues together (1: none)">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def ZeroGPUGroupLaunches : Pass<"zero-gpu-group-launches", "ModuleOp"> {
  let summary = "Independent kernel roots as one launch each wave";
  let description = [{
    Runs on the step functions after `zero-gpu-split-reductions` and before
    `zero-form-kernels`. A GPU launch costs microseconds however little it
    computes: the global norm's per-tensor sums of squares, split into
    partials and combines, are hundreds of launches of a few microseconds
    each, and none depends on another tensor's.

    In each straight run of a block's ops that are linalg ops on buffers
    (no GEMM), allocations, deallocations, views and constants, the linalg
    ops (each with the `linalg.fill` right before it that initializes it)
    are put in waves: an op's wave is one more than the latest wave of an
    earlier op it depends on (one writes what the other reads or writes,
    `zero::mayOverlap`, so arguments count as possibly the same buffer).
    The run is re-emitted wave by wave, in program order within a wave,
    each op after what it uses, each deallocation once every op of the run
    that uses its buffer is out; a wave of two ops or more becomes a
    `zero.launch_group`, which `zero-form-kernels` outlines as one kernel
    and `zero-gpu-map-kernels` maps to one launch. Sums keep their order:
    the values are the same. Buffers a wave uses are live from the wave's
    start (partials of one wave live together). Records `launch_groups`
    and `grouped_launches` in the module's `zero.kernels`.
  }];
  let dependentDialects = ["mlir::zero::ZeroDialect"];
}

def ZeroGPUFatBinary : Pass<"zero-gpu-fat-binary", "ModuleOp"> {
  let summary = "The cubins of a gpu.binary as one fat binary";
  let description = [{
    Runs after `gpu-module-to-binary{format=bin}` with several NVVM
    targets. The toolkit's `fatbinary` packs the cubins into one fat
    binary, which becomes the binary's first object (the one the embedding
    selects), so the CUDA driver loads the cubin of the GPU present: one
    build for several architectures. The cubins stay after it. A binary
    with one cubin is left alone; objects that are not NVVM cubins are an
    error.
  }];
  let options = [
    Option<"toolkit", "toolkit", "std::string", [{""}],
           "CUDA toolkit folder (bin/fatbinary)">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::NVVM::NVVMDialect"];
}

def ZeroGPUArena : Pass<"zero-gpu-arena", "ModuleOp"> {
  let summary = "Device buffers of each step at static offsets of one arena";
  let description = [{
    Runs on the step functions after kernel formation and memory tracking.
    Allocations and deallocations are replayed in program order (a loop
    body once: it frees what it allocates), which gives each buffer its
    lifetime, and the arena takes the smallest of four layouts, offsets
    aligned to `alignment` bytes: first fit in program order (the lowest
    offset free when the buffer is allocated), and offline placements at
    the lowest offset free of the placed buffers whose lifetimes meet the
    buffer's, in three orders: the buffers live at the moment most bytes
    are, largest first, then the rest largest first; largest first; and
    largest size x lifetime first. Allocations become
    `memref.view`s of the arena, whose base the step gets on entry from
    `zero_rt_cuda_arena(bytes)`; deallocations disappear. Constant globals
    the step reads get blocks of their own, before any other, filled from
    the host copy by `gpu.memcpy`s on the compute stream only when
    `zero_rt_cuda_arena_claim` says the arena may have lost them (a new
    arena, or another step used it since); the step claims it under the
    address of a global of its own, `__zero_arena_owner_<function>`.

    The layout is added to the module's `zero.memory` entry for the
    function as `arena` (bytes, alignment, and per buffer its offset,
    bytes, category and node, constants first, then in the order the step
    allocates), which plan.json carries.
    A dynamically shaped allocation, an allocation inside a loop or
    conditional that is not freed in the same region, and a deallocation
    of anything but an allocation are errors.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "256",
           "Alignment of every block in bytes (a power of two)">
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect"];
}

def ZeroGPURuntimeCalls : Pass<"zero-gpu-runtime-calls", "ModuleOp"> {
  let summary = "The step's GEMMs, collectives and launches on the CUDA "
                "runtime's streams";
  let description = [{
    Runs on the host side after the kernels became `gpu.launch_func`s.
    GEMM calls (`zero_rt_sgemm`, `zero_rt_gemm16`, `zero_rt_dgemm`) become the cuBLAS ones
    of the CUDA runtime, whose status goes to `zero_rt_cuda_check_gemm`;
    `zero_rt_comm_start` / `zero_rt_comm_wait` become the NCCL ones, where
    a start makes the communication stream wait for the compute stream
    (an event) and a wait makes the compute stream wait for the collective
    (an event), so the schedule's overlap is the GPU's and the host never
    blocks. Every `gpu.launch_func` becomes asynchronous on the compute
    stream (the token of a `gpu.wait async`, which the runtime's
    `mgpuStreamCreate` answers with the compute stream), so launches are
    queued in program order with the GEMMs and no launch synchronizes.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::arith::ArithDialect"];
}

def ZeroGPUTraceNodes : Pass<"zero-gpu-trace-nodes", "ModuleOp"> {
  let summary = "Name each launch and GEMM of the step by the model's node";
  let description = [{
    Runs on the host code after `zero-gpu-runtime-calls`. Kernels are
    shared between nodes (one layer norm's kernel for every layer), so a
    kernel's name does not say which node a launch computes, and a GEMM's
    call says only its shape. Before each call of a kernel function
    (`zero.kernel`) or a cuBLAS GEMM of the CUDA runtime whose node (the
    first name in its location, as the timeline names its events) differs
    from the last one set in its block, a call of `zero_rt_cuda_node`
    passes the node's name (a private constant global, one per name), or
    0 where the location names none. Each block starts with none known:
    its first launch sets its own. `zero-run --trace` then gives each
    kernel's and GEMM's interval the node as `args.node`, as
    `--report=timeline` does for the predicted step.
  }];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

#endif
