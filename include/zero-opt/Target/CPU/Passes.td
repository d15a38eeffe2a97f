//===- Passes.td - CPU target passes -----------------------*- tablegen -*-===//
#ifndef ZERO_OPT_TARGET_CPU_PASSES
#define ZERO_OPT_TARGET_CPU_PASSES

include "mlir/Pass/PassBase.td"

def ZeroCPUFuseElementwise : Pass<"zero-cpu-fuse-elementwise"> {
  let summary = "Elementwise fusion that leaves matmuls to BLAS";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` with two differences. Reshapes
    are not folded into (nor producers fused with) contractions such as
    `linalg.batch_matmul`: folding an expand_shape into a batch matmul turns
    it into a higher-rank `linalg.generic` that `zero-linalg-to-blas` no
    longer recognizes, and the GEMM then runs as scalar loops. An
    elementwise op whose result is collapsed and then expanded (tosa's
    [1, B*T, N] -> [B*T, N] -> [B, T, N] after a batch-1 GEMM; upstream
    folds an expand or a collapse alone) runs on its operands reshaped the
    same way when none of them is another elementwise op's result, so that
    a 16-bit GEMM's rounding fuses with the bias add that reads it.
    After the first fusion, sums over the classes of a one-hot select (a
    loss's pick and its gradient's one-hot sum) become gathers of the
    label's class (`zero-gather-one-hot-reductions`), and fusion runs
    again, so that the one-hot tensor fuses into the one user it keeps
    (with the part below on, through expands by unit dimensions too).

    And an elementwise producer with several users is computed again in
    each of them instead of written once and read back, when every user is
    a generic other than a GEMM that can take it in (a reduction reading
    it through an expand_shape that only adds unit dimensions reads the
    source instead), it has at most 4 users and 16 body ops, it reads no
    more bytes at full size (broadcast operands aside) than it writes, so
    that no user reads more than before. A bf16 or f16 GEMM's f32 product
    from a zero fill that the producer only rounds to the GEMM's input type
    counts at 16 bits: `zero-round-matmul-results`, later, lets the GEMM
    write it rounded when every user only rounds it, as every user the
    producer is computed in does (an MLP's bias add, read by its GELU and
    by the GELU's backward). A 16-bit result counts too: its
    ops are 16-bit ops in each user's loop, rounded there as where it was
    stored, since the lowering keeps every 16-bit op's rounding
    (`zero-keep-16bit-rounding`). A softmax's masked scores and
    exponentials, feeding its max, its sum and its normalization, are never
    stored: three loops reading the scores instead of five passes writing
    two intermediates. Fusion makes new shared producers, so recomputing
    and fusing repeat for up to four rounds. With this part on, reductions
    are generalized first and keep their kept axis (an expand_shape by unit
    dimensions) outside them: folded in, it is a loop only the output
    indexes, and upstream fuses no producer into such a loop nest; and
    only GEMMs (`zero::getGemmLoops`) and convolutions refuse producers,
    so that a row's dot product (a bf16 softmax backward's sum of dP x P)
    reads the bf16 probabilities and the f32 gradient itself instead of
    two widened f32 copies. This part is on for the CUDA
    target (and `--simulate-gpu`) and off for the CPU target, where it
    bought no measurable time on the bench GPT. Either way a sum keeps its
    order whatever producers are fused into it (a split's order on the
    GPU, `zero-cpu-lane-reductions` on the CPU).
  }];
  let options = [
    Option<"recomputeShared", "recompute-shared", "bool", "false",
           "Compute shared elementwise producers in each user's loop">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::affine::AffineDialect"];
}

def ZeroCPUPrepareEntries : Pass<"zero-cpu-prepare-entries", "ModuleOp"> {
  let summary = "Make step functions internal ahead of bufferization";
  let description = [{
    Functions marked `zero.entry` become private so that bufferization may
    treat their signatures freely, list their in-place results
    (`zero.updates`) in `zero.inplace_results`, and record in
    `zero.abi_buffers` how many buffers their C ABI entry will take. They
    are marked `zero.disjoint_arguments`: the entry's callers pass buffers
    that share no byte (the runtime's own do not), so buffer analyses
    (`zero::mayOverlap`) may tell two arguments apart.
  }];
}

def ZeroCPUSplitDeallocs : Pass<"zero-cpu-split-deallocs"> {
  let summary = "Split off the deallocations that alias nothing else";
  let description = [{
    Runs between `ownership-based-buffer-deallocation` and
    `buffer-deallocation-simplification`. A straight-line step ends in one
    `bufferization.dealloc` of every buffer it allocated, and the
    simplification compares its memrefs pairwise, which grows with the
    square of the step's length. Each memref deallocated unconditionally
    whose allocation (found through view-like ops) is a `memref.alloc` that
    no other memref and no retained value of the op can stem from gets a
    `bufferization.dealloc` of its own; what remains is simplified as
    before. When any memref or retained value comes from something other
    than an allocation, a view or a block argument (a loop result, a call),
    the op is left whole.
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect"];
}

def ZeroCPUSplitEmptyTensors : Pass<"zero-cpu-split-empty-tensors"> {
  let summary = "Give every use of a tensor.empty its own copy";
  let description = [{
    Runs right before one-shot bufferization. CSE merges identical
    `tensor.empty` ops, so one empty tensor ends up as the destination of
    unrelated ops (for instance every all-gather of same-shaped
    parameters); bufferization then writes them all into one buffer that
    lives from the first write to the last read of any of them. A copy of the
    `tensor.empty` right before each of its users gives each destination
    its own allocation, made where it is first written and freed after its
    own last use. A `linalg.fill` of an empty tensor with several users
    (a reduction's zero or -inf accumulator, merged by CSE) is split the
    same way, so no use writes into a copy of a shared filled buffer.
    A splat tensor constant that an op writes into (a destination, a loop's
    initial value, an insertion's destination: the zeros a scatter-add
    starts from) becomes a fill of an empty tensor at each such use; as a
    constant it would bufferize to a global of the whole tensor, stored in
    the step library and copied into a buffer at every use.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::linalg::LinalgDialect"];
}

def ZeroCPUDropInPlaceResults
    : Pass<"zero-cpu-drop-inplace-results", "ModuleOp"> {
  let summary = "Drop step results that bufferization updated in place";
  let description = [{
    After bufferization, a result listed in `zero.inplace_results` (set by
    `zero-cpu-prepare-entries` from `zero.updates`) that is its own argument,
    possibly through reshaping views of the whole buffer that elementwise
    fusion introduces, has been updated in place; it is dropped so the caller
    keeps a single buffer. Unlike upstream
    `drop-equivalent-buffer-results`, this looks through
    `memref.collapse_shape`, `memref.expand_shape` and `memref.cast`.
  }];
}

def ZeroCPUMemoryReport : Pass<"zero-cpu-memory-report", "ModuleOp"> {
  let summary = "Record each step's memory use, simulated on the buffers";
  let description = [{
    Runs after deallocation insertion (and `zero-release-early`). For every `zero.entry` function it
    sums the argument buffers by role and by memory category, and replays
    the function's `memref.alloc` / `memref.dealloc` sequence in program
    order (loop bodies once: each iteration frees what it allocates), each
    allocation counted in the category its location's `#zero.buffer`
    carries (`other` without one). It records the peak of each category, the
    peak of all together with the op and phase where it occurs and each
    category's bytes at that point, and the model states: parameter and
    optimizer-state arguments, and the gradient bytes live when the
    optimizer phase starts. The result is the module attribute
    `zero.memory`, keyed by function name, so it survives lowering.
  }];
}

def ZeroCPUTrackMemory : Pass<"zero-cpu-track-memory", "ModuleOp"> {
  let summary = "Report each temporary's allocation and release to the "
                "runtime";
  let description = [{
    After each `memref.alloc` of a `zero.entry` function or of a kernel
    (`zero.kernel`: a loop that allocates for each iteration), calls
    `zero_rt_mem_alloc(category, bytes)`; before each `memref.dealloc`,
    `zero_rt_mem_free` with the same figures. The runtime's counters then
    follow the same sequence `zero-cpu-memory-report` simulates. With
    `kernels=false` kernels are left alone (on a GPU their buffers are
    per-thread stack buffers, not the step's memory).
  }];
  let options = [
    Option<"kernels", "kernels", "bool", "true",
           "Count the allocations inside kernels too">
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::arith::ArithDialect"];
}

def ZeroCPUEntryPoint : Pass<"zero-cpu-entry-point", "ModuleOp"> {
  let summary = "Add the C ABI entry point of each compiled step";
  let description = [{
    Runs on bufferized IR where each `zero.entry` function takes only
    statically shaped, identity-layout memrefs (results already turned into
    out parameters). Adds `void <name>_entry(void **buffers)`: the runtime
    passes one pointer per buffer, in order, and the entry rebuilds the
    memref descriptors and calls the step. This keeps the runtime
    independent of MLIR's memref calling convention.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ZeroCPUExpandStridedCopies
    : Pass<"zero-cpu-expand-strided-copies", "func::FuncOp"> {
  let summary = "Turn non-contiguous memref.copy into linalg.copy";
  let description = [{
    The LLVM lowering turns contiguous `memref.copy` into a memcpy but calls
    a library function (`memrefCopy`) for strided views. Compiled steps must
    not depend on MLIR's runner libraries, so strided copies become
    `linalg.copy`, which later lowers to loops.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def ZeroCPUApproximateMath
    : Pass<"zero-cpu-approximate-math", "func::FuncOp"> {
  let summary = "exp, tanh and erf on f32 as polynomials that vectorize";
  let description = [{
    A call to libm inside a loop keeps LLVM from vectorizing it. The f32
    forms of `math.exp`, `math.tanh` and `math.erf` become upstream's
    polynomial approximations (range reduction, a minimax
    polynomial, bit manipulation of the exponent), plain arithmetic that
    vectorizes with the loop around it. Results of exp that would be
    subnormal flush to zero. `math.log` and f64 keep libm (upstream's log
    approximation is wrong for subnormal input). The error against libm is
    measured by test/e2e/math_accuracy.py.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}


def ZeroCPULaneReductions
    : Pass<"zero-cpu-lane-reductions", "func::FuncOp"> {
  let summary = "Deal float reductions into lanes combined in a fixed order: "
                "they vectorize, and round alike in every kernel";
  let description = [{
    A floating-point sum in loop order is a chain of dependent additions.
    LLVM vectorizes it only if allowed to reorder it (`reassoc`), and then
    in an order its cost model picks from the loop's body: the same sum
    fused into two kernels (a rematerialized producer, another fusion)
    could round differently.

    On a linalg op on buffers whose innermost loop of more than one
    iteration is a reduction of at least 2 x `lanes` iterations, and whose
    outputs each fold one value into their accumulator (addf, mulf,
    maximumf, minimumf, maxnumf, minnumf), the op becomes loops: the
    output elements outermost; for each, `lanes` accumulators starting
    from the combiner's identity (-0 for sums), element i of that loop
    going to lane i mod `lanes` (the other reduced loops around it, in
    their order, the tail into lanes 0, 1, ...), then halves folded onto
    halves (lane i with i + lanes/2; with an odd count the last lane a
    level later), and the output's value folded with the result last. A
    body of elementwise ops on 32/64-bit types becomes vector ops on the
    lanes (one vector load where the elements are consecutive); others run
    the same lanes as scalars. No fast-math flag is set: the order depends
    only on the reduction's extents. Other reductions stay in loop order.
  }];
  let options = [
    Option<"lanes", "lanes", "int64_t", /*default=*/"16",
           "Accumulators per output element">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def ZeroCPUKernelNoAlias : Pass<"zero-cpu-kernel-noalias", "ModuleOp"> {
  let summary = "Mark kernel buffer arguments that never alias another "
                "argument as `llvm.noalias`";
  let description = [{
    Without alias information, LLVM keeps a reduction's accumulator in
    memory, storing it on every iteration in case the output overlaps an
    input, and vectorizes loops only behind run-time overlap checks. For
    each `zero.kernel` function, a memref argument is marked `llvm.noalias`
    when, at every call, the buffer it is a view of differs from that of
    every other memref argument, and at least one of the two is an
    allocation of the caller (function arguments of the step may alias
    each other as far as this pass knows; an in-place op passes the same
    buffer twice and is left alone). convert-func-to-llvm drops attributes
    of arguments that expand into several (a memref descriptor), so the
    kernel also records the LLVM parameters concerned, the descriptors'
    aligned pointers, in `zero.noalias_params`, for `zero-apply-noalias`.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ZeroCPUBF16MemoryAsBits : Pass<"zero-cpu-bf16-memory-as-bits"> {
  let summary = "bf16 loads and stores as their 16 bits";
  let description = [{
    Runs on the LLVM dialect after `zero-cpu-expand-bf16`, which leaves
    bf16 values only loaded, stored and bitcast to and from `i16`. A store
    of a value bitcast from `i16` stores the `i16`; a bf16 load that is
    only bitcast to `i16` or stored becomes an `i16` load. Left as bf16,
    LLVM's combiner moves the bitcasts through selects (the NaN case of a
    rounding) and the vectorizer legalizes the resulting bf16 vectors
    through f32 and `__truncsfbf2`, which Debian 12's libgcc lacks.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ZeroCPUExpandBF16 : Pass<"zero-cpu-expand-bf16"> {
  let summary = "bf16 conversions as integer arithmetic";
  let description = [{
    `arith.extf` from bf16 becomes a shift and `arith.truncf` to bf16 a
    round to nearest even on the bits (upstream's bf16 expansion), so
    that a step with bf16 values runs on any x86-64: LLVM lowers an
    `fptrunc` to bfloat to `vcvtneps2bf16` only where the CPU has
    AVX512-BF16 and to `__truncsfbf2` elsewhere, which the system's
    libgcc lacks. Only these two ops are rewritten.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

#endif
