// RUN: zero-opt %s --split-input-file --verify-diagnostics

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @f32(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %e: tensor<8x4xf32>) {
  // expected-error @+1 {{expects bf16 or f16 operands, got 'f32'}}
  %r = zero.rounded_matmul %a, %b into %e maps [#mk, #kn, #mn]
         : tensor<8x16xf32>, tensor<16x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @mixed(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %e: tensor<8x4xf16>) {
  // expected-error @+1 {{expects A, B and C of one element type}}
  %r = zero.rounded_matmul %a, %b into %e maps [#mk, #kn, #mn]
         : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xf16> -> tensor<8x4xf16>
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @extents(%a: tensor<8x16xbf16>, %b: tensor<15x4xbf16>, %e: tensor<8x4xbf16>) {
  // expected-error @+1 {{loop 2 has extents 16 and 15}}
  %r = zero.rounded_matmul %a, %b into %e maps [#mk, #kn, #mn]
         : tensor<8x16xbf16>, tensor<15x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
  return
}

// -----

// An elementwise product is no GEMM: no K loop.
func.func @no_k(%a: tensor<8x4xbf16>, %b: tensor<8x4xbf16>, %e: tensor<8x4xbf16>) {
  // expected-error @+1 {{expects a GEMM: one M, N and K loop and at most two batch loops}}
  %r = zero.rounded_matmul %a, %b into %e
         maps [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (m, n)>,
               affine_map<(m, n) -> (m, n)>]
         : tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
  return
}

// -----

func.func @not_permutation(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %e: tensor<8x4xbf16>) {
  // expected-error @+1 {{indexing map 0 is not a projected permutation of 3 loops over the operand's 2 dimensions}}
  %r = zero.rounded_matmul %a, %b into %e
         maps [affine_map<(m, n, k) -> (m + k, k)>, affine_map<(m, n, k) -> (k, n)>,
               affine_map<(m, n, k) -> (m, n)>]
         : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @result_on_buffers(%a: memref<8x16xbf16>, %b: memref<16x4xbf16>, %e: memref<8x4xbf16>) {
  // expected-error @+1 {{returns a tensor exactly on tensors}}
  %r = zero.rounded_matmul %a, %b into %e maps [#mk, #kn, #mn]
         : memref<8x16xbf16>, memref<16x4xbf16>, memref<8x4xbf16> -> tensor<8x4xbf16>
  return
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>

func.func @two_maps(%a: tensor<8x16xbf16>, %b: tensor<16x4xbf16>, %e: tensor<8x4xbf16>) {
  // expected-error @+1 {{expects 3 indexing maps (A, B, C), got 2}}
  %r = zero.rounded_matmul %a, %b into %e maps [#mk, #kn]
         : tensor<8x16xbf16>, tensor<16x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>
  return
}

// -----

// Two batch loops and a second M loop: three batch loops, more than the
// GEMM call has.
func.func @three_batch_loops(%a: memref<2x2x2x3x4xbf16>, %b: memref<2x2x4x5xbf16>, %c: memref<2x2x2x3x5xbf16>) {
  // expected-error @+1 {{expects a GEMM: one M, N and K loop and at most two batch loops}}
  zero.rounded_matmul %a, %b into %c
    maps [affine_map<(b0, b1, i, m, n, k) -> (b0, b1, i, m, k)>,
          affine_map<(b0, b1, i, m, n, k) -> (b0, b1, k, n)>,
          affine_map<(b0, b1, i, m, n, k) -> (b0, b1, i, m, n)>]
    : memref<2x2x2x3x4xbf16>, memref<2x2x4x5xbf16>, memref<2x2x2x3x5xbf16>
  return
}
