// RUN: zero-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(zero-cpu-split-empty-tensors))" | FileCheck %s

// One empty tensor as the destination of two gathers: each gets its own,
// right before it, so bufferization gives each its own buffer.
// CHECK-LABEL: func.func @gathers
// CHECK: tosa.const
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[G1:.*]] = zero.all_gather %arg0 into %[[E1]]
// CHECK-NEXT: %[[N:.*]] = tosa.negate
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: zero.all_gather %arg1 into %[[E2]]
// CHECK-NOT: tensor.empty
func.func @gathers(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %g1 = zero.all_gather %a into %e {world_size = 2 : i64} : tensor<4xf32>, tensor<8xf32> -> tensor<8xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %n = tosa.negate %g1, %z, %z : (tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<8xf32>
  %g2 = zero.all_gather %b into %e {world_size = 2 : i64} : tensor<4xf32>, tensor<8xf32> -> tensor<8xf32>
  return %n, %g2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A reshaped empty tensor shared by two transposes: the reshape folds into
// the empty tensor, which then splits.
// CHECK-LABEL: func.func @reshaped
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<1x4x2xf32>
// CHECK-NEXT: linalg.transpose ins(%arg0 : tensor<2x1x4xf32>) outs(%[[E1]]
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<1x4x2xf32>
// CHECK-NEXT: linalg.transpose ins(%arg1 : tensor<2x1x4xf32>) outs(%[[E2]]
// CHECK-NOT: tensor.expand_shape
func.func @reshaped(%a: tensor<2x1x4xf32>, %b: tensor<2x1x4xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x2xf32>) {
  %e = tensor.empty() : tensor<4x2xf32>
  %x = tensor.expand_shape %e [[0, 1], [2]] output_shape [1, 4, 2] : tensor<4x2xf32> into tensor<1x4x2xf32>
  %t1 = linalg.transpose ins(%a : tensor<2x1x4xf32>) outs(%x : tensor<1x4x2xf32>) permutation = [1, 2, 0]
  %t2 = linalg.transpose ins(%b : tensor<2x1x4xf32>) outs(%x : tensor<1x4x2xf32>) permutation = [1, 2, 0]
  return %t1, %t2 : tensor<1x4x2xf32>, tensor<1x4x2xf32>
}

// -----

// A fill shared by two reductions (CSE merges them) becomes one fill of its
// own empty tensor per reduction.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT: linalg.reduce ins(%arg0 : tensor<4x8xf32>) outs(%[[F1]] : tensor<4xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<4xf32>)
// CHECK-NEXT: linalg.reduce ins(%arg1 : tensor<4x8xf32>) outs(%[[F2]] : tensor<4xf32>)
// CHECK-NOT: linalg.fill
func.func @shared_fill(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %ra = linalg.reduce ins(%a : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %rb = linalg.reduce ins(%b : tensor<4x8xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return %ra, %rb : tensor<4xf32>, tensor<4xf32>
}

// -----

// A splat constant a loop accumulates into (a scatter-add's zero start)
// becomes a fill of an empty tensor at that use, not a global copied into
// a buffer; its read-only use keeps the constant.
// CHECK-LABEL: func.func @splat_destination
// CHECK: %[[C:.*]] = arith.constant dense<0.000000e+00> : tensor<64x16xf32>
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<64x16xf32>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<64x16xf32>)
// CHECK-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %[[F]])
// CHECK: linalg.add ins(%{{.*}}, %[[C]] :
func.func @splat_destination(%rows: tensor<4x16xf32>, %idx: tensor<4xindex>) -> (tensor<64x16xf32>, tensor<64x16xf32>) {
  %zeros = arith.constant dense<0.0> : tensor<64x16xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zeros) -> (tensor<64x16xf32>) {
    %j = tensor.extract %idx[%i] : tensor<4xindex>
    %row = tensor.extract_slice %rows[%i, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<1x16xf32>
    %u = tensor.insert_slice %row into %acc[%j, 0] [1, 16] [1, 1] : tensor<1x16xf32> into tensor<64x16xf32>
    scf.yield %u : tensor<64x16xf32>
  }
  %e = tensor.empty() : tensor<64x16xf32>
  %s = linalg.add ins(%r, %zeros : tensor<64x16xf32>, tensor<64x16xf32>) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %r, %s : tensor<64x16xf32>, tensor<64x16xf32>
}

// -----

// A complex splat stays a constant: a fill takes an integer, index or
// float scalar.
// CHECK-LABEL: func.func @complex_splat
// CHECK: arith.constant dense<(1.000000e+00,0.000000e+00)> : tensor<4xcomplex<f32>>
// CHECK-NOT: linalg.fill
func.func @complex_splat(%v: complex<f32>, %i: index) -> tensor<4xcomplex<f32>> {
  %c = arith.constant dense<(1.0, 0.0)> : tensor<4xcomplex<f32>>
  %r = tensor.insert %v into %c[%i] : tensor<4xcomplex<f32>>
  return %r : tensor<4xcomplex<f32>>
}
