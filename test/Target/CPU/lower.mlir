// The whole CPU lowering: TOSA in, LLVM dialect out, with the C ABI entry,
// matmuls through the runtime's BLAS, erf as a polynomial instead of libm's
// erff, and no calls into MLIR's runner libraries.
// RUN: zero-opt %s --zero-cpu-lower | FileCheck %s

// CHECK-DAG: llvm.func @zero_rt_sgemm(
// CHECK-DAG: llvm.func @main_entry(%{{.*}}: !llvm.ptr)
// CHECK-NOT: memrefCopy
// CHECK-NOT: tosa.
// CHECK-NOT: {{^ *}}linalg.
// CHECK-NOT: @erff
func.func @main(%a: tensor<1x3x4xf32>, %b: tensor<1x4x5xf32>) -> tensor<1x3x5xf32> attributes {zero.entry} {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %m = tosa.matmul %a, %b, %zp, %zp : (tensor<1x3x4xf32>, tensor<1x4x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x5xf32>
  %e = tosa.erf %m : (tensor<1x3x5xf32>) -> tensor<1x3x5xf32>
  return %e : tensor<1x3x5xf32>
}
