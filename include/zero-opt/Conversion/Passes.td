//===- Passes.td - zero-opt conversion passes --------------*- tablegen -*-===//
#ifndef ZERO_OPT_CONVERSION_PASSES
#define ZERO_OPT_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ZeroLinalgToBLAS : Pass<"zero-linalg-to-blas", "ModuleOp"> {
  let summary = "Call the runtime's BLAS kernel for f32 matmuls";
  let description = [{
    Replaces `linalg.matmul` and `linalg.batch_matmul` on static f32
    memrefs with calls to `zero_rt_sgemm`, which the runtime implements
    with OpenBLAS. Their indexing maps are the default ones, or read A or
    B transposed (`zero-fold-transposes-into-matmuls`): such an operand is
    passed with its two inner strides swapped. Each operand travels as its
    aligned base pointer, offset and batch, row and column strides (a
    rank-2 operand has batch stride 0), so views such as transposes and
    slices are passed as they are, without a copy. A `linalg.fill` of
    zeros into C right before the matmul (nothing touching memory in
    between) is dropped, and BLAS writes C without reading it.
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
