// RUN: zero-opt %s --zero-gpu-split-reductions -split-input-file | FileCheck %s

// A sum of squares over a 1600x6400 gradient (the global norm's): its two
// reduction loops are one in memory, so they become one loop of 10,240,000
// iterations, split into 64,000 interleaved partials of 160 (the largest
// count up to 65536 and down to half of it that divides it: no tail), not
// into 1600 partials that would each read a row of 6400 on one thread. The
// combine of 64,000 partials is split again: 2000, then 50, then the output.
// CHECK-LABEL: func.func @matrix_norm
// CHECK: %[[C:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<1600x6400xbf16> into memref<10240000xbf16>
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [160, 64000]
// CHECK: %[[P:.*]] = memref.alloc() : memref<64000xf32>
// CHECK: iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : memref<160x64000xbf16>) outs(%[[P]] : memref<64000xf32>)
// CHECK: arith.extf
// CHECK: memref.alloc() : memref<2000xf32>
// CHECK: memref.alloc() : memref<50xf32>
// CHECK: ins(%{{.*}} : memref<50xf32>) outs(%arg1 : memref<f32>)
// CHECK-NOT: memref.subview %[[C]]
// CHECK: return
#nm = affine_map<(d0, d1) -> (d0, d1)>
#ns = affine_map<(d0, d1) -> ()>
func.func @matrix_norm(%g: memref<1600x6400xbf16>, %out: memref<f32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#nm, #ns], iterator_types = ["reduction", "reduction"]} ins(%g : memref<1600x6400xbf16>) outs(%out : memref<f32>) {
  ^bb0(%in: bf16, %acc: f32):
    %e = arith.extf %in : bf16 to f32
    %sq = arith.mulf %e, %e : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Rows reduced over a kept unit dimension and 6400 features: the unit loop
// and the features collapse into one loop, so each row takes a warp of 32
// interleaved partials of 200.
// CHECK-LABEL: func.func @kept_dim
// CHECK: memref.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : memref<1600x1x6400xf32> into memref<1600x6400xf32>
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [1600, 200, 32]
// CHECK: %[[P:.*]] = memref.alloc() : memref<1600x32xf32>
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}}) outs(%[[P]] : memref<1600x32xf32>)
// CHECK: ins(%[[P]] : memref<1600x32xf32>) outs(%arg1 : memref<1600xf32>)
// CHECK: return
#r3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ro = affine_map<(d0, d1, d2) -> (d0)>
func.func @kept_dim(%x: memref<1600x1x6400xf32>, %out: memref<1600xf32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#r3, #ro], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : memref<1600x1x6400xf32>) outs(%out : memref<1600xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Rows 8192 elements apart with 4096 used are not one loop in memory: no
// collapse (a collapse_shape of them would be invalid). The inner loop
// allows more partials than the 64 rows: 4096 interleaved partials, each
// adding its column of the 64 rows, then their sum in two levels.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: memref.collapse_shape
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [64, 1, 4096]
// CHECK: memref.alloc() : memref<4096xf32>
// CHECK: iterator_types = ["reduction", "reduction", "parallel"]
// CHECK: memref.alloc() : memref<128xf32>
// CHECK: return
#s2 = affine_map<(d0, d1) -> (d0, d1)>
#s0 = affine_map<(d0, d1) -> ()>
func.func @strided(%x: memref<64x4096xf32, strided<[8192, 1]>>, %out: memref<f32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#s2, #s0], iterator_types = ["reduction", "reduction"]} ins(%x : memref<64x4096xf32, strided<[8192, 1]>>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// 4,194,301 (prime) elements: 65536 interleaved partials of 63 leave 65,533
// iterations, which the original op would reduce on one thread; the tail is
// split again (2047 partials of 32, combined in two levels), leaving 29.
// CHECK-LABEL: func.func @long_tail
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [63, 65536]
// CHECK: memref.dealloc %{{.*}} : memref<65536xf32>
// CHECK: %[[T:.*]] = memref.subview %arg0[4128768] [65533] [1]
// CHECK: %[[T2:.*]] = memref.subview %[[T]][0] [65504] [1]
// CHECK: memref.expand_shape %[[T2]] {{\[\[}}0, 1]] output_shape [32, 2047]
// CHECK: memref.alloc() : memref<2047xf32>
// CHECK: %[[L:.*]] = memref.subview %[[T]][65504] [29] [1]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[L]] : {{.*}}) outs(%arg1 : memref<f32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: return
#p = affine_map<(d0) -> (d0)>
#p0 = affine_map<(d0) -> ()>
func.func @long_tail(%x: memref<4194301xf32>, %out: memref<f32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#p, #p0], iterator_types = ["reduction"]} ins(%x : memref<4194301xf32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}
