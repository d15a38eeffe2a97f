// RUN: zero-opt %s --zero-linalg-to-blas --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @batch
// CHECK-SAME: (%[[A:.*]]: memref<2x3x4xf32>, %[[B:.*]]: memref<2x4x5xf32>, %[[C:.*]]: memref<2x3x5xf32>)
// CHECK-DAG: %[[AP:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-DAG: %[[BP:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK-DAG: %[[CP:.*]] = memref.extract_aligned_pointer_as_index %[[C]]
// The outer batch loop is missing: extent 1, stride 0.
// CHECK: call @zero_rt_sgemm(%c1_i64, %c2_i64, %c3_i64, %c5_i64, %c4_i64, %{{.*}}, %{{.*}}, %c0_i64,
// CHECK-NOT: linalg.batch_matmul
func.func @batch(%a: memref<2x3x4xf32>, %b: memref<2x4x5xf32>, %c: memref<2x3x5xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%c : memref<2x3x5xf32>)
  return
}
// CHECK: func.func private @zero_rt_sgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)

// -----

// A transposed view keeps its strides: the runtime maps it onto BLAS's
// transpose flag instead of copying.
// CHECK-LABEL: func.func @strided
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %[[STR:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK: call @zero_rt_sgemm
func.func @strided(%a: memref<3x4xf32, strided<[1, 3]>>, %b: memref<4x5xf32>, %c: memref<3x5xf32>) {
  linalg.matmul ins(%a, %b : memref<3x4xf32, strided<[1, 3]>>, memref<4x5xf32>) outs(%c : memref<3x5xf32>)
  return
}

// -----

// f64 operands: the f64 BLAS call, same arguments.
// CHECK: func.func private @zero_rt_dgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @double
// CHECK: call @zero_rt_dgemm(%c1_i64, %c1_i64{{.*}}, %c3_i64, %c5_i64, %c4_i64,
// CHECK-NOT: linalg.matmul
func.func @double(%a: memref<3x4xf64>, %b: memref<4x5xf64>, %c: memref<3x5xf64>) {
  linalg.matmul ins(%a, %b : memref<3x4xf64>, memref<4x5xf64>) outs(%c : memref<3x5xf64>)
  return
}

// -----

// Types no BLAS call takes (f64 into f32, integers), or still on
// tensors: left alone.
// CHECK-LABEL: func.func @untouched
// CHECK: linalg.matmul ins(%{{.*}} : memref<3x4xf64>, memref<4x5xf64>) outs(%{{.*}} : memref<3x5xf32>)
// CHECK: linalg.matmul ins(%{{.*}} : memref<3x4xi32>, memref<4x5xi32>)
// CHECK: linalg.matmul ins(%{{.*}} : tensor<3x4xf32>, tensor<4x5xf32>)
// CHECK-NOT: call @zero_rt_
func.func @untouched(%a: memref<3x4xf64>, %b: memref<4x5xf64>, %c: memref<3x5xf32>,
                     %ia: memref<3x4xi32>, %ib: memref<4x5xi32>, %ic: memref<3x5xi32>,
                     %ta: tensor<3x4xf32>, %tb: tensor<4x5xf32>, %tc: tensor<3x5xf32>) -> tensor<3x5xf32> {
  linalg.matmul ins(%a, %b : memref<3x4xf64>, memref<4x5xf64>) outs(%c : memref<3x5xf32>)
  linalg.matmul ins(%ia, %ib : memref<3x4xi32>, memref<4x5xi32>) outs(%ic : memref<3x5xi32>)
  %r = linalg.matmul ins(%ta, %tb : tensor<3x4xf32>, tensor<4x5xf32>) outs(%tc : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}

// -----

// An operand read through a transposed map (zero-fold-transposes-into-matmuls)
// is passed with its strides along m and k, so its two inner strides come
// swapped: BLAS reads it as stored. m, n, k come from the loops, not from
// the transposed operand's shape.
// CHECK-LABEL: func.func @transposed_maps
// CHECK-SAME: (%[[A:.*]]: memref<1x4x8xf32>, %[[B:.*]]: memref<1x6x4xf32>, %[[C:.*]]: memref<1x8x6xf32>)
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:3, %[[AS:.*]]:3 = memref.extract_strided_metadata %[[A]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:3, %[[BS:.*]]:3 = memref.extract_strided_metadata %[[B]]
// CHECK-DAG: %[[AS0:.*]] = arith.index_cast %[[AS]]#0
// CHECK-DAG: %[[AS2:.*]] = arith.index_cast %[[AS]]#2
// CHECK-DAG: %[[AS1:.*]] = arith.index_cast %[[AS]]#1
// CHECK-DAG: %[[BS2:.*]] = arith.index_cast %[[BS]]#2
// CHECK-DAG: %[[BS1:.*]] = arith.index_cast %[[BS]]#1
// CHECK: call @zero_rt_sgemm(%c1_i64, %c1_i64{{.*}}, %c8_i64, %c6_i64, %c4_i64, %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %[[AS0]], %[[AS2]], %[[AS1]], %{{.*}}, %{{.*}}, %c0_i64{{.*}}, %{{.*}}, %[[BS2]], %[[BS1]],
// CHECK-NOT: linalg.batch_matmul
func.func @transposed_maps(%a: memref<1x4x8xf32>, %b: memref<1x6x4xf32>, %c: memref<1x8x6xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
    ins(%a, %b : memref<1x4x8xf32>, memref<1x6x4xf32>) outs(%c : memref<1x8x6xf32>)
  return
}

// -----

// Attention's scores from heads that were never split out of the sequence:
// a multiply-add generic over (batch, head, m, n, k) reading Q as
// [B, T, H, d] and K as [B, T, H, d] (transposed). Each operand's strides
// along (batch, head, row, column) follow its map: Q's are (#0, #2, #1, #3),
// K's along (batch, head, k, n) are (#0, #2, #3, #1).
// CHECK-LABEL: func.func @two_batch_loops
// CHECK-SAME: (%[[Q:.*]]: memref<2x5x3x4xf32>, %[[K:.*]]: memref<2x5x3x4xf32>, %[[S:.*]]: memref<2x3x5x5xf32>)
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[QS:.*]]:4 = memref.extract_strided_metadata %[[Q]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[KS:.*]]:4 = memref.extract_strided_metadata %[[K]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[SS:.*]]:4 = memref.extract_strided_metadata %[[S]]
// CHECK-DAG: %[[Q0:.*]] = arith.index_cast %[[QS]]#0
// CHECK-DAG: %[[Q2:.*]] = arith.index_cast %[[QS]]#2
// CHECK-DAG: %[[Q1:.*]] = arith.index_cast %[[QS]]#1
// CHECK-DAG: %[[Q3:.*]] = arith.index_cast %[[QS]]#3
// CHECK-DAG: %[[K0:.*]] = arith.index_cast %[[KS]]#0
// CHECK-DAG: %[[K2:.*]] = arith.index_cast %[[KS]]#2
// CHECK-DAG: %[[K3:.*]] = arith.index_cast %[[KS]]#3
// CHECK-DAG: %[[K1:.*]] = arith.index_cast %[[KS]]#1
// CHECK-DAG: %[[S0:.*]] = arith.index_cast %[[SS]]#0
// CHECK-DAG: %[[S1:.*]] = arith.index_cast %[[SS]]#1
// CHECK-DAG: %[[S2:.*]] = arith.index_cast %[[SS]]#2
// CHECK-DAG: %[[S3:.*]] = arith.index_cast %[[SS]]#3
// CHECK: call @zero_rt_sgemm(%c2_i64, %c3_i64, %c5_i64, %c5_i64{{.*}}, %c4_i64, %{{.*}}, %{{.*}}, %[[Q0]], %[[Q2]], %[[Q1]], %[[Q3]], %{{.*}}, %{{.*}}, %[[K0]], %[[K2]], %[[K3]], %[[K1]], %{{.*}}, %{{.*}}, %[[S0]], %[[S1]], %[[S2]], %[[S3]], %c1_i64)
// CHECK-NOT: linalg.generic
func.func @two_batch_loops(%q: memref<2x5x3x4xf32>, %k: memref<2x5x3x4xf32>, %s: memref<2x3x5x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, h, m, n, k) -> (b, m, h, k)>, affine_map<(b, h, m, n, k) -> (b, n, h, k)>, affine_map<(b, h, m, n, k) -> (b, h, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
    ins(%q, %k : memref<2x5x3x4xf32>, memref<2x5x3x4xf32>) outs(%s : memref<2x3x5x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A generic that is not a multiply-add, or whose loops BLAS cannot take
// (a batch loop and two more m loops: three batch loops), stays.
// CHECK-LABEL: func.func @not_gemms
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: call @zero_rt_sgemm
func.func @not_gemms(%a: memref<3x4xf32>, %b: memref<4x5xf32>, %c: memref<3x5xf32>,
                     %a5: memref<2x2x2x3x4xf32>, %b3: memref<2x4x5xf32>, %c5: memref<2x2x2x3x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%a, %b : memref<3x4xf32>, memref<4x5xf32>) outs(%c : memref<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.addf %x, %y : f32
    %r = arith.maximumf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(b, i, j, m, n, k) -> (b, i, j, m, k)>, affine_map<(b, i, j, m, n, k) -> (b, k, n)>, affine_map<(b, i, j, m, n, k) -> (b, i, j, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]}
    ins(%a5, %b3 : memref<2x2x2x3x4xf32>, memref<2x4x5xf32>) outs(%c5 : memref<2x2x2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Two m loops: the one C indexes innermost is the GEMM's, the other a batch
// loop along which B is broadcast (stride 0), as a GEMM written in blocks
// of rows of a bucket is. The batch loop comes second of the two (the
// first, absent, has extent 1).
// CHECK-LABEL: func.func @broadcast_batch
// CHECK-SAME: (%[[A:.*]]: memref<2x3x4xf32>, %[[B:.*]]: memref<4x5xf32>, %[[C:.*]]: memref<2x3x5xf32, strided<[20, 5, 1]>>)
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:3, %[[AS:.*]]:3 = memref.extract_strided_metadata %[[A]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:3, %[[CS:.*]]:3 = memref.extract_strided_metadata %[[C]]
// CHECK-DAG: %[[A0:.*]] = arith.index_cast %[[AS]]#0
// CHECK-DAG: %[[C0:.*]] = arith.index_cast %[[CS]]#0
// CHECK: call @zero_rt_sgemm(%c1_i64, %c2_i64, %c3_i64, %c5_i64, %c4_i64, %{{.*}}, %{{.*}}, %c0_i64{{(_[0-9]+)?}}, %[[A0]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64{{(_[0-9]+)?}}, %c0_i64{{(_[0-9]+)?}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64{{(_[0-9]+)?}}, %[[C0]], %{{.*}}, %{{.*}}, %c1_i64{{(_[0-9]+)?}})
// CHECK-NOT: linalg.generic
func.func @broadcast_batch(%a: memref<2x3x4xf32>, %b: memref<4x5xf32>, %c: memref<2x3x5xf32, strided<[20, 5, 1]>>) {
  linalg.generic {indexing_maps = [affine_map<(i, m, n, k) -> (i, m, k)>, affine_map<(i, m, n, k) -> (k, n)>, affine_map<(i, m, n, k) -> (i, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
    ins(%a, %b : memref<2x3x4xf32>, memref<4x5xf32>) outs(%c : memref<2x3x5xf32, strided<[20, 5, 1]>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Any other map (a broadcast operand) is not a BLAS call.
// CHECK-LABEL: func.func @broadcast_map
// CHECK: linalg.matmul
// CHECK-NOT: call @zero_rt_sgemm
func.func @broadcast_map(%a: memref<4xf32>, %b: memref<4x6xf32>, %c: memref<8x6xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%a, %b : memref<4xf32>, memref<4x6xf32>) outs(%c : memref<8x6xf32>)
  return
}

// -----

// C filled with zeros right before the matmul: BLAS writes C without
// reading it (the last argument, accumulate, is 0) and the fill goes. A
// fill of another value, or one with a memory access in between, stays
// and the call accumulates.
// (The printer names an i64 constant after its value: %c0_i64, %c0_i64_12.)
// CHECK-LABEL: func.func @zero_fill
// CHECK-NOT: linalg.fill
// CHECK: call @zero_rt_sgemm({{.*}}, %c0_i64{{(_[0-9]+)?}}) :
// CHECK-LABEL: func.func @other_fills
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<3x5xf32>)
// CHECK: call @zero_rt_sgemm({{.*}}, %c1_i64{{(_[0-9]+)?}}) :
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<3x5xf32>)
// CHECK: memref.store
// CHECK: call @zero_rt_sgemm({{.*}}, %c1_i64{{(_[0-9]+)?}}) :
func.func @zero_fill(%a: memref<3x4xf32>, %b: memref<4x5xf32>, %c: memref<3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<3x5xf32>)
  %v = memref.subview %a[0, 0] [3, 4] [1, 1] : memref<3x4xf32> to memref<3x4xf32, strided<[4, 1]>>
  linalg.matmul ins(%v, %b : memref<3x4xf32, strided<[4, 1]>>, memref<4x5xf32>) outs(%c : memref<3x5xf32>)
  return
}
func.func @other_fills(%a: memref<3x4xf32>, %b: memref<4x5xf32>, %c: memref<3x5xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%one : f32) outs(%c : memref<3x5xf32>)
  linalg.matmul ins(%a, %b : memref<3x4xf32>, memref<4x5xf32>) outs(%c : memref<3x5xf32>)
  linalg.fill ins(%zero : f32) outs(%c : memref<3x5xf32>)
  memref.store %one, %c[%i, %i] : memref<3x5xf32>
  linalg.matmul ins(%a, %b : memref<3x4xf32>, memref<4x5xf32>) outs(%c : memref<3x5xf32>)
  return
}
