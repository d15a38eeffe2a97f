// RUN: zero-opt %s -split-input-file --zero-cpu-fuse-elementwise=recompute-shared=1 | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-cpu-fuse-elementwise | FileCheck %s --check-prefix=OFF

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

// A 16-bit GEMM's rounding, reshaped [1, 256, 192] -> [256, 192] -> [2,
// 128, 192] (a collapse, then an expand: no expand alone, which upstream
// would fold), then the bias add: the rounding moves past the reshape onto
// the matmul's f32 result and fuses with the add, one loop on both
// targets.
#r3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rb = affine_map<(d0, d1, d2) -> (0, 0, d2)>
// CHECK-LABEL: func.func @round_reshape_bias
// CHECK: %[[M:.*]] = linalg.batch_matmul
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[M]] {{\[}}[0, 1], [2]] : tensor<1x256x192xf32> into tensor<256x192xf32>
// CHECK: %[[X:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1], [2]] output_shape [2, 128, 192] : tensor<256x192xf32> into tensor<2x128x192xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %{{.*}} : tensor<2x128x192xf32>, tensor<1x1x192xbf16>)
// CHECK: arith.truncf
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
// OFF-LABEL: func.func @round_reshape_bias
// OFF: linalg.generic
// OFF: arith.truncf
// OFF-NEXT: arith.addf
// OFF-NEXT: linalg.yield
// OFF-NEXT: } -> tensor<2x128x192xbf16>
// OFF-NEXT: return
func.func @round_reshape_bias(%a: tensor<1x256x64xbf16>, %b: tensor<1x64x192xbf16>, %bias: tensor<1x1x192xbf16>) -> tensor<2x128x192xbf16> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x256x192xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x256x192xf32>) -> tensor<1x256x192xf32>
  %m = linalg.batch_matmul ins(%a, %b : tensor<1x256x64xbf16>, tensor<1x64x192xbf16>) outs(%f : tensor<1x256x192xf32>) -> tensor<1x256x192xf32>
  %e16 = tensor.empty() : tensor<1x256x192xbf16>
  %r = linalg.generic {indexing_maps = [#r3, #r3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%m : tensor<1x256x192xf32>) outs(%e16 : tensor<1x256x192xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x256x192xbf16>
  %c = tensor.collapse_shape %r [[0, 1], [2]] : tensor<1x256x192xbf16> into tensor<256x192xbf16>
  %x = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 128, 192] : tensor<256x192xbf16> into tensor<2x128x192xbf16>
  %eo = tensor.empty() : tensor<2x128x192xbf16>
  %y = linalg.generic {indexing_maps = [#r3, #rb, #r3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %bias : tensor<2x128x192xbf16>, tensor<1x1x192xbf16>) outs(%eo : tensor<2x128x192xbf16>) {
  ^bb0(%p: bf16, %q: bf16, %o: bf16):
    %s = arith.addf %p, %q : bf16
    linalg.yield %s : bf16
  } -> tensor<2x128x192xbf16>
  return %y : tensor<2x128x192xbf16>
}

// -----

// An op whose body reads its output's old values stays where it is: moved,
// it would write a new tensor.
#i3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @reads_init
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%arg0 : tensor<1x8x4xf32>) outs(%arg1 : tensor<1x8x4xf32>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[G]]
// CHECK: tensor.expand_shape %[[C]]
func.func @reads_init(%a: tensor<1x8x4xf32>, %b: tensor<1x8x4xf32>) -> tensor<2x4x4xf32> {
  %r = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<1x8x4xf32>) outs(%b : tensor<1x8x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %o : f32
    linalg.yield %t : f32
  } -> tensor<1x8x4xf32>
  %c = tensor.collapse_shape %r [[0, 1], [2]] : tensor<1x8x4xf32> into tensor<8x4xf32>
  %x = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32> into tensor<2x4x4xf32>
  return %x : tensor<2x4x4xf32>
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

// -----

#sm_mask = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
#sm_id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sm_in5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#sm_out5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#sm_row = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>

// A softmax's masked scores and exponentials feed a reduction and an
// elementwise op each: they are computed again in every user's loop instead
// of written and read back (each user reads the scores once, as it read
// the intermediate before), the reductions reading through their unit-dim
// expand_shape. Three loops: max, sum of exponentials, normalization.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[M:.*]]: tensor<1x1x8x8xi1>, %[[S:.*]]: tensor<2x2x8x8xf32>)
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[M]], %[[S]] : tensor<1x1x8x8xi1>, tensor<2x2x8x8xf32>)
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[S]], %[[MAX]] :
// CHECK: arith.select
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[M]], %[[S]], %[[MAX]], %[[SUM]] :
// CHECK: arith.select
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
// CHECK: return %[[P]]
// Without recompute-shared (the CPU target): the scores and the
// exponentials are stored, five loops.
// OFF-LABEL: func.func @softmax
// OFF-COUNT-5: linalg.generic
// OFF-NOT: linalg.generic
// OFF: return
func.func @softmax(%mask: tensor<1x1x8x8xi1>, %qk: tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32> {
  %cst_4 = arith.constant 0.5 : f32
  %cst_3 = arith.constant -1.0e30 : f32
  %cst_9 = arith.constant 0xFF800000 : f32
  %cst_10 = arith.constant 0.0 : f32
  %cst_8 = arith.constant 1.0 : f32
    %30 = tensor.empty() : tensor<2x2x8x8xf32>
    %31 = linalg.generic {indexing_maps = [#sm_mask, #sm_id, #sm_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask, %qk : tensor<1x1x8x8xi1>, tensor<2x2x8x8xf32>) outs(%30 : tensor<2x2x8x8xf32>) {
    ^bb0(%in: i1, %in_594: f32, %out: f32):
      %984 = arith.mulf %in_594, %cst_4 : f32
      %985 = arith.select %in, %cst_3, %984 : f32
      linalg.yield %985 : f32
    } -> tensor<2x2x8x8xf32>
    %32 = tensor.empty() : tensor<2x2x8xf32>
    %expanded_49 = tensor.expand_shape %32 [[0], [1], [2, 3]] output_shape [2, 2, 8, 1] : tensor<2x2x8xf32> into tensor<2x2x8x1xf32>
    %33 = linalg.fill ins(%cst_9 : f32) outs(%expanded_49 : tensor<2x2x8x1xf32>) -> tensor<2x2x8x1xf32>
    %expanded_50 = tensor.expand_shape %31 [[0], [1], [2, 3], [4]] output_shape [2, 2, 8, 1, 8] : tensor<2x2x8x8xf32> into tensor<2x2x8x1x8xf32>
    %34 = linalg.generic {indexing_maps = [#sm_in5, #sm_out5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%expanded_50 : tensor<2x2x8x1x8xf32>) outs(%33 : tensor<2x2x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %984 = arith.maximumf %in, %out : f32
      linalg.yield %984 : f32
    } -> tensor<2x2x8x1xf32>
    %35 = tensor.empty() : tensor<2x2x8x8xf32>
    %36 = linalg.generic {indexing_maps = [#sm_id, #sm_row, #sm_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%31, %34 : tensor<2x2x8x8xf32>, tensor<2x2x8x1xf32>) outs(%35 : tensor<2x2x8x8xf32>) {
    ^bb0(%in: f32, %in_594: f32, %out: f32):
      %984 = arith.subf %in, %in_594 : f32
      %985 = math.exp %984 : f32
      linalg.yield %985 : f32
    } -> tensor<2x2x8x8xf32>
    %37 = tensor.empty() : tensor<2x2x8xf32>
    %expanded_51 = tensor.expand_shape %37 [[0], [1], [2, 3]] output_shape [2, 2, 8, 1] : tensor<2x2x8xf32> into tensor<2x2x8x1xf32>
    %38 = linalg.fill ins(%cst_10 : f32) outs(%expanded_51 : tensor<2x2x8x1xf32>) -> tensor<2x2x8x1xf32>
    %expanded_52 = tensor.expand_shape %36 [[0], [1], [2, 3], [4]] output_shape [2, 2, 8, 1, 8] : tensor<2x2x8x8xf32> into tensor<2x2x8x1x8xf32>
    %39 = linalg.generic {indexing_maps = [#sm_in5, #sm_out5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%expanded_52 : tensor<2x2x8x1x8xf32>) outs(%38 : tensor<2x2x8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %984 = arith.addf %in, %out : f32
      linalg.yield %984 : f32
    } -> tensor<2x2x8x1xf32>
    %40 = tensor.empty() : tensor<2x2x8x8xf32>
    %41 = linalg.generic {indexing_maps = [#sm_id, #sm_row, #sm_id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%36, %39 : tensor<2x2x8x8xf32>, tensor<2x2x8x1xf32>) outs(%40 : tensor<2x2x8x8xf32>) {
    ^bb0(%in: f32, %in_594: f32, %out: f32):
      %984 = arith.divf %cst_8, %in_594 : f32
      %985 = arith.mulf %in, %984 : f32
      linalg.yield %985 : f32
    } -> tensor<2x2x8x8xf32>
  return %41 : tensor<2x2x8x8xf32>
}

// -----

// Not computed again: a producer that also leaves the function (it is
// written anyway), and one that reads more than it writes (two full
// operands: its users would read twice the bytes).
#ew = affine_map<(d0, d1) -> (d0, d1)>
#rows = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @kept
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: %[[D:.*]] = linalg.generic {{.*}} ins(%[[C]] :
// CHECK: %[[AB:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 :
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[AB]] :
// CHECK: linalg.generic {{.*}} ins(%[[AB]], %[[SUM]] :
// CHECK: return %[[C]], %[[D]]
func.func @kept(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<4xf32>
  %r = linalg.fill ins(%z : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#ew, #ew], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.exp %x : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#ew, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<4x8xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %ab = linalg.generic {indexing_maps = [#ew, #ew, #ew], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#ew, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%ab : tensor<4x8xf32>) outs(%r : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = arith.addf %x, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#ew, #rows, #ew], iterator_types = ["parallel", "parallel"]}
      ins(%ab, %s : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.divf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %c, %d, %n, %s : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>, tensor<4xf32>
}

// -----

// A 16-bit producer is computed again in its users too: its exp is a bf16
// op in each loop, rounded there as where it was stored (the lowering
// keeps one rounding per 16-bit op, zero-keep-16bit-rounding).
#ew16 = affine_map<(d0, d1) -> (d0, d1)>
#rows16 = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @bf16_recomputed
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x8xbf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[X:.*]] = math.exp %{{.*}} : bf16
// CHECK-NEXT: arith.extf %[[X]] : bf16 to f32
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[S]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp %{{.*}} : bf16
// CHECK-NOT: linalg.generic
// CHECK: return
// OFF-LABEL: func.func @bf16_recomputed
// OFF: %[[E:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x8xbf16>)
// OFF: linalg.generic {{.*}} ins(%[[E]] :
func.func @bf16_recomputed(%a: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  %e0 = tensor.empty() : tensor<4x8xbf16>
  %z = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<4xf32>
  %r = linalg.fill ins(%z : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %e = linalg.generic {indexing_maps = [#ew16, #ew16], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xbf16>) outs(%e0 : tensor<4x8xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %t = math.exp %x : bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %s = linalg.generic {indexing_maps = [#ew16, #rows16], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x8xbf16>) outs(%r : tensor<4xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    %t = arith.addf %w, %o : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#ew16, #rows16, #ew16], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x8xbf16>, tensor<4xf32>) outs(%e0 : tensor<4x8xbf16>) {
  ^bb0(%x: bf16, %y: f32, %o: bf16):
    %w = arith.extf %x : bf16 to f32
    %t = arith.divf %w, %y : f32
    %u = arith.truncf %t : f32 to bf16
    linalg.yield %u : bf16
  } -> tensor<4x8xbf16>
  return %n : tensor<4x8xbf16>
}

// -----

// A softmax backward in bf16, as the training step builds it: the
// probabilities widened to f32 and the gradient rounded through bf16 feed
// both the row sum of their product (a linalg.reduce whose kept axis is an
// expand_shape) and the elementwise result. The reduction becomes a
// generic that keeps the expand outside it (folded in, its unit loop would
// be indexed by its output alone, and upstream fuses nothing into such a
// loop nest), and, being a contraction that is no GEMM, takes both
// producers: two loops, each reading the bf16 probabilities and the f32
// gradient, instead of two f32 copies written and read twice.
#sb_id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sb_row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-LABEL: func.func @softmax_backward
// CHECK-SAME: (%[[P:.*]]: tensor<2x8x8xbf16>, %[[G:.*]]: tensor<2x8x8xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x8x8x{{.*}}, tensor<2x8x8x{{.*}}) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK-DAG: arith.extf
// CHECK-DAG: arith.truncf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[SE:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0], [1, 2]] output_shape [2, 8, 1]
// CHECK: %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins({{.*}}%[[SE]]{{.*}}) outs(%{{.*}} : tensor<2x8x8xbf16>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
// The CPU target keeps its fusion as it was: the two widened copies are
// written and read by the reduction (the kept axis folded in) and the
// elementwise result.
// OFF-LABEL: func.func @softmax_backward
// OFF-COUNT-2: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8x8xf32>)
// OFF: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// OFF: linalg.generic
// OFF-NOT: linalg.generic
// OFF: return
func.func @softmax_backward(%p: tensor<2x8x8xbf16>, %g: tensor<2x8x8xf32>) -> tensor<2x8x8xbf16> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<2x8x8xf32>
  %pf = linalg.generic {indexing_maps = [#sb_id, #sb_id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p : tensor<2x8x8xbf16>) outs(%e0 : tensor<2x8x8xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<2x8x8xf32>
  %e1 = tensor.empty() : tensor<2x8x8xf32>
  %gr = linalg.generic {indexing_maps = [#sb_id, #sb_id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g : tensor<2x8x8xf32>) outs(%e1 : tensor<2x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %in : f32 to bf16
    %x = arith.extf %t : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<2x8x8xf32>
  %e2 = tensor.empty() : tensor<2x8x8xf32>
  %prod = linalg.generic {indexing_maps = [#sb_id, #sb_id, #sb_id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%gr, %pf : tensor<2x8x8xf32>, tensor<2x8x8xf32>) outs(%e2 : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x8x8xf32>
  %e3 = tensor.empty() : tensor<2x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sum = linalg.reduce ins(%prod : tensor<2x8x8xf32>) outs(%init : tensor<2x8xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %kept = tensor.expand_shape %sum [[0], [1, 2]] output_shape [2, 8, 1] : tensor<2x8xf32> into tensor<2x8x1xf32>
  %e4 = tensor.empty() : tensor<2x8x8xbf16>
  %r = linalg.generic {indexing_maps = [#sb_id, #sb_id, #sb_row, #sb_id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pf, %gr, %kept : tensor<2x8x8xf32>, tensor<2x8x8xf32>, tensor<2x8x1xf32>) outs(%e4 : tensor<2x8x8xbf16>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: bf16):
    %d = arith.subf %b, %c : f32
    %m = arith.mulf %a, %d : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x8x8xbf16>
  return %r : tensor<2x8x8xbf16>
}

// -----

#lab = affine_map<(d0, d1, d2) -> (d0, 0)>
#cls = affine_map<(d0, d1, d2) -> (0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d0)>

// A loss gradient's one-hot tensor, summed over the classes (and a loop of
// one iteration, which upstream fusion cannot take in) and added to the
// softmax's gradient: the sum becomes a gather of the label's class
// (zero-gather-one-hot-reductions), and the one-hot tensor, left with one
// user, fuses into it. Nothing of the tensor's size is written but the
// gradient.
// CHECK-LABEL: func.func @one_hot_gradient
// CHECK-SAME: (%[[LABELS:.*]]: tensor<4x1xi64>, %[[G:.*]]: tensor<4x5x1xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[LABELS]] : tensor<4x1xi64>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[LABELS]], %{{.*}}, %[[G]] :
// CHECK: arith.cmpi eq
// CHECK-NOT: linalg.generic
// OFF-LABEL: func.func @one_hot_gradient
// OFF: iterator_types = ["parallel"]
// OFF: iterator_types = ["parallel", "parallel", "parallel"]
// OFF-NOT: linalg.generic
func.func @one_hot_gradient(%labels: tensor<4x1xi64>, %g: tensor<4x5x1xf32>) -> (tensor<4xf32>, tensor<4x5x1xf32>) {
  %ids = arith.constant dense<[[0, 1, 2, 3, 4]]> : tensor<1x5xi64>
  %zero = arith.constant 0.0 : f32
  %c = arith.constant -2.5e-1 : f32
  %e = tensor.empty() : tensor<4x5x1xf32>
  %hot = linalg.generic {indexing_maps = [#lab, #cls, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%labels, %ids : tensor<4x1xi64>, tensor<1x5xi64>) outs(%e : tensor<4x5x1xf32>) {
  ^bb0(%l: i64, %k: i64, %o: f32):
    %eq = arith.cmpi eq, %l, %k : i64
    %p = arith.select %eq, %c, %zero : f32
    linalg.yield %p : f32
  } -> tensor<4x5x1xf32>
  %es = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%es : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #out3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%hot : tensor<4x5x1xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %n = arith.negf %in : f32
    %s = arith.addf %n, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %eu = tensor.empty() : tensor<4x5x1xf32>
  %use = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%hot, %g : tensor<4x5x1xf32>, tensor<4x5x1xf32>) outs(%eu : tensor<4x5x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x5x1xf32>
  return %sum, %use : tensor<4xf32>, tensor<4x5x1xf32>
}

// -----

// A bias added to a bf16 GEMM's product that both the GELU and a later use
// (its backward) read: the add reads the f32 product only to round it, and
// the GEMM will write it rounded (zero-round-matmul-results), so the add
// reads as many bytes as it writes and is computed in each user, which
// reads the product. With an accumulating GEMM (no zero fill) the product
// stays f32 in memory: the add is written once.
#gb = affine_map<(d0, d1) -> (d0, d1)>
#gbias = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @gemm_bias_recomputed
// CHECK: %[[M:.*]] = linalg.matmul
// CHECK: linalg.generic {{.*}} ins(%[[M]], %arg2 :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: math.erf
// CHECK: linalg.generic {{.*}} ins(%[[M]], %arg2, %arg3 :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.truncf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return
// OFF-LABEL: func.func @gemm_bias_recomputed
// OFF: %[[M:.*]] = linalg.matmul
// OFF: %[[H:.*]] = linalg.generic {{.*}} ins(%[[M]], %arg2 :
// OFF: linalg.generic {{.*}} ins(%[[H]] :
// OFF: linalg.generic {{.*}} ins(%[[H]], %arg3 :
func.func @gemm_bias_recomputed(%a: tensor<8x16xbf16>, %b: tensor<16x32xbf16>, %bias: tensor<32xbf16>, %g: tensor<8x32xbf16>) -> (tensor<8x32xbf16>, tensor<8x32xbf16>) {
  %z = arith.constant 0.0 : f32
  %e32 = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e32 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %m = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x32xbf16>) outs(%f : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e = tensor.empty() : tensor<8x32xbf16>
  %h = linalg.generic {indexing_maps = [#gb, #gbias, #gb], iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<8x32xf32>, tensor<32xbf16>) outs(%e : tensor<8x32xbf16>) {
  ^bb0(%x: f32, %y: bf16, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    %t = arith.addf %r, %y : bf16
    linalg.yield %t : bf16
  } -> tensor<8x32xbf16>
  %gelu = linalg.generic {indexing_maps = [#gb, #gb], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x32xbf16>) outs(%e : tensor<8x32xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %t = math.erf %x : bf16
    linalg.yield %t : bf16
  } -> tensor<8x32xbf16>
  %back = linalg.generic {indexing_maps = [#gb, #gb, #gb], iterator_types = ["parallel", "parallel"]}
      ins(%h, %g : tensor<8x32xbf16>, tensor<8x32xbf16>) outs(%e : tensor<8x32xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %o: bf16):
    %t = arith.mulf %x, %y : bf16
    linalg.yield %t : bf16
  } -> tensor<8x32xbf16>
  return %gelu, %back : tensor<8x32xbf16>, tensor<8x32xbf16>
}

// -----

#ga = affine_map<(d0, d1) -> (d0, d1)>
#gabias = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @accumulating_gemm_bias_kept
// CHECK: %[[M:.*]] = linalg.matmul
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[M]], %arg3 :
// CHECK: linalg.generic {{.*}} ins(%[[H]] :
// CHECK: linalg.generic {{.*}} ins(%[[H]], %arg4 :
func.func @accumulating_gemm_bias_kept(%a: tensor<8x16xbf16>, %b: tensor<16x32xbf16>, %acc: tensor<8x32xf32>, %bias: tensor<32xbf16>, %g: tensor<8x32xbf16>) -> (tensor<8x32xbf16>, tensor<8x32xbf16>) {
  %m = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x32xbf16>) outs(%acc : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e = tensor.empty() : tensor<8x32xbf16>
  %h = linalg.generic {indexing_maps = [#ga, #gabias, #ga], iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<8x32xf32>, tensor<32xbf16>) outs(%e : tensor<8x32xbf16>) {
  ^bb0(%x: f32, %y: bf16, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    %t = arith.addf %r, %y : bf16
    linalg.yield %t : bf16
  } -> tensor<8x32xbf16>
  %gelu = linalg.generic {indexing_maps = [#ga, #ga], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x32xbf16>) outs(%e : tensor<8x32xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %t = math.erf %x : bf16
    linalg.yield %t : bf16
  } -> tensor<8x32xbf16>
  %back = linalg.generic {indexing_maps = [#ga, #ga, #ga], iterator_types = ["parallel", "parallel"]}
      ins(%h, %g : tensor<8x32xbf16>, tensor<8x32xbf16>) outs(%e : tensor<8x32xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %o: bf16):
    %t = arith.mulf %x, %y : bf16
    linalg.yield %t : bf16
  } -> tensor<8x32xbf16>
  return %gelu, %back : tensor<8x32xbf16>, tensor<8x32xbf16>
}

// -----

// The GEMM's product is also read in f32 (the loss's logits): it stays f32
// in memory, and the bias add is written once.
#gf = affine_map<(d0, d1) -> (d0, d1)>
#gfbias = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @gemm_read_in_f32_bias_kept
// CHECK: %[[M:.*]] = linalg.matmul
// CHECK: %[[H:.*]] = linalg.generic {{.*}} ins(%[[M]], %arg2 :
// CHECK: linalg.generic {{.*}} ins(%[[H]] :
// CHECK: linalg.generic {{.*}} ins(%[[H]], %arg3 :
func.func @gemm_read_in_f32_bias_kept(%a: tensor<8x16xbf16>, %b: tensor<16x32xbf16>, %bias: tensor<32xbf16>, %g: tensor<8x32xbf16>) -> (tensor<8x32xbf16>, tensor<8x32xbf16>, tensor<8x32xf32>) {
  %z = arith.constant 0.0 : f32
  %e32 = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e32 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %m = linalg.matmul ins(%a, %b : tensor<8x16xbf16>, tensor<16x32xbf16>) outs(%f : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e = tensor.empty() : tensor<8x32xbf16>
  %h = linalg.generic {indexing_maps = [#gf, #gfbias, #gf], iterator_types = ["parallel", "parallel"]}
      ins(%m, %bias : tensor<8x32xf32>, tensor<32xbf16>) outs(%e : tensor<8x32xbf16>) {
  ^bb0(%x: f32, %y: bf16, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    %t = arith.addf %r, %y : bf16
    linalg.yield %t : bf16
  } -> tensor<8x32xbf16>
  %gelu = linalg.generic {indexing_maps = [#gf, #gf], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x32xbf16>) outs(%e : tensor<8x32xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %t = math.erf %x : bf16
    linalg.yield %t : bf16
  } -> tensor<8x32xbf16>
  %back = linalg.generic {indexing_maps = [#gf, #gf, #gf], iterator_types = ["parallel", "parallel"]}
      ins(%h, %g : tensor<8x32xbf16>, tensor<8x32xbf16>) outs(%e : tensor<8x32xbf16>) {
  ^bb0(%x: bf16, %y: bf16, %o: bf16):
    %t = arith.mulf %x, %y : bf16
    linalg.yield %t : bf16
  } -> tensor<8x32xbf16>
  %wide = linalg.generic {indexing_maps = [#gf, #gf], iterator_types = ["parallel", "parallel"]}
      ins(%m : tensor<8x32xf32>) outs(%e32 : tensor<8x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.exp %x : f32
    linalg.yield %t : f32
  } -> tensor<8x32xf32>
  return %gelu, %back, %wide : tensor<8x32xbf16>, tensor<8x32xbf16>, tensor<8x32xf32>
}

// -----

// A shared producer written with unit dimensions its users do not have (a
// layer norm's backward writes [1, B, 1, T, D, 1]), collapsed for two users:
// with recompute-shared, it runs over the kept loops, reads its unit-expanded
// input whole, and is computed again in both users; nothing is written at
// [1, 4, 1, 8].
#w = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row4 = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @unit_collapse_recomputed
// CHECK-NOT: tensor<1x4x1x8xbf16>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: return
// OFF-LABEL: func.func @unit_collapse_recomputed
// OFF: tensor.collapse_shape %{{.*}} : tensor<1x4x1x8xbf16> into tensor<4x8xbf16>
func.func @unit_collapse_recomputed(%x: tensor<4x8xbf16>, %s: tensor<4xf32>, %dy: tensor<4x8xbf16>) -> (tensor<4xf32>, tensor<4x8xbf16>) {
  %xe = tensor.expand_shape %x [[0, 1], [2, 3]] output_shape [1, 4, 1, 8] : tensor<4x8xbf16> into tensor<1x4x1x8xbf16>
  %e = tensor.empty() : tensor<1x4x1x8xbf16>
  %c = linalg.generic {indexing_maps = [#w, #row4, #w], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%xe, %s : tensor<1x4x1x8xbf16>, tensor<4xf32>) outs(%e : tensor<1x4x1x8xbf16>) {
  ^bb0(%a: bf16, %r: f32, %o: bf16):
    %wa = arith.extf %a : bf16 to f32
    %m = arith.mulf %wa, %r : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x4x1x8xbf16>
  %cc = tensor.collapse_shape %c [[0, 1], [2, 3]] : tensor<1x4x1x8xbf16> into tensor<4x8xbf16>
  %z = arith.constant 0.0 : f32
  %a0 = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%z : f32) outs(%a0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dy, %cc : tensor<4x8xbf16>, tensor<4x8xbf16>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: bf16, %v: bf16, %o: f32):
    %p = arith.mulf %d, %v : bf16
    %pw = arith.extf %p : bf16 to f32
    %n = arith.addf %pw, %o : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xbf16>
  %out = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %cc : tensor<4x8xbf16>, tensor<4x8xbf16>) outs(%e2 : tensor<4x8xbf16>) {
  ^bb0(%d: bf16, %v: bf16, %o: bf16):
    %n = arith.addf %d, %v : bf16
    linalg.yield %n : bf16
  } -> tensor<4x8xbf16>
  return %sum, %out : tensor<4xf32>, tensor<4x8xbf16>
}
