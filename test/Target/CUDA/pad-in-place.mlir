// RUN: zero-opt %s --split-input-file --zero-gpu-pad-in-place | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-gpu-pad-in-place --one-shot-bufferize="bufferize-function-boundaries" --canonicalize --cse --canonicalize | FileCheck %s --check-prefix=BUF

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// The gradient written through a unit-dimension view, padded to a
// multiple of 8 for its GEMM: the producer writes the padded buffer's
// interior, the 3-column border alone is filled, and bufferized there is
// one buffer, no copy.
// CHECK-LABEL: func.func @gradient
// CHECK: %[[P:.*]] = tensor.empty() : tensor<4x8xbf16>
// CHECK: %[[SLAB:.*]] = tensor.extract_slice %[[P]][0, 5] [4, 3] [1, 1]
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : bf16) outs(%[[SLAB]] : tensor<4x3xbf16>)
// CHECK: %[[B:.*]] = tensor.insert_slice %[[F]] into %[[P]][0, 5] [4, 3] [1, 1]
// CHECK: %[[IN:.*]] = tensor.extract_slice %[[B]][0, 0] [4, 5] [1, 1]
// CHECK: %[[X:.*]] = tensor.expand_shape %[[IN]] {{\[\[}}0], [1, 2]] output_shape [4, 5, 1]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} outs(%[[X]] : tensor<4x5x1xbf16>)
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[G]]
// CHECK: %[[R:.*]] = tensor.insert_slice %[[C]] into %[[B]][0, 0] [4, 5] [1, 1]
// CHECK-NOT: tensor.pad
// CHECK: return %[[R]]
// BUF-LABEL: func.func @gradient
// BUF: memref.alloc() {{.*}} : memref<4x8xbf16>
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @gradient(%a: tensor<4x5x1xf32>) -> tensor<4x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<4x5x1xbf16>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<4x5x1xf32>) outs(%e : tensor<4x5x1xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x5x1xbf16>
  %c = tensor.collapse_shape %g [[0], [1, 2]] : tensor<4x5x1xbf16> into tensor<4x5xbf16>
  %p = tensor.pad %c low[0, 0] high[0, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : bf16
  } : tensor<4x5xbf16> to tensor<4x8xbf16>
  return %p : tensor<4x8xbf16>
}

// -----

// Padded along two dimensions: a slab per dimension.
// CHECK-LABEL: func.func @two_dims
// CHECK: tensor.extract_slice %{{.*}}[5, 0] [3, 16] [1, 1]
// CHECK: tensor.extract_slice %{{.*}}[0, 13] [8, 3] [1, 1]
// CHECK-NOT: tensor.pad
func.func @two_dims(%a: tensor<5x13xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x13xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<5x13xf32>) outs(%e : tensor<5x13xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<5x13xf32>
  %p = tensor.pad %g low[0, 0] high[3, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<5x13xf32> to tensor<8x16xf32>
  return %p : tensor<8x16xf32>
}

// -----

// Kept: a parameter (no producer), a result used twice, a producer that
// reads its destination, a pad at the low end.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: tensor.pad
func.func @kept(%w: tensor<5x4xf32>, %a: tensor<5x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<5x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %p0 = tensor.pad %w low[0, 0] high[3, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<5x4xf32> to tensor<8x4xf32>
  %e = tensor.empty() : tensor<5x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<5x4xf32>) outs(%e : tensor<5x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<5x4xf32>
  %p1 = tensor.pad %g low[0, 0] high[3, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<5x4xf32> to tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<5x4xf32>) outs(%w : tensor<5x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  } -> tensor<5x4xf32>
  %p2 = tensor.pad %r low[0, 0] high[3, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<5x4xf32> to tensor<8x4xf32>
  %e3 = tensor.empty() : tensor<5x4xf32>
  %g3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<5x4xf32>) outs(%e3 : tensor<5x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<5x4xf32>
  %p3 = tensor.pad %g3 low[3, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<5x4xf32> to tensor<8x4xf32>
  return %p0, %p1, %g, %p2, %p3 : tensor<8x4xf32>, tensor<8x4xf32>, tensor<5x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// A concat as tosa-to-tensor leaves it (insert_slice ops into an empty
// tensor), of two fresh results, produced in the other order and one seen
// through a reshape, and an argument. The empty tensor moves before the
// first producer; each producer writes an extract_slice of the chain so
// far, its insert right after it; the argument's insert comes last.
// Bufferized: one buffer, the argument's copy alone.
// CHECK-LABEL: func.func @concat
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x12xf32>
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[E]][0, 4] [4, 4] [1, 1]
// CHECK: %[[X1:.*]] = tensor.expand_shape %[[S1]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 2]
// CHECK: %[[G1:.*]] = linalg.generic {{.*}} outs(%[[X1]] : tensor<4x2x2xf32>)
// CHECK: %[[C1:.*]] = tensor.collapse_shape %[[G1]]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[C1]] into %[[E]][0, 4] [4, 4] [1, 1]
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[I1]][0, 0] [4, 4] [1, 1]
// CHECK: %[[G0:.*]] = linalg.generic {{.*}} outs(%[[S0]] : tensor<4x4xf32>)
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[G0]] into %[[I1]][0, 0] [4, 4] [1, 1]
// CHECK: %[[I2:.*]] = tensor.insert_slice %arg1 into %[[I0]][0, 8] [4, 4] [1, 1]
// CHECK: return %[[I2]]
// BUF-LABEL: func.func @concat
// BUF: memref.alloc() {{.*}} : memref<4x12xf32>
// BUF-NOT: memref.alloc
// BUF: memref.copy %arg1
// BUF-NOT: memref.copy
// BUF: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @concat(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x2x2xf32>) -> tensor<4x12xf32> {
  %e1 = tensor.empty() : tensor<4x2x2xf32>
  %g1 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%c : tensor<4x2x2xf32>) outs(%e1 : tensor<4x2x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<4x2x2xf32>
  %c1 = tensor.collapse_shape %g1 [[0], [1, 2]] : tensor<4x2x2xf32> into tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<4x4xf32>
  %g0 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x12xf32>
  %i0 = tensor.insert_slice %g0 into %e[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x12xf32>
  %i1 = tensor.insert_slice %c1 into %i0[0, 4] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x12xf32>
  %i2 = tensor.insert_slice %b into %i1[0, 8] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x12xf32>
  return %i2 : tensor<4x12xf32>
}

// -----

// The chain in a branch, its empty tensor outside: the tensor stays where
// it is (it dominates the producer), the producer writes its slice.
// CHECK-LABEL: func.func @concat_in_branch
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK: scf.if
// CHECK: %[[S:.*]] = tensor.extract_slice %[[E]][0, 0] [4, 4] [1, 1]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} outs(%[[S]] : tensor<4x4xf32>)
// CHECK: %[[I:.*]] = tensor.insert_slice %[[G]] into %[[E]][0, 0] [4, 4] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %[[I]][0, 4] [4, 4] [1, 1]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @concat_in_branch(%a: tensor<4x4xf32>, %init: tensor<4x8xf32>, %c: i1) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = scf.if %c -> (tensor<4x8xf32>) {
    %e0 = tensor.empty() : tensor<4x4xf32>
    %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<4x4xf32>) outs(%e0 : tensor<4x4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %s = arith.negf %x : f32
      linalg.yield %s : f32
    } -> tensor<4x4xf32>
    %i0 = tensor.insert_slice %g into %e[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
    %i1 = tensor.insert_slice %a into %i0[0, 4] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
    scf.yield %i1 : tensor<4x8xf32>
  } else {
    scf.yield %init : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// A GEMM that zero-split-masked-matmuls wrote as blocks into one
// alloc_tensor, a concat's operand through a reshape: the alloc_tensor
// becomes the concat's slice, so each block writes there. Bufferized: one
// buffer, the argument's copy alone.
// CHECK-LABEL: func.func @split_gemm_in_concat
// CHECK-NOT: alloc_tensor
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x12xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[E]][0, 4] [4, 4] [1, 1]
// CHECK: %[[X:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 2]
// CHECK: %[[B0:.*]] = tensor.extract_slice %[[X]][0, 0, 0] [2, 2, 2]
// CHECK: linalg.fill {{.*}} outs(%[[B0]]
// CHECK: tensor.insert_slice {{.*}} into %[[X]][0, 0, 0] [2, 2, 2]
// CHECK: tensor.insert_slice {{.*}}[2, 0, 0] [2, 2, 2]
// CHECK: tensor.collapse_shape
// CHECK: tensor.insert_slice {{.*}} into %[[E]][0, 4] [4, 4] [1, 1]
// BUF-LABEL: func.func @split_gemm_in_concat
// BUF: memref.alloc() {{.*}} : memref<4x12xf32>
// BUF-NOT: memref.alloc
// BUF: memref.copy %arg2
// BUF-NOT: memref.copy
// BUF: return
func.func @split_gemm_in_concat(%a: tensor<4x2x3xf32>, %b: tensor<4x3x2xf32>, %other: tensor<4x4xf32>) -> tensor<4x12xf32> {
  %zero = arith.constant 0.0 : f32
  %acc = bufferization.alloc_tensor() : tensor<4x2x2xf32>
  %d0 = tensor.extract_slice %acc[0, 0, 0] [2, 2, 2] [1, 1, 1] : tensor<4x2x2xf32> to tensor<2x2x2xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%d0 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %a0 = tensor.extract_slice %a[0, 0, 0] [2, 2, 3] [1, 1, 1] : tensor<4x2x3xf32> to tensor<2x2x3xf32>
  %b0 = tensor.extract_slice %b[0, 0, 0] [2, 3, 2] [1, 1, 1] : tensor<4x3x2xf32> to tensor<2x3x2xf32>
  %m0 = linalg.batch_matmul ins(%a0, %b0 : tensor<2x2x3xf32>, tensor<2x3x2xf32>) outs(%f0 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %i0 = tensor.insert_slice %m0 into %acc[0, 0, 0] [2, 2, 2] [1, 1, 1] : tensor<2x2x2xf32> into tensor<4x2x2xf32>
  %d1 = tensor.extract_slice %i0[2, 0, 0] [2, 2, 2] [1, 1, 1] : tensor<4x2x2xf32> to tensor<2x2x2xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%d1 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %a1 = tensor.extract_slice %a[2, 0, 0] [2, 2, 3] [1, 1, 1] : tensor<4x2x3xf32> to tensor<2x2x3xf32>
  %b1 = tensor.extract_slice %b[2, 0, 0] [2, 3, 2] [1, 1, 1] : tensor<4x3x2xf32> to tensor<2x3x2xf32>
  %m1 = linalg.batch_matmul ins(%a1, %b1 : tensor<2x2x3xf32>, tensor<2x3x2xf32>) outs(%f1 : tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %i1 = tensor.insert_slice %m1 into %i0[2, 0, 0] [2, 2, 2] [1, 1, 1] : tensor<2x2x2xf32> into tensor<4x2x2xf32>
  %c = tensor.collapse_shape %i1 [[0], [1, 2]] : tensor<4x2x2xf32> into tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x12xf32>
  %j0 = tensor.insert_slice %other into %e[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x12xf32>
  %j1 = tensor.insert_slice %c into %j0[0, 4] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x12xf32>
  return %j1 : tensor<4x12xf32>
}
