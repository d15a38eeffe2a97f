// RUN: zero-opt %s --split-input-file --zero-gpu-bias-into-gemms | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-gpu-bias-into-gemms --one-shot-bufferize="bufferize-function-boundaries" --canonicalize --zero-linalg-to-blas | FileCheck %s --check-prefix=BLAS

#mk = affine_map<(b, m, n, k) -> (b, m, k)>
#kn = affine_map<(b, m, n, k) -> (b, k, n)>
#mn = affine_map<(b, m, n, k) -> (b, m, n)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias3 = affine_map<(d0, d1, d2) -> (0, 0, d2)>

// A linear layer's bf16 GEMM, its product viewed as [2, 4, 6] and the
// bias added: the bias (its view moved up) is broadcast into the users'
// shape, viewed back as the GEMM's destination, and the GEMM accumulates
// into it; the add, now a copy, goes. Bufferized, the GEMM is one call
// that adds C (accumulate 1) into the broadcast's buffer.
// CHECK-LABEL: func.func @bf16_linear
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x3xbf16>, %[[W:.*]]: tensor<1x3x6xbf16>, %[[B:.*]]: tensor<6xbf16>)
// CHECK: %[[BV:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1, 2]] output_shape [1, 1, 6]
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<2x4x6xbf16>
// CHECK-NEXT: %[[BC:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[BV]] : tensor<1x1x6xbf16>) outs(%[[E]] : tensor<2x4x6xbf16>)
// CHECK: %[[C2:.*]] = tensor.collapse_shape %[[BC]] {{\[\[}}0, 1], [2]] : tensor<2x4x6xbf16> into tensor<8x6xbf16>
// CHECK-NEXT: %[[C3:.*]] = tensor.expand_shape %[[C2]] {{\[\[}}0, 1], [2]] output_shape [1, 8, 6] : tensor<8x6xbf16> into tensor<1x8x6xbf16>
// CHECK-NEXT: %[[R:.*]] = zero.rounded_matmul %[[X]], %[[W]] into %[[C3]] accumulate maps
// CHECK-NEXT: %[[V2:.*]] = tensor.collapse_shape %[[R]]
// CHECK-NEXT: %[[V:.*]] = tensor.expand_shape %[[V2]]
// CHECK-NOT: linalg.generic
// CHECK: return %[[V]]
// BLAS-LABEL: func.func @bf16_linear
// BLAS: linalg.generic
// BLAS: call @zero_rt_gemm16({{.*}}, %c1_i64{{(_[0-9]+)?}}) :
// BLAS-NOT: linalg.generic
func.func @bf16_linear(%x: tensor<1x8x3xbf16>, %w: tensor<1x3x6xbf16>, %b: tensor<6xbf16>) -> tensor<2x4x6xbf16> {
  %e = tensor.empty() : tensor<1x8x6xbf16>
  %r = zero.rounded_matmul %x, %w into %e maps [#mk, #kn, #mn]
         : tensor<1x8x3xbf16>, tensor<1x3x6xbf16>, tensor<1x8x6xbf16> -> tensor<1x8x6xbf16>
  %c = tensor.collapse_shape %r [[0, 1], [2]] : tensor<1x8x6xbf16> into tensor<8x6xbf16>
  %v = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xbf16> into tensor<2x4x6xbf16>
  %bv = tensor.expand_shape %b [[0, 1, 2]] output_shape [1, 1, 6] : tensor<6xbf16> into tensor<1x1x6xbf16>
  %e2 = tensor.empty() : tensor<2x4x6xbf16>
  %s = linalg.generic {indexing_maps = [#id3, #bias3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%v, %bv : tensor<2x4x6xbf16>, tensor<1x1x6xbf16>) outs(%e2 : tensor<2x4x6xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %out: bf16):
    %t = arith.addf %q, %p : bf16
    linalg.yield %t : bf16
  } -> tensor<2x4x6xbf16>
  return %s : tensor<2x4x6xbf16>
}

// -----

// An f32 GEMM: its zero fill goes, the contraction accumulates into the
// broadcast bias; bufferized, the BLAS call adds to C.
// CHECK-LABEL: func.func @f32_linear
// CHECK: %[[BC:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4xf32>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[R:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x3xf32>, tensor<3x4xf32>) outs(%[[BC]] : tensor<8x4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
// BLAS-LABEL: func.func @f32_linear
// BLAS: call @zero_rt_sgemm({{.*}}, %c1_i64{{(_[0-9]+)?}}) :
func.func @f32_linear(%x: tensor<8x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
  %r = linalg.matmul ins(%x, %w : tensor<8x3xf32>, tensor<3x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e2 = tensor.empty() : tensor<8x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
         ins(%r, %b : tensor<8x4xf32>, tensor<4xf32>) outs(%e2 : tensor<8x4xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %t = arith.addf %p, %q : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %s : tensor<8x4xf32>
}

// -----

// Left alone: a user that computes more than the sum (the GELU after a
// bias: it reads the product anyway, and a broadcast would cost a write
// of C), a GEMM whose product has another user, a bias computed after
// the GEMM from its product, and a user reading the product transposed.
// CHECK-LABEL: func.func @kept
#mk = affine_map<(b, m, n, k) -> (b, m, k)>
#kn = affine_map<(b, m, n, k) -> (b, k, n)>
#mn = affine_map<(b, m, n, k) -> (b, m, n)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-NOT: accumulate
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: accumulate
func.func @kept(%x: tensor<1x8x3xbf16>, %w: tensor<1x3x8xbf16>, %b: tensor<8xbf16>)
    -> (tensor<1x8x8xbf16>, tensor<1x8x8xbf16>, tensor<1x8x8xbf16>, tensor<1x8x8xbf16>, tensor<1x8x8xbf16>) {
  %e = tensor.empty() : tensor<1x8x8xbf16>
  %r0 = zero.rounded_matmul %x, %w into %e maps [#mk, #kn, #mn]
          : tensor<1x8x3xbf16>, tensor<1x3x8xbf16>, tensor<1x8x8xbf16> -> tensor<1x8x8xbf16>
  %g0 = linalg.generic {indexing_maps = [#id3, affine_map<(d0, d1, d2) -> (d2)>, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%r0, %b : tensor<1x8x8xbf16>, tensor<8xbf16>) outs(%e : tensor<1x8x8xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %out: bf16):
    %t = arith.addf %p, %q : bf16
    %u = math.tanh %t : bf16
    linalg.yield %u : bf16
  } -> tensor<1x8x8xbf16>
  %e1 = tensor.empty() : tensor<1x8x8xbf16>
  %r1 = zero.rounded_matmul %x, %w into %e1 maps [#mk, #kn, #mn]
          : tensor<1x8x3xbf16>, tensor<1x3x8xbf16>, tensor<1x8x8xbf16> -> tensor<1x8x8xbf16>
  %g1 = linalg.generic {indexing_maps = [#id3, affine_map<(d0, d1, d2) -> (d2)>, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%r1, %b : tensor<1x8x8xbf16>, tensor<8xbf16>) outs(%e : tensor<1x8x8xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %out: bf16):
    %t = arith.addf %p, %q : bf16
    linalg.yield %t : bf16
  } -> tensor<1x8x8xbf16>
  %e2 = tensor.empty() : tensor<1x8x8xbf16>
  %r2 = zero.rounded_matmul %x, %w into %e2 maps [#mk, #kn, #mn]
          : tensor<1x8x3xbf16>, tensor<1x3x8xbf16>, tensor<1x8x8xbf16> -> tensor<1x8x8xbf16>
  %late = tensor.extract_slice %r1[0, 0, 0] [1, 1, 8] [1, 1, 1] : tensor<1x8x8xbf16> to tensor<8xbf16>
  %g2 = linalg.generic {indexing_maps = [#id3, affine_map<(d0, d1, d2) -> (d2)>, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%r2, %late : tensor<1x8x8xbf16>, tensor<8xbf16>) outs(%e : tensor<1x8x8xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %out: bf16):
    %t = arith.addf %p, %q : bf16
    linalg.yield %t : bf16
  } -> tensor<1x8x8xbf16>
  %e3 = tensor.empty() : tensor<1x8x8xbf16>
  %r3 = zero.rounded_matmul %x, %w into %e3 maps [#mk, #kn, #mn]
          : tensor<1x8x3xbf16>, tensor<1x3x8xbf16>, tensor<1x8x8xbf16> -> tensor<1x8x8xbf16>
  %g3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d2)>, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
         ins(%r3, %b : tensor<1x8x8xbf16>, tensor<8xbf16>) outs(%e : tensor<1x8x8xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %out: bf16):
    %t = arith.addf %p, %q : bf16
    linalg.yield %t : bf16
  } -> tensor<1x8x8xbf16>
  return %g0, %r1, %g1, %g2, %g3 : tensor<1x8x8xbf16>, tensor<1x8x8xbf16>, tensor<1x8x8xbf16>, tensor<1x8x8xbf16>, tensor<1x8x8xbf16>
}
