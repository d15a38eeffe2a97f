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

#endif
