// RUN: zero-opt %s --zero-linalg-to-blas --cse --split-input-file | FileCheck %s

// bf16 A and B into f32 C: the 16-bit call with A's type (3, bf16) and C's
// (0, f32), accumulating onto C.
// CHECK-LABEL: func.func @bf16_into_f32
// CHECK-DAG: %[[BF16:.*]] = arith.constant 3 : i32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: call @zero_rt_gemm16(%[[BF16]], %[[F32]], {{.*}}, %[[ONE]]) : (i32, i32, i64,
func.func @bf16_into_f32(%a: memref<3x4xbf16>, %b: memref<4x5xbf16>, %c: memref<3x5xf32>) {
  linalg.matmul ins(%a, %b : memref<3x4xbf16>, memref<4x5xbf16>) outs(%c : memref<3x5xf32>)
  return
}
// CHECK: func.func private @zero_rt_gemm16(i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)

// -----

// A rounded matmul: C of A's type (2, f16), written without being read;
// B read transposed through its map (strides along k, then n).
// CHECK-LABEL: func.func @rounded
// CHECK-DAG: %[[F16:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[BS:.*]]:2 = memref.extract_strided_metadata %arg1
// CHECK-DAG: %[[BK:.*]] = arith.index_cast %[[BS]]#1
// CHECK-DAG: %[[BN:.*]] = arith.index_cast %[[BS]]#0
// CHECK: call @zero_rt_gemm16(%[[F16]], %[[F16]], {{.*}}, %[[BK]], %[[BN]], {{.*}}, %[[ZERO]]) : (i32, i32, i64,
// CHECK-NOT: zero.rounded_matmul
func.func @rounded(%a: memref<3x4xf16>, %b: memref<5x4xf16>, %c: memref<3x5xf16>) {
  zero.rounded_matmul %a, %b into %c
    maps [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>,
          affine_map<(m, n, k) -> (m, n)>]
    : memref<3x4xf16>, memref<5x4xf16>, memref<3x5xf16>
  return
}
