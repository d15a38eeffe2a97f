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
    element is computed by one thread in the op's loop order.

    Ops with no parallel dimension (0-d ops, full reductions) and loops
    (the embedding gradient's scatter) run in a 1x1 forall pair mapped to
    `#gpu.block<z>` / `#gpu.thread<z>`; statically shaped allocations in
    them become stack buffers at the top of the thread's body.

    The result is the mapped kernel IR: `--target=cuda` turns each block
    forall into a launch, and `scf-forall-to-for` runs it on the CPU
    (zero-opt `--simulate-gpu`), foralls in order, which is the order the
    GPU's barriers between launches give. The number of launches (block
    foralls, over the deduplicated kernels) is added to the module's
    `zero.kernels` as `gpu_launches`.
  }];
  let options = [
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
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

    A top-level forall that is not a block forall holding exactly one
    normalized thread forall with a static count is an error.
  }];
  let options = [
    Option<"moduleName", "module-name", "std::string", [{"zero_kernels"}],
           "Name of the gpu.module that holds the device functions">
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect",
                           "mlir::arith::ArithDialect"];
}

#endif
