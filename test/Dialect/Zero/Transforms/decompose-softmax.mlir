// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-decompose-softmax | FileCheck %s

// The max-shifted form along the softmax's dimension, reciprocal and
// product as the importer once spelled it; the max takes no gradient.
// CHECK-LABEL: func.func @f32
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5xf32>)
// CHECK-NOT: tensor.empty
// CHECK: %[[MX:.*]] = tosa.reduce_max %[[X]] {axis = 1 : i32, zero.stop_gradient = unit} : (tensor<2x3x5xf32>) -> tensor<2x1x5xf32>
// CHECK: %[[SH:.*]] = tosa.sub %[[X]], %[[MX]] : (tensor<2x3x5xf32>, tensor<2x1x5xf32>) -> tensor<2x3x5xf32>
// CHECK: %[[E:.*]] = tosa.exp %[[SH]]
// CHECK: %[[S:.*]] = tosa.reduce_sum %[[E]] {axis = 1 : i32} : (tensor<2x3x5xf32>) -> tensor<2x1x5xf32>
// CHECK: %[[R:.*]] = tosa.reciprocal %[[S]]
// CHECK: %[[Y:.*]] = tosa.mul %[[E]], %[[R]], %{{.*}} : (tensor<2x3x5xf32>, tensor<2x1x5xf32>, tensor<1xi8>) -> tensor<2x3x5xf32>
// CHECK-NOT: linalg.softmax
// CHECK-NOT: tensor.empty
// CHECK: return %[[Y]]
func.func @f32(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %e = tensor.empty() : tensor<2x3x5xf32>
  %y = linalg.softmax dimension(1) ins(%x : tensor<2x3x5xf32>) outs(%e : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// A 16-bit softmax computes in fp32 and rounds once; a recomputed one keeps
// its marks on every op it becomes.
// CHECK-LABEL: func.func @bf16_recomputed
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>)
// CHECK: %[[XW:.*]] = tosa.cast %[[X]] {zero.backward, zero.recompute} : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: tosa.reduce_max %[[XW]] {axis = 1 : i32, zero.backward = unit, zero.recompute = unit, zero.stop_gradient = unit} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK: tosa.exp {{.*}} {zero.backward, zero.recompute} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: tosa.reduce_sum {{.*}} {axis = 1 : i32, zero.backward, zero.recompute} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK: %[[Y:.*]] = tosa.mul {{.*}} {zero.backward, zero.recompute} : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
// CHECK: %[[YL:.*]] = tosa.cast %[[Y]] {zero.backward, zero.recompute} : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK: return %[[YL]]
func.func @bf16_recomputed(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %e = tensor.empty() : tensor<4x8xbf16>
  %y = linalg.softmax {zero.backward, zero.recompute} dimension(1) ins(%x : tensor<4x8xbf16>) outs(%e : tensor<4x8xbf16>) -> tensor<4x8xbf16>
  return %y : tensor<4x8xbf16>
}

// -----

func.func @buffers(%x: memref<4x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{softmax on buffers: expected tensors}}
  linalg.softmax dimension(1) ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>)
  return
}
