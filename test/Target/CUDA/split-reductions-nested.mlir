// RUN: zero-opt %s --zero-gpu-split-reductions | FileCheck %s

// A sum over 131072 elements (a gradient shard's sum of squares): 4096
// interleaved partials of 32, then their combine, itself 4096 iterations
// long, split the same way into 128 partials of 32, then those 128 added
// into the output in order: three launches instead of one thread.
// CHECK-LABEL: func.func @long_sum
// CHECK: %[[E1:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [32, 4096]
// CHECK: %[[P1:.*]] = memref.alloc() : memref<4096xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[E1]] : memref<32x4096xf32>) outs(%[[P1]] : memref<4096xf32>)
// CHECK: arith.mulf
// CHECK: %[[V1:.*]] = memref.subview %[[P1]][0] [4096] [1]
// CHECK: %[[E2:.*]] = memref.expand_shape %[[V1]] {{\[\[}}0, 1]] output_shape [32, 128]
// CHECK: %[[P2:.*]] = memref.alloc() : memref<128xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[E2]] : memref<32x128xf32>) outs(%[[P2]] : memref<128xf32>)
// CHECK-NOT: arith.mulf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[P2]] : memref<128xf32>) outs(%arg1 : memref<f32>)
// CHECK: memref.dealloc %[[P2]]
// CHECK: memref.dealloc %[[P1]]
// CHECK-NEXT: return
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
func.func @long_sum(%x: memref<131072xf32>, %out: memref<f32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#id, #sc], iterator_types = ["reduction"]} ins(%x : memref<131072xf32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  return
}
