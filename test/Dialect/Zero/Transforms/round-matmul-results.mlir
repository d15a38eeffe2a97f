// RUN: zero-opt %s --split-input-file --zero-round-matmul-results | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// The consumer rounds the product and adds a bias in bf16: the matmul
// writes bf16 and the consumer reads it as it was rounded.
// CHECK-LABEL: func.func @bias
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x4xbf16>
// CHECK: %[[MM:.*]] = zero.rounded_matmul %arg0, %arg1 into %[[E]] maps [{{.*}}] : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
// CHECK: linalg.generic {{.*}} ins(%[[MM]], %arg2 : tensor<8x4xbf16>, tensor<4xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[BIAS:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[IN]], %[[BIAS]] : bf16
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK-NOT: arith.truncf
func.func @bias(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %bias: tensor<4xbf16>) -> tensor<8x4xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %o = tensor.empty() : tensor<8x4xbf16>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %bias : tensor<8x4xf32>, tensor<4xbf16>) outs(%o : tensor<8x4xbf16>) {
  ^bb0(%in: f32, %c: bf16, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    %s = arith.addf %t, %c : bf16
    linalg.yield %s : bf16
  }  -> tensor<8x4xbf16>
  return %r : tensor<8x4xbf16>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Through the views a padded or reshaped product reaches its users by,
// to two consumers (f16 here). The second only rounded: left a copy of
// its input, it goes, and its result is the rounded product's view.
// CHECK-LABEL: func.func @views
// CHECK: %[[MM:.*]] = zero.rounded_matmul {{.*}} -> tensor<1x8x6xf16>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[MM]] {{.*}} : tensor<1x8x6xf16> into tensor<8x6xf16>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[C]][0, 0] [8, 5] [1, 1] : tensor<8x6xf16> to tensor<8x5xf16>
// CHECK: %[[X:.*]] = tensor.expand_shape %[[S]] {{.*}} : tensor<8x5xf16> into tensor<2x4x5xf16>
// CHECK: %[[R1:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x4x5xf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT: arith.extf %[[IN]] : f16 to f32
// CHECK-NOT: linalg.generic
// CHECK-NOT: arith.truncf
// CHECK: return %[[R1]], %[[X]]
func.func @views(%a: tensor<1x8x16xf16>, %b: tensor<1x16x6xf16>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf16>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x6xf32>) -> tensor<1x8x6xf32>
  %p = linalg.batch_matmul ins(%a, %b : tensor<1x8x16xf16>, tensor<1x16x6xf16>) outs(%init : tensor<1x8x6xf32>) -> tensor<1x8x6xf32>
  %c = tensor.collapse_shape %p [[0, 1], [2]] : tensor<1x8x6xf32> into tensor<8x6xf32>
  %s = tensor.extract_slice %c[0, 0] [8, 5] [1, 1] : tensor<8x6xf32> to tensor<8x5xf32>
  %x = tensor.expand_shape %s [[0, 1], [2]] output_shape [2, 4, 5] : tensor<8x5xf32> into tensor<2x4x5xf32>
  %o1 = tensor.empty() : tensor<2x4x5xf32>
  %r1 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x4x5xf32>) outs(%o1 : tensor<2x4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %in : f32 to f16
    %w = arith.extf %t : f16 to f32
    linalg.yield %w : f32
  }  -> tensor<2x4x5xf32>
  %o2 = tensor.empty() : tensor<2x4x5xf16>
  %r2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x4x5xf32>) outs(%o2 : tensor<2x4x5xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }  -> tensor<2x4x5xf16>
  return %r1, %r2 : tensor<2x4x5xf32>, tensor<2x4x5xf16>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A user that reads the f32 product (the loss's logits): it stays.
// CHECK-LABEL: func.func @f32_user
// CHECK: linalg.matmul
// CHECK-NOT: zero.rounded_matmul
func.func @f32_user(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %p = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<8x4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %in : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    %s = arith.addf %w, %in : f32
    linalg.yield %s : f32
  }  -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A product added onto C (not a fill of zeros), a rounding to another
// 16-bit type, a rounding mode other than the default, a product used
// as a destination: each stays.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT: zero.rounded_matmul
func.func @kept(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %c: tensor<8x4xf32>)
    -> (tensor<8x4xbf16>, tensor<8x4xf16>, tensor<8x4xbf16>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %o = tensor.empty() : tensor<8x4xbf16>
  %o16 = tensor.empty() : tensor<8x4xf16>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %p0 = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p0 : tensor<8x4xf32>) outs(%o : tensor<8x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }  -> tensor<8x4xbf16>
  %p1 = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p1 : tensor<8x4xf32>) outs(%o16 : tensor<8x4xf16>) {
  ^bb0(%in: f32, %out: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }  -> tensor<8x4xf16>
  %p2 = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p2 : tensor<8x4xf32>) outs(%o : tensor<8x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in downward : f32 to bf16
    linalg.yield %t : bf16
  }  -> tensor<8x4xbf16>
  %p3 = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x4xbf16>) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r3 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%p3 : tensor<8x4xf32>) {
  ^bb0(%out: f32):
    %t = arith.truncf %out : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  }  -> tensor<8x4xf32>
  return %r0, %r1, %r2, %r3 : tensor<8x4xbf16>, tensor<8x4xf16>, tensor<8x4xbf16>, tensor<8x4xf32>
}
