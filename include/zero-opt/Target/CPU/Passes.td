//===- Passes.td - CPU target passes -----------------------*- tablegen -*-===//
#ifndef ZERO_OPT_TARGET_CPU_PASSES
#define ZERO_OPT_TARGET_CPU_PASSES

include "mlir/Pass/PassBase.td"

def ZeroCPUFuseElementwise : Pass<"zero-cpu-fuse-elementwise"> {
  let summary = "Elementwise fusion that leaves matmuls to BLAS";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` with one difference: reshapes are
    not folded into (nor producers fused with) contractions such as
    `linalg.batch_matmul`. Folding an expand_shape into a batch matmul turns
    it into a higher-rank `linalg.generic` that `zero-linalg-to-blas` no
    longer recognizes, and the GEMM then runs as scalar loops.
  }];
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
    `zero.abi_buffers` how many buffers their C ABI entry will take.
  }];
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
    own last use.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
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

def ZeroCPUBucketCollectives
    : Pass<"zero-cpu-bucket-collectives", "ModuleOp"> {
  let summary = "Fuse small collectives into flat buckets";
  let description = [{
    Runs on bufferized `zero` collectives, before `convert-zero-to-runtime`.
    In each block, consecutive reduce-scatters (and all-reduces) of a world
    size are grouped, in program order, while the elements of the members'
    whole tensors (all N parts of a reduce-scatter or all-gather) stay
    within `zero.reduce_bucket_bytes / 4` (reduce_bucket_size); all-gathers
    likewise within `zero.allgather_bucket_bytes / 4`
    (allgather_bucket_size). A bucket closes early
    when an op touches the result of one of its members. Each member's
    input is copied, where the member was (it is ready there), into a flat
    staging buffer laid out as world-size rows of per-rank parts, so that
    rank r's part of the bucket holds every member's r-th shard; one
    collective runs on the staging buffers where the last member was, and
    each member's result is copied out right before the first op that
    touches it. Staging buffers are in memory category `buffers`. The
    order is the same on every rank; the bytes each rank sends are
    unchanged.
  }];
}

def ZeroCPUScheduleCollectives
    : Pass<"zero-cpu-schedule-collectives", "ModuleOp"> {
  let summary = "Move each collective's wait to the first use of its buffers";
  let description = [{
    After `convert-zero-to-runtime`, a `zero_rt_comm_wait` follows its
    `zero_rt_comm_start`. This moves the wait down its block to just before
    the first op that reads or writes the collective's send or receive
    buffer (or a view of them), or before the terminator (waits may pass
    one another: each waits for its own collective), so that the compute in between runs while the runtime's
    communication thread carries out the collective. The order of starts,
    and so of collectives on every rank, is unchanged. Functions with
    `zero.overlap_comm = false` are left synchronous.
  }];
}

def ZeroCPUPrefetchGathers : Pass<"zero-cpu-prefetch-gathers", "ModuleOp"> {
  let summary = "Start stage-3 all-gathers ahead of use, within the "
                "prefetch budget and the live-parameter limit";
  let description = [{
    Runs after `zero-cpu-release-early`, when each buffer's deallocation
    follows its last use, so the bytes of parameter buffers (memory
    category `parameters`) live at every op are known. In each block, the
    all-gathers are taken in order; gather j starts right after the wait
    of an earlier gather j-k (taking its receive buffer's allocation and
    address computation along), for the largest k such that the gathers
    j-k+1 .. j, all then ahead of their use, hold at most
    `zero.prefetch_bytes` (stage3_prefetch_bucket_size) and the live
    parameter bytes over the moved range stay within
    `zero.max_live_parameter_bytes` (stage3_max_live_parameters). The
    order of collectives is unchanged, so it stays the same on every rank.
    A step that holds more gathered parameter bytes than the limit even
    without prefetching is an error naming the op. Functions with
    `zero.overlap_comm = false` are left alone.
  }];
}

def ZeroCPUReleaseEarly : Pass<"zero-cpu-release-early", "ModuleOp"> {
  let summary = "Free each temporary buffer right after its last use";
  let description = [{
    Runs after `buffer-deallocation-pipeline`, which frees buffers at the
    end of their block. A `memref.dealloc` of a `memref.alloc` of the same
    block moves to just after the last op of the block that uses the buffer
    or any value derived from it (views, aligned pointers, address
    arithmetic, the handle of a collective started on it, up to its wait).
    Buffers that escape the block (yielded, returned, stored) keep their
    dealloc where it is. This makes each activation, gradient and gathered
    parameter live only as long as the step needs it, which the memory plan
    then reflects.
  }];
}

def ZeroCPUMemoryReport : Pass<"zero-cpu-memory-report", "ModuleOp"> {
  let summary = "Record each step's memory use, simulated on the buffers";
  let description = [{
    Runs after deallocation insertion. For every `zero.entry` function it
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

def ZeroCPUTimelineReport : Pass<"zero-cpu-timeline-report", "ModuleOp"> {
  let summary = "Predict each step's timeline on a described machine";
  let description = [{
    Runs on the scheduled buffer-level IR (after
    `zero-cpu-schedule-collectives`). For every `zero.entry` function it
    simulates one step on one rank: compute ops in program order on one
    stream (each allocation costing `alloc_overhead`), each op costing
    `op_overhead` plus the larger of its FLOPs over
    the peak rate and its bytes over the memory bandwidth (BLAS calls at
    the `precision` peak, generated loops at `loop_flops`); each
    `zero_rt_comm_start` queues its collective on a communication stream
    (alpha-beta time: measured figures for the world size when the
    description has them, else ring or tree over the described links);
    each `zero_rt_comm_wait` makes compute wait for it. The world size is
    the function's `zero.world_size`. The result is the module attribute
    `zero.timeline`, keyed by function name: step, compute, communication
    and exposed seconds, the step without overlap, the lower bound
    max(compute, communication), FLOPs and MFU.
  }];
  let options = [
    Option<"hardware", "hardware", "std::string", "",
           "Hardware description (JSON, as in hardware/)">,
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "Peak FLOP rate the matmuls run at (a key of peak_flops)">,
  ];
}

def ZeroCPUTrackMemory : Pass<"zero-cpu-track-memory", "ModuleOp"> {
  let summary = "Report each temporary's allocation and release to the "
                "runtime";
  let description = [{
    After each `memref.alloc` of a `zero.entry` function, calls
    `zero_rt_mem_alloc(category, bytes)`; before each `memref.dealloc`,
    `zero_rt_mem_free` with the same figures. The runtime's counters then
    follow the same sequence `zero-cpu-memory-report` simulates.
  }];
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

#endif
