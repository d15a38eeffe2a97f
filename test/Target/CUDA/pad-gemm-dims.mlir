// RUN: zero-opt %s --pass-pipeline="builtin.module(func.func(zero-gpu-pad-gemm-dims))" -split-input-file | FileCheck %s

// Logits over a vocabulary of 131: N rounds up to 136. The table is
// padded with zero rows, the zero accumulator becomes a fill of the padded
// shape, and the users read the 131 columns of the padded result.
// CHECK-LABEL: func.func @odd_n
// CHECK: %[[W:.*]] = tensor.pad %arg1 low[0, 0] high[0, 5]
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16x136xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<16x136xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%arg0, %[[W]] : tensor<16x32xbf16>, tensor<32x136xbf16>) outs(%[[F]] : tensor<16x136xf32>)
// CHECK: %[[S:.*]] = tensor.extract_slice %[[M]][0, 0] [16, 131] [1, 1]
// CHECK: return %[[S]]
func.func @odd_n(%x: tensor<16x32xbf16>, %w: tensor<32x131xbf16>) -> tensor<16x131xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x131xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x131xf32>) -> tensor<16x131xf32>
  %m = linalg.matmul ins(%x, %w : tensor<16x32xbf16>, tensor<32x131xbf16>) outs(%f : tensor<16x131xf32>) -> tensor<16x131xf32>
  return %m : tensor<16x131xf32>
}

// -----

// An odd K (the logits' gradient times the table): both operands get zero
// columns or rows, which add nothing to the products.
// CHECK-LABEL: func.func @odd_k
// CHECK-DAG: tensor.pad %arg0 low[0, 0] high[0, 5]
// CHECK-DAG: tensor.pad %arg1 low[0, 0] high[5, 0]
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x136xbf16>, tensor<136x32xbf16>) outs(%{{.*}} : tensor<16x32xf32>)
// CHECK-NOT: tensor.extract_slice
func.func @odd_k(%g: tensor<16x131xbf16>, %w: tensor<131x32xbf16>) -> tensor<16x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m = linalg.matmul ins(%g, %w : tensor<16x131xbf16>, tensor<131x32xbf16>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %m : tensor<16x32xf32>
}

// -----

// Left alone: f32 operands (CUDA cores: no faster on multiples of 8),
// dimensions under min-extent (100), and multiples of 8.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.pad
// CHECK-NOT: tensor.extract_slice
func.func @left_alone(%x: tensor<16x32xf32>, %w: tensor<32x131xf32>, %xb: tensor<16x32xbf16>, %wb: tensor<32x100xbf16>, %w8: tensor<32x136xbf16>) -> (tensor<16x131xf32>, tensor<16x100xf32>, tensor<16x136xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x131xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x131xf32>) -> tensor<16x131xf32>
  %m = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x131xf32>) outs(%f : tensor<16x131xf32>) -> tensor<16x131xf32>
  %e2 = tensor.empty() : tensor<16x100xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<16x100xf32>) -> tensor<16x100xf32>
  %m2 = linalg.matmul ins(%xb, %wb : tensor<16x32xbf16>, tensor<32x100xbf16>) outs(%f2 : tensor<16x100xf32>) -> tensor<16x100xf32>
  %e3 = tensor.empty() : tensor<16x136xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<16x136xf32>) -> tensor<16x136xf32>
  %m3 = linalg.matmul ins(%xb, %w8 : tensor<16x32xbf16>, tensor<32x136xbf16>) outs(%f3 : tensor<16x136xf32>) -> tensor<16x136xf32>
  return %m, %m2, %m3 : tensor<16x131xf32>, tensor<16x100xf32>, tensor<16x136xf32>
}
