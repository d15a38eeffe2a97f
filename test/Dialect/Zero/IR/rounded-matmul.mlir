// RUN: zero-opt %s --split-input-file | zero-opt --split-input-file | FileCheck %s
// RUN: zero-opt %s --split-input-file --canonicalize --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize | FileCheck %s --check-prefix=BUF

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

// CHECK-LABEL: func.func @tensors
// CHECK: zero.rounded_matmul %arg0, %arg1 into %{{.*}} maps [#{{.*}}, #{{.*}}, #{{.*}}] : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
// The destination is written, never read: no copy of the empty tensor, and
// the op on buffers writes the allocation.
// BUF-LABEL: func.func @tensors
// BUF: %[[C:.*]] = memref.alloc() {{.*}} : memref<8x4xbf16>
// BUF-NOT: memref.copy
// BUF: zero.rounded_matmul %{{.*}}, %{{.*}} into %[[C]] maps {{.*}} : memref<8x16xbf16>, memref<16x4xbf16>, memref<8x4xbf16>{{$}}
// BUF: return %[[C]]
func.func @tensors(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>) -> tensor<8x4xbf16> {
  %e = tensor.empty() : tensor<8x4xbf16>
  %r = zero.rounded_matmul %a, %b into %e maps [#mk, #kn, #mn]
         : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
  return %r : tensor<8x4xbf16>
}

// -----

// Two batch loops, B read transposed, f16; on buffers the op has no result.
// CHECK-LABEL: func.func @buffers
// CHECK: zero.rounded_matmul %arg0, %arg1 into %arg2 maps [{{.*}}] : memref<2x3x5x7xf16>, memref<2x3x4x7xf16>, memref<2x3x5x4xf16>{{$}}
func.func @buffers(%a: memref<2x3x5x7xf16>, %b: memref<2x3x4x7xf16>, %c: memref<2x3x5x4xf16>) {
  zero.rounded_matmul %a, %b into %c
    maps [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>,
          affine_map<(b0, b1, m, n, k) -> (b0, b1, n, k)>,
          affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>]
    : memref<2x3x5x7xf16>, memref<2x3x4x7xf16>, memref<2x3x5x4xf16>
  return
}

// -----

// Two M loops: the one C indexes innermost is the GEMM's M, the other a
// batch loop along which B is broadcast (a weight gradient written in
// blocks of a bucket's rows).
// CHECK-LABEL: func.func @broadcast_batch
// CHECK: zero.rounded_matmul %arg0, %arg1 into %arg2 maps [{{.*}}] : memref<6x2x2xbf16>, memref<6x8xbf16>, memref<2x2x8xbf16, strided<[32, 8, 1], offset: 8>>{{$}}
func.func @broadcast_batch(%a: memref<6x2x2xbf16>, %b: memref<6x8xbf16>, %c: memref<2x2x8xbf16, strided<[32, 8, 1], offset: 8>>) {
  zero.rounded_matmul %a, %b into %c
    maps [affine_map<(i, m, n, k) -> (k, i, m)>,
          affine_map<(i, m, n, k) -> (k, n)>,
          affine_map<(i, m, n, k) -> (i, m, n)>]
    : memref<6x2x2xbf16>, memref<6x8xbf16>, memref<2x2x8xbf16, strided<[32, 8, 1], offset: 8>>
  return
}

// -----

// With `accumulate` the destination is read (C added to the sums): its
// printed form keeps the keyword, and bufferized, with the destination
// still returned, the op accumulates into a copy of it (an op that did
// not read it would get a fresh buffer, nothing copied).
// CHECK-LABEL: func.func @accumulate
// CHECK: zero.rounded_matmul %arg0, %arg1 into %arg2 accumulate maps [{{.*}}] : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
// BUF-LABEL: func.func @accumulate
// BUF: %[[C:.*]] = memref.alloc() {{.*}} : memref<8x4xbf16>
// BUF: memref.copy %{{.*}}, %[[C]]
// BUF: zero.rounded_matmul %{{.*}}, %{{.*}} into %[[C]] accumulate maps
func.func @accumulate(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %c: tensor<8x4xbf16>) -> (tensor<8x4xbf16>, tensor<8x4xbf16>) {
  %r = zero.rounded_matmul %a, %b into %c accumulate
         maps [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
               affine_map<(m, n, k) -> (m, n)>]
         : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
  return %r, %c : tensor<8x4xbf16>, tensor<8x4xbf16>
}

// -----

// On tensors it has no effects: an unused one goes.
// CHECK-LABEL: func.func @unused
// CHECK: zero.rounded_matmul
// BUF-LABEL: func.func @unused
// BUF-NOT: zero.rounded_matmul
func.func @unused(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>) {
  %e = tensor.empty() : tensor<8x4xbf16>
  %r = zero.rounded_matmul %a, %b into %e
         maps [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
               affine_map<(m, n, k) -> (m, n)>]
         : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
  return
}
