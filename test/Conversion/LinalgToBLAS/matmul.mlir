// RUN: zero-opt %s --zero-linalg-to-blas --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @batch
// CHECK-SAME: (%[[A:.*]]: memref<2x3x4xf32>, %[[B:.*]]: memref<2x4x5xf32>, %[[C:.*]]: memref<2x3x5xf32>)
// CHECK-DAG: %[[AP:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-DAG: %[[BP:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-DAG: %[[CP:.*]] = memref.extract_aligned_pointer_as_index %[[C]]
// CHECK: call @zero_rt_sgemm(%c2_i64, %c3_i64, %c5_i64, %c4_i64,
// CHECK-NOT: linalg.batch_matmul
func.func @batch(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>, %c: memref<2x3x5xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%c : memref<2x3x5xf32>)
  return
}
// CHECK: func.func private @zero_rt_sgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)

// -----

// A transposed view keeps its strides: the runtime maps it onto BLAS's
// transpose flag instead of copying.
// CHECK-LABEL: func.func @strided
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %[[STR:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: call @zero_rt_sgemm
func.func @strided(%a: memref<3x4xf32, strided<[1, 3]>>, %b: memref<4x5xf32>, %c: memref<3x5xf32>) {
  linalg.matmul ins(%a, %b : memref<3x4xf32, strided<[1, 3]>>, memref<4x5xf32>) outs(%c : memref<3x5xf32>)
  return
}

// -----

// Not f32, or still on tensors: left alone.
// CHECK-LABEL: func.func @untouched
// CHECK: linalg.matmul ins(%{{.*}} : memref<3x4xf64>, memref<4x5xf64>)
// CHECK: linalg.matmul ins(%{{.*}} : tensor<3x4xf32>, tensor<4x5xf32>)
// CHECK-NOT: zero_rt_sgemm
func.func @untouched(%a: memref<3x4xf64>, %b: memref<4x5xf64>, %c: memref<3x5xf64>,
                     %ta: tensor<3x4xf32>, %tb: tensor<4x5xf32>, %tc: tensor<3x5xf32>) -> tensor<3x5xf32> {
  linalg.matmul ins(%a, %b : memref<3x4xf64>, memref<4x5xf64>) outs(%c : memref<3x5xf64>)
  %r = linalg.matmul ins(%ta, %tb : tensor<3x4xf32>, tensor<4x5xf32>) outs(%tc : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}
