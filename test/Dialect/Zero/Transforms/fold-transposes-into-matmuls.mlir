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

// A permutation that moves the batch dimension (`[4, 2, 3] -> [2, 4, 3]`):
// the product becomes a multiply-add generic that reads A as stored, its
// batch in the middle.
// CHECK-DAG: #[[A_MAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d3)>
// CHECK-LABEL: func.func @batch_moved
// CHECK-SAME: (%[[A:.*]]: tensor<4x2x3xf32>, %[[B:.*]]: tensor<2x3x5xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[A_MAP]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[A]], %[[B]] :
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @batch_moved(%a: tensor<4x2x3xf32>, %b: tensor<2x3x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x4x3xf32>
  %at = linalg.transpose ins(%a : tensor<4x2x3xf32>) outs(%e0 : tensor<2x4x3xf32>) permutation = [1, 0, 2]
  %e1 = tensor.empty() : tensor<2x4x5xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %y = linalg.batch_matmul ins(%at, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%f1 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %y : tensor<2x4x5xf32>
}

// -----

// A permutation that would leave a batch dimension innermost: BLAS could
// not read it, the transpose stays.
// CHECK-LABEL: func.func @batch_innermost
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul ins(
func.func @batch_innermost(%a: tensor<4x3x2xf32>, %b: tensor<2x3x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x4x3xf32>
  %at = linalg.transpose ins(%a : tensor<4x3x2xf32>) outs(%e0 : tensor<2x4x3xf32>) permutation = [2, 0, 1]
  %e1 = tensor.empty() : tensor<2x4x5xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %y = linalg.batch_matmul ins(%at, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%f1 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %y : tensor<2x4x5xf32>
}

// -----

// Attention as imported: Q, K, V split into heads ([B, T, H, d] ->
// [B, H, T, d], K to [B, H, d, T]), collapsed to [B*H, T, d] for batched
// products, and the output merged back ([B, H, T, d] -> [B, T, H, d]).
// Each GEMM gets a loop per batch dimension, (b, h, m, n, k), and reads the
// heads and writes the merged output in place: no transpose is left, and
// the scores keep their [B*H, T, T] shape for the softmax between.
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// CHECK-DAG: #[[KT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d1, d4)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[V:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d1, d3)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @attention_heads
// CHECK-SAME: (%[[QI:.*]]: tensor<2x5x3x4xf32>, %[[KI:.*]]: tensor<2x5x3x4xf32>, %[[VI:.*]]: tensor<2x5x3x4xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[SC:.*]] = linalg.generic {indexing_maps = [#[[Q]], #[[KT]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[QI]], %[[KI]] : tensor<2x5x3x4xf32>, tensor<2x5x3x4xf32>) outs(%{{.*}} : tensor<2x3x5x5xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[SC]] {{\[\[}}0, 1], [2], [3]] : tensor<2x3x5x5xf32> into tensor<6x5x5xf32>
// CHECK: %[[SM:.*]] = linalg.generic {{.*}} ins(%[[FLAT]] :
// CHECK: %[[SPLIT:.*]] = tensor.expand_shape %[[SM]] {{\[\[}}0, 1], [2], [3]] output_shape [2, 3, 5, 5]
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x5x3x4xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x5x3x4xf32>)
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[P]], #[[V]], #[[O]]], {{.*}}} ins(%[[SPLIT]], %[[VI]] : tensor<2x3x5x5xf32>, tensor<2x5x3x4xf32>) outs(%[[F]] : tensor<2x5x3x4xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[OUT]]
func.func @attention_heads(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>, %v: tensor<2x5x3x4xf32>) -> tensor<2x5x3x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5x4xf32>
  %qh = linalg.transpose ins(%q : tensor<2x5x3x4xf32>) outs(%e : tensor<2x3x5x4xf32>) permutation = [0, 2, 1, 3]
  %vh = linalg.transpose ins(%v : tensor<2x5x3x4xf32>) outs(%e : tensor<2x3x5x4xf32>) permutation = [0, 2, 1, 3]
  %ek = tensor.empty() : tensor<2x3x4x5xf32>
  %kh = linalg.transpose ins(%k : tensor<2x5x3x4xf32>) outs(%ek : tensor<2x3x4x5xf32>) permutation = [0, 2, 3, 1]
  %q3 = tensor.collapse_shape %qh [[0, 1], [2], [3]] : tensor<2x3x5x4xf32> into tensor<6x5x4xf32>
  %k3 = tensor.collapse_shape %kh [[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
  %v3 = tensor.collapse_shape %vh [[0, 1], [2], [3]] : tensor<2x3x5x4xf32> into tensor<6x5x4xf32>
  %es = tensor.empty() : tensor<6x5x5xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<6x5x4xf32>, tensor<6x4x5xf32>) outs(%fs : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<6x5x5xf32>) outs(%es : tensor<6x5x5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = math.exp %x : f32
    linalg.yield %y : f32
  } -> tensor<6x5x5xf32>
  %eo = tensor.empty() : tensor<6x5x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<6x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = linalg.batch_matmul ins(%p, %v3 : tensor<6x5x5xf32>, tensor<6x5x4xf32>) outs(%fo : tensor<6x5x4xf32>) -> tensor<6x5x4xf32>
  %o4 = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 3, 5, 4] : tensor<6x5x4xf32> into tensor<2x3x5x4xf32>
  %em = tensor.empty() : tensor<2x5x3x4xf32>
  %o = linalg.transpose ins(%o4 : tensor<2x3x5x4xf32>) outs(%em : tensor<2x5x3x4xf32>) permutation = [0, 2, 1, 3]
  return %o : tensor<2x5x3x4xf32>
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

// -----

// The same in bf16, as mixed precision writes it: 16-bit heads multiplied
// into f32 sums, rounded to bf16 before the heads merge. The GEMMs read
// the bf16 heads through their maps (widened in the body, as the named op
// widens them), and the merge moves above the rounding so that the
// product is written merged: no transpose is left.
// CHECK-DAG: #[[Q16:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d4)>
// CHECK-DAG: #[[O16:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @attention_heads_bf16
// CHECK-SAME: (%[[QI:.*]]: tensor<2x5x3x4xbf16>, %[[KI:.*]]: tensor<2x5x3x4xbf16>, %[[VI:.*]]: tensor<2x5x3x4xbf16>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[Q16]], {{.*}}} ins(%[[QI]], %[[KI]] : tensor<2x5x3x4xbf16>, tensor<2x5x3x4xbf16>) outs(%{{.*}} : tensor<2x3x5x5xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: bf16, %[[C:.*]]: f32):
// CHECK-NEXT: %[[WA:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT: %[[WB:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[WA]], %[[WB]] : f32
// CHECK-NEXT: arith.addf %[[C]], %[[M]] : f32
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [{{.*}}, #[[O16]]], {{.*}}} ins(%{{.*}}, %[[VI]] : tensor<2x3x5x5xbf16>, tensor<2x5x3x4xbf16>) outs(%{{.*}} : tensor<2x5x3x4xf32>)
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[OUT]] : tensor<2x5x3x4xf32>) outs(%{{.*}} : tensor<2x5x3x4xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]]
func.func @attention_heads_bf16(%q: tensor<2x5x3x4xbf16>, %k: tensor<2x5x3x4xbf16>, %v: tensor<2x5x3x4xbf16>) -> tensor<2x5x3x4xbf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5x4xbf16>
  %qh = linalg.transpose ins(%q : tensor<2x5x3x4xbf16>) outs(%e : tensor<2x3x5x4xbf16>) permutation = [0, 2, 1, 3]
  %vh = linalg.transpose ins(%v : tensor<2x5x3x4xbf16>) outs(%e : tensor<2x3x5x4xbf16>) permutation = [0, 2, 1, 3]
  %ek = tensor.empty() : tensor<2x3x4x5xbf16>
  %kh = linalg.transpose ins(%k : tensor<2x5x3x4xbf16>) outs(%ek : tensor<2x3x4x5xbf16>) permutation = [0, 2, 3, 1]
  %q3 = tensor.collapse_shape %qh [[0, 1], [2], [3]] : tensor<2x3x5x4xbf16> into tensor<6x5x4xbf16>
  %k3 = tensor.collapse_shape %kh [[0, 1], [2], [3]] : tensor<2x3x4x5xbf16> into tensor<6x4x5xbf16>
  %v3 = tensor.collapse_shape %vh [[0, 1], [2], [3]] : tensor<2x3x5x4xbf16> into tensor<6x5x4xbf16>
  %es = tensor.empty() : tensor<6x5x5xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %s = linalg.batch_matmul ins(%q3, %k3 : tensor<6x5x4xbf16>, tensor<6x4x5xbf16>) outs(%fs : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %ep = tensor.empty() : tensor<6x5x5xbf16>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<6x5x5xf32>) outs(%ep : tensor<6x5x5xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %y = math.exp %x : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<6x5x5xbf16>
  %eo = tensor.empty() : tensor<6x5x4xf32>
  %fo = linalg.fill ins(%zero : f32) outs(%eo : tensor<6x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = linalg.batch_matmul ins(%p, %v3 : tensor<6x5x5xbf16>, tensor<6x5x4xbf16>) outs(%fo : tensor<6x5x4xf32>) -> tensor<6x5x4xf32>
  %o4 = tensor.expand_shape %o3 [[0, 1], [2], [3]] output_shape [2, 3, 5, 4] : tensor<6x5x4xf32> into tensor<2x3x5x4xf32>
  %er = tensor.empty() : tensor<2x3x5x4xbf16>
  %r4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%o4 : tensor<2x3x5x4xf32>) outs(%er : tensor<2x3x5x4xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x3x5x4xbf16>
  %em = tensor.empty() : tensor<2x5x3x4xbf16>
  %o = linalg.transpose ins(%r4 : tensor<2x3x5x4xbf16>) outs(%em : tensor<2x5x3x4xbf16>) permutation = [0, 2, 1, 3]
  return %o : tensor<2x5x3x4xbf16>
}

// -----

// Kept: a rounded product that something else reads too (moving the
// transpose above it would compute the rounding twice).
// CHECK-LABEL: func.func @rounded_used_twice
// CHECK: linalg.batch_matmul
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: linalg.transpose ins(%[[R]]
func.func @rounded_used_twice(%a: tensor<6x5x4xbf16>, %b: tensor<6x4x5xbf16>) -> (tensor<2x5x3x5xbf16>, tensor<2x3x5x5xbf16>) {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<6x5x5xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %s = linalg.batch_matmul ins(%a, %b : tensor<6x5x4xbf16>, tensor<6x4x5xbf16>) outs(%fs : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 3, 5, 5] : tensor<6x5x5xf32> into tensor<2x3x5x5xf32>
  %er = tensor.empty() : tensor<2x3x5x5xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s4 : tensor<2x3x5x5xf32>) outs(%er : tensor<2x3x5x5xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x3x5x5xbf16>
  %em = tensor.empty() : tensor<2x5x3x5xbf16>
  %o = linalg.transpose ins(%r : tensor<2x3x5x5xbf16>) outs(%em : tensor<2x5x3x5xbf16>) permutation = [0, 2, 1, 3]
  return %o, %r : tensor<2x5x3x5xbf16>, tensor<2x3x5x5xbf16>
}

// -----

// Kept where the product could not be written transposed: a GEMM that
// accumulates onto its argument (no fill), whose transpose would only move
// onto the f32 product; and a rounding whose body reads its indices,
// which the transpose would permute.
// CHECK-LABEL: func.func @rounding_kept
// CHECK: %[[P:.*]] = linalg.batch_matmul
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3x5x5xf32>)
// CHECK: linalg.transpose ins(%[[R]]
// CHECK: %[[I:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x3x5x5xf32>)
// CHECK: linalg.index
// CHECK: linalg.transpose ins(%[[I]]
func.func @rounding_kept(%a: tensor<6x5x4xbf16>, %b: tensor<6x4x5xbf16>, %c: tensor<6x5x5xf32>) -> (tensor<2x5x3x5xbf16>, tensor<2x5x3x5xbf16>) {
  %zero = arith.constant 0.0 : f32
  %s = linalg.batch_matmul ins(%a, %b : tensor<6x5x4xbf16>, tensor<6x4x5xbf16>) outs(%c : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %s4 = tensor.expand_shape %s [[0, 1], [2], [3]] output_shape [2, 3, 5, 5] : tensor<6x5x5xf32> into tensor<2x3x5x5xf32>
  %er = tensor.empty() : tensor<2x3x5x5xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s4 : tensor<2x3x5x5xf32>) outs(%er : tensor<2x3x5x5xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x3x5x5xbf16>
  %em = tensor.empty() : tensor<2x5x3x5xbf16>
  %o = linalg.transpose ins(%r : tensor<2x3x5x5xbf16>) outs(%em : tensor<2x5x3x5xbf16>) permutation = [0, 2, 1, 3]
  %es = tensor.empty() : tensor<6x5x5xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %t = linalg.batch_matmul ins(%a, %b : tensor<6x5x4xbf16>, tensor<6x4x5xbf16>) outs(%fs : tensor<6x5x5xf32>) -> tensor<6x5x5xf32>
  %t4 = tensor.expand_shape %t [[0, 1], [2], [3]] output_shape [2, 3, 5, 5] : tensor<6x5x5xf32> into tensor<2x3x5x5xf32>
  %i = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t4 : tensor<2x3x5x5xf32>) outs(%er : tensor<2x3x5x5xbf16>) {
  ^bb0(%x: f32, %o2: bf16):
    %k = linalg.index 1 : index
    %k32 = arith.index_cast %k : index to i32
    %kf = arith.sitofp %k32 : i32 to f32
    %y = arith.addf %x, %kf : f32
    %u = arith.truncf %y : f32 to bf16
    linalg.yield %u : bf16
  } -> tensor<2x3x5x5xbf16>
  %o2 = linalg.transpose ins(%i : tensor<2x3x5x5xbf16>) outs(%em : tensor<2x5x3x5xbf16>) permutation = [0, 2, 1, 3]
  return %o, %o2 : tensor<2x5x3x5xbf16>, tensor<2x5x3x5xbf16>
}
