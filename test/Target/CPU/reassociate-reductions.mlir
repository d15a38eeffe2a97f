// RUN: zero-opt %s --zero-cpu-reassociate-reductions --split-input-file | FileCheck %s

// The op that folds into a reduction's accumulator gets `reassoc`; the
// elementwise op before it does not, nor does a parallel-only op.
// CHECK-LABEL: func.func @row_sum_of_squares
// CHECK: %[[SQ:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK: arith.addf %[[SQ]], %{{.*}} fastmath<reassoc> : f32
// CHECK-LABEL: func.func @elementwise
// CHECK-NOT: fastmath
func.func @row_sum_of_squares(%a: memref<4x8xf32>, %c: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<4x8xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  return
}
func.func @elementwise(%a: memref<4x8xf32>, %c: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<4x8xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// linalg.reduce with a max keeps its other flags and gains `reassoc`.
// CHECK-LABEL: func.func @row_max
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc,nnan> : f32
func.func @row_max(%a: memref<4x8xf32>, %c: memref<4xf32>) {
  linalg.reduce ins(%a : memref<4x8xf32>) outs(%c : memref<4xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %m = arith.maximumf %x, %acc fastmath<nnan> : f32
      linalg.yield %m : f32
    }
  return
}
