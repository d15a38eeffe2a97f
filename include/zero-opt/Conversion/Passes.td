//===- Passes.td - zero-opt conversion passes --------------*- tablegen -*-===//
#ifndef ZERO_OPT_CONVERSION_PASSES
#define ZERO_OPT_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ZeroLinalgToBLAS : Pass<"zero-linalg-to-blas", "ModuleOp"> {
  let summary = "Call the runtime's BLAS kernels for f32 matmuls";
  let description = [{
    Replaces `linalg.matmul` and `linalg.batch_matmul` on f32 memrefs with
    calls to `zero_rt_sgemm_batched`, which the runtime implements with
    OpenBLAS (CPU). Operands with a non-contiguous layout are copied first.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def ConvertZeroToRuntime : Pass<"convert-zero-to-runtime", "ModuleOp"> {
  let summary = "Collectives and rank queries on buffers as runtime calls";
  let description = [{
    After bufferization, `zero.all_reduce`, `zero.reduce_scatter` and
    `zero.all_gather` on contiguous buffers become calls to
    `zero_rt_collective(kind, dtype, send, recv, count)` and `zero.rank` a
    call to `zero_rt_rank()`. The runtime's communicator (MPI on the CPU)
    runs them and counts the bytes each rank sends.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

#endif
