// RUN: zero-opt %s -split-input-file --zero-cpu-fuse-elementwise | FileCheck %s

// Plain elementwise fusion still happens: a single-use elementwise producer
// merges into its elementwise consumer, one generic doing both ops.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: arith.addf
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.mulf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}

// -----

// A producer with a second use is not fused (its result is needed anyway;
// fusing would compute it twice).
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @shared
// CHECK: %[[S:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: %[[P:.*]] = linalg.generic
// CHECK-SAME: ins(%[[S]]
// CHECK-NOT: arith.addf
// CHECK: arith.mulf
// CHECK: return %[[S]], %[[P]]
func.func @shared(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%s, %b : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.mulf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %s, %p : tensor<8xf32>, tensor<8xf32>
}

// -----

// Reshapes still fold into elementwise ops by expansion: the collapse of the
// input disappears, the generic runs on the 2x4x8 shape and its result is
// collapsed afterwards.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @reshape_elementwise
// CHECK-SAME: (%[[A:.*]]: tensor<2x4x8xf32>
// CHECK-NOT: tensor.collapse_shape %[[A]]
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%[[A]], %{{.*}} : tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
// CHECK: return %[[C]]
func.func @reshape_elementwise(%a: tensor<2x4x8xf32>, %b: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
  %e = tensor.empty() : tensor<8x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}

// -----

// The difference from upstream: an expand_shape of a batch matmul's result
// is not folded into it (upstream turns the matmul into a rank-4
// linalg.generic that zero-linalg-to-blas no longer recognizes). Its fill
// producer is not expanded either.
// CHECK-LABEL: func.func @bmm_expand_result
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<8x4x4xf32>
// CHECK: %[[M:.*]] = linalg.batch_matmul ins(%arg0, %arg1 : tensor<8x4x16xf32>, tensor<8x16x4xf32>) outs(%[[F]] : tensor<8x4x4xf32>)
// CHECK: %[[X:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1], [2], [3]] output_shape [2, 4, 4, 4]
// CHECK-NOT: linalg.generic
// CHECK: return %[[X]]
func.func @bmm_expand_result(%a: tensor<8x4x16xf32>, %b: tensor<8x16x4xf32>) -> tensor<2x4x4x4xf32> {
  %e = tensor.empty() : tensor<8x4x4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<8x4x16xf32>, tensor<8x16x4xf32>) outs(%f : tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
  %x = tensor.expand_shape %m [[0, 1], [2], [3]] output_shape [2, 4, 4, 4] : tensor<8x4x4xf32> into tensor<2x4x4x4xf32>
  return %x : tensor<2x4x4x4xf32>
}

// -----

// Nor is a collapse_shape feeding a batch matmul's operand folded into it.
// CHECK-LABEL: func.func @bmm_collapse_operand
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2], [3]] : tensor<2x4x4x16xf32> into tensor<8x4x16xf32>
// CHECK: %[[M:.*]] = linalg.batch_matmul ins(%[[C]], %arg1 : tensor<8x4x16xf32>, tensor<8x16x4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[M]]
func.func @bmm_collapse_operand(%a: tensor<2x4x4x16xf32>, %b: tensor<8x16x4xf32>) -> tensor<8x4x4xf32> {
  %c = tensor.collapse_shape %a [[0, 1], [2], [3]] : tensor<2x4x4x16xf32> into tensor<8x4x16xf32>
  %e = tensor.empty() : tensor<8x4x4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
  %m = linalg.batch_matmul ins(%c, %b : tensor<8x4x16xf32>, tensor<8x16x4xf32>) outs(%f : tensor<8x4x4xf32>) -> tensor<8x4x4xf32>
  return %m : tensor<8x4x4xf32>
}

// -----

// A contraction written as a linalg.generic is kept intact too: the
// expand_shape of its result stays after it and the generic keeps its
// three loops.
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @generic_matmul_expand
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<8x16xf32>, tensor<16x4xf32>)
// CHECK: %[[X:.*]] = tensor.expand_shape %[[G]] {{\[}}[0, 1], [2]] output_shape [2, 4, 4]
// CHECK: return %[[X]]
func.func @generic_matmul_expand(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %acc: tensor<8x4xf32>) -> tensor<2x4x4xf32> {
  %m = linalg.generic {indexing_maps = [#lhs, #rhs, #acc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%acc : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  %x = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
  return %x : tensor<2x4x4xf32>
}

// -----

// A bias add stays a separate generic after the matmul: no producer is
// fused with a contraction.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @matmul_bias
// CHECK: %[[M:.*]] = linalg.matmul
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-SAME: ins(%[[M]], %arg2 : tensor<4x4xf32>, tensor<4xf32>)
// CHECK: return %[[R]]
func.func @matmul_bias(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %bias: tensor<4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<4x4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
