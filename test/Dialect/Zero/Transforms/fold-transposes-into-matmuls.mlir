// RUN: zero-opt %s --zero-fold-transposes-into-matmuls --split-input-file | FileCheck %s

// dW = X^T dY and dX = dY W^T: both transposes become transposed maps and
// disappear.
// CHECK-DAG: #[[LHS_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[RHS_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @weight_and_input_gradients
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x4xf32>, %[[DY:.*]]: tensor<1x8x6xf32>, %[[W:.*]]: tensor<1x4x6xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.batch_matmul indexing_maps = [#[[LHS_T]], #[[RHS]], #[[OUT]]] ins(%[[X]], %[[DY]] :
// CHECK: linalg.batch_matmul indexing_maps = [#[[LHS]], #[[RHS_T]], #[[OUT]]] ins(%[[DY]], %[[W]] :
func.func @weight_and_input_gradients(%x: tensor<1x8x4xf32>, %dy: tensor<1x8x6xf32>, %w: tensor<1x4x6xf32>) -> (tensor<1x4x6xf32>, tensor<1x8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x8xf32>
  %xt = linalg.transpose ins(%x : tensor<1x8x4xf32>) outs(%e0 : tensor<1x4x8xf32>) permutation = [0, 2, 1]
  %e1 = tensor.empty() : tensor<1x4x6xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  %dw = linalg.batch_matmul ins(%xt, %dy : tensor<1x4x8xf32>, tensor<1x8x6xf32>) outs(%f1 : tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  %e2 = tensor.empty() : tensor<1x6x4xf32>
  %wt = linalg.transpose ins(%w : tensor<1x4x6xf32>) outs(%e2 : tensor<1x6x4xf32>) permutation = [0, 2, 1]
  %e3 = tensor.empty() : tensor<1x8x4xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %dx = linalg.batch_matmul ins(%dy, %wt : tensor<1x8x6xf32>, tensor<1x6x4xf32>) outs(%f3 : tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return %dw, %dx : tensor<1x4x6xf32>, tensor<1x8x4xf32>
}

// -----

// A transpose that moves a unit dimension too (`[6, 1, 4] -> [1, 4, 6]`)
// is the same swap on the data: the matmul reads the input reshaped.
// CHECK-DAG: #[[RHS_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @unit_dims
// CHECK-SAME: (%[[A:.*]]: tensor<1x8x4xf32>, %[[W:.*]]: tensor<6x1x4xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1, 2]] : tensor<6x1x4xf32> into tensor<24xf32>
// CHECK: %[[VIEW:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1, 2]] output_shape [1, 6, 4] : tensor<24xf32> into tensor<1x6x4xf32>
// CHECK: linalg.batch_matmul indexing_maps = [#{{.*}}, #[[RHS_T]], #{{.*}}] ins(%[[A]], %[[VIEW]] :
func.func @unit_dims(%a: tensor<1x8x4xf32>, %w: tensor<6x1x4xf32>) -> tensor<1x8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x6xf32>
  %wt = linalg.transpose ins(%w : tensor<6x1x4xf32>) outs(%e0 : tensor<1x4x6xf32>) permutation = [1, 2, 0]
  %e1 = tensor.empty() : tensor<1x8x6xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x8x6xf32>) -> tensor<1x8x6xf32>
  %y = linalg.batch_matmul ins(%a, %wt : tensor<1x8x4xf32>, tensor<1x4x6xf32>) outs(%f1 : tensor<1x8x6xf32>) -> tensor<1x8x6xf32>
  return %y : tensor<1x8x6xf32>
}

// -----

// 2-D matmuls too; a transpose with another use stays for that use.
// CHECK-DAG: #[[LHS_T:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @matmul_shared
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x6xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[A]]
// CHECK: linalg.matmul indexing_maps = [#[[LHS_T]], #{{.*}}, #{{.*}}] ins(%[[A]], %[[B]] :
// CHECK: return %{{.*}}, %[[T]]
func.func @matmul_shared(%a: tensor<4x8xf32>, %b: tensor<4x6xf32>) -> (tensor<8x6xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x4xf32>
  %at = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%e0 : tensor<8x4xf32>) permutation = [1, 0]
  %e1 = tensor.empty() : tensor<8x6xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.matmul ins(%at, %b : tensor<8x4xf32>, tensor<4x6xf32>) outs(%f1 : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %y, %at : tensor<8x6xf32>, tensor<8x4xf32>
}

// -----

// Not a swap of the innermost pair (attention's head split), or a
// transpose whose data order differs from a swap: left alone.
// CHECK-LABEL: func.func @not_a_swap
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul ins(
func.func @not_a_swap(%a: tensor<4x2x3xf32>, %b: tensor<2x3x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x4x3xf32>
  %at = linalg.transpose ins(%a : tensor<4x2x3xf32>) outs(%e0 : tensor<2x4x3xf32>) permutation = [1, 0, 2]
  %e1 = tensor.empty() : tensor<2x4x5xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %y = linalg.batch_matmul ins(%at, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%f1 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %y : tensor<2x4x5xf32>
}

// -----

// A weight gradient computed as A B and then transposed into the weight's
// layout, `[1, 4, 6] -> [6, 1, 4]`, is computed as B^T A^T into a fresh
// zero fill of the transposed shape, then reshaped (a view).
// CHECK-DAG: #[[LHS_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[RHS_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @transposed_result
// CHECK-SAME: (%[[A:.*]]: tensor<1x4x8xf32>, %[[B:.*]]: tensor<1x8x6xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x6x4xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<1x6x4xf32>)
// CHECK: %[[P:.*]] = linalg.batch_matmul indexing_maps = [#[[LHS_T]], #[[RHS_T]], #{{.*}}] ins(%[[B]], %[[A]] : tensor<1x8x6xf32>, tensor<1x4x8xf32>) outs(%[[F]] :
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[P]]
// CHECK: %[[R:.*]] = tensor.expand_shape %[[FLAT]] {{.*}} into tensor<6x1x4xf32>
// CHECK: return %[[R]]
func.func @transposed_result(%a: tensor<1x4x8xf32>, %b: tensor<1x8x6xf32>) -> tensor<6x1x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x6xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<1x4x8xf32>, tensor<1x8x6xf32>) outs(%f0 : tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  %e1 = tensor.empty() : tensor<6x1x4xf32>
  %ct = linalg.transpose ins(%c : tensor<1x4x6xf32>) outs(%e1 : tensor<6x1x4xf32>) permutation = [2, 0, 1]
  return %ct : tensor<6x1x4xf32>
}

// -----

// The product has another use: it is computed once and transposed.
// CHECK-LABEL: func.func @product_used_twice
// CHECK: linalg.batch_matmul ins(
// CHECK: linalg.transpose
func.func @product_used_twice(%a: tensor<1x4x8xf32>, %b: tensor<1x8x6xf32>) -> (tensor<1x6x4xf32>, tensor<1x4x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x6xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<1x4x8xf32>, tensor<1x8x6xf32>) outs(%f0 : tensor<1x4x6xf32>) -> tensor<1x4x6xf32>
  %e1 = tensor.empty() : tensor<1x6x4xf32>
  %ct = linalg.transpose ins(%c : tensor<1x4x6xf32>) outs(%e1 : tensor<1x6x4xf32>) permutation = [0, 2, 1]
  return %ct, %c : tensor<1x6x4xf32>, tensor<1x4x6xf32>
}
