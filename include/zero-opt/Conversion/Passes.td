//===- Passes.td - zero-opt conversion passes --------------*- tablegen -*-===//
#ifndef ZERO_OPT_CONVERSION_PASSES
#define ZERO_OPT_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ZeroLinalgToBLAS : Pass<"zero-linalg-to-blas", "ModuleOp"> {
  let summary = "Call the runtime's BLAS kernels for GEMMs";
  let description = [{
    Replaces every GEMM on static memrefs with a runtime call, which the
    runtime implements with OpenBLAS: `zero_rt_sgemm` for f32 operands,
    `zero_rt_dgemm` for f64, `zero_rt_gemm16` for bf16 or f16 A and B
    accumulating into f32 C (other type mixes stay loops), and
    `zero_rt_gemm16` with a 16-bit C for `zero.rounded_matmul` (the f32
    sums rounded into C; it never accumulates). A GEMM is a
    `linalg.matmul`, `linalg.batch_matmul` or multiply-add `linalg.generic`
    whose loops are up to two batch loops (indexing all three operands), one
    m, one n and one k loop, with projected-permutation maps of any order
    (`zero::getGemmLoops`). Each operand travels as its aligned base
    pointer, offset and its strides along (batch, batch, row, column),
    read off its map and its strided metadata: 0 along a loop that does not
    index it. Transposed maps, permuted views and slices are thus passed as
    they are, without a copy. A `linalg.fill` of zeros into C right before
    the GEMM (nothing touching memory in between) is dropped, and BLAS
    writes C without reading it.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def ConvertZeroToRuntime : Pass<"convert-zero-to-runtime", "ModuleOp"> {
  let summary = "Zero collectives, waits, rank queries and bucket copies "
                "as runtime calls";
  let description = [{
    A dialect conversion (a pattern per op kind; the collectives share
    one through `CollectiveOpInterface`) that marks the zero
    collectives illegal: `zero.all_reduce_start`,
    `zero.reduce_scatter_start` and `zero.all_gather_start` on contiguous
    buffers become `zero_rt_comm_start(kind, dtype, send, recv, count,
    stream)`, whose i64 handle replaces the `!zero.request`; `zero.wait`
    becomes `zero_rt_comm_wait(handle)`; a synchronous buffer collective
    both at once; `zero.rank` becomes `zero_rt_rank()`;
    `zero.bucket_pack` and `zero.bucket_unpack` become `memref.copy`
    between views of the member and the staging buffer. The runtime's
    communicator (MPI on the CPU) runs the collectives and counts the bytes
    each rank sends. The runtime functions come from one table
    (`RuntimeFunctions.h`).
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

#endif
