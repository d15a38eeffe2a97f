// RUN: zero-opt %s --zero-gpu-group-launches -split-input-file | FileCheck %s

// Two sums of squares, each split into partials and a combine (as
// zero-gpu-split-reductions leaves them): the partials form one wave, the
// combines the next, whatever their program order; each wave is a group,
// a fill with the op it initializes. The partials' buffers are freed after
// the combines, the last readers.

#in = affine_map<(d0, d1) -> (d0, d1)>
#part = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0) -> (d0)>
#one = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @two_norms
// CHECK-SAME: (%[[G0:.*]]: memref<4x32xf32>, %[[G1:.*]]: memref<2x32xf32>)
// CHECK: %[[PA:.*]] = memref.alloc() : memref<32xf32>
// CHECK: %[[PB:.*]] = memref.alloc() : memref<32xf32>
// CHECK: zero.launch_group {
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[PA]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[G0]] : memref<4x32xf32>) outs(%[[PA]]
// CHECK: linalg.fill {{.*}} outs(%[[PB]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[G1]] : memref<2x32xf32>) outs(%[[PB]]
// CHECK: }
// CHECK: zero.launch_group {
// CHECK: linalg.generic {{.*}} ins(%[[PA]] : memref<32xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[PB]] : memref<32xf32>)
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[PA]]
// CHECK-NEXT: memref.dealloc %[[PB]]
// CHECK: memref.load
func.func @two_norms(%g0: memref<4x32xf32>, %g1: memref<2x32xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<f32>
  %b = memref.alloc() : memref<f32>
  %pa = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%pa : memref<32xf32>)
  linalg.generic {indexing_maps = [#in, #part],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g0 : memref<4x32xf32>) outs(%pa : memref<32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%a : memref<f32>)
  linalg.generic {indexing_maps = [#all, #one], iterator_types = ["reduction"]}
      ins(%pa : memref<32xf32>) outs(%a : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  memref.dealloc %pa : memref<32xf32>
  %pb = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%pb : memref<32xf32>)
  linalg.generic {indexing_maps = [#in, #part],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g1 : memref<2x32xf32>) outs(%pb : memref<32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %bv = memref.expand_shape %b [] output_shape [1] : memref<f32> into memref<1xf32>
  %bs = memref.collapse_shape %bv [] : memref<1xf32> into memref<f32>
  linalg.fill ins(%zero : f32) outs(%bs : memref<f32>)
  linalg.generic {indexing_maps = [#all, #one], iterator_types = ["reduction"]}
      ins(%pb : memref<32xf32>) outs(%bs : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  memref.dealloc %pb : memref<32xf32>
  %ra = memref.load %a[] : memref<f32>
  %rb = memref.load %b[] : memref<f32>
  %r = arith.addf %ra, %rb : f32
  memref.dealloc %a : memref<f32>
  memref.dealloc %b : memref<f32>
  return %r : f32
}

// -----

// Kept in order: the second reads what the first writes.

#e = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @dependent
// CHECK-NOT: zero.launch_group
// CHECK: return
func.func @dependent(%x: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  %u = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%t : memref<8xf32>) outs(%u : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.dealloc %t : memref<8xf32>
  memref.dealloc %u : memref<8xf32>
  return
}

// -----

// Kept apart: two arguments may be one buffer (a caller may pass it
// twice), and a call between two ops ends the run.

#e = affine_map<(d0) -> (d0)>

func.func private @opaque()

// CHECK-LABEL: func.func @arguments_and_calls
// CHECK-NOT: zero.launch_group
// CHECK: return
func.func @arguments_and_calls(%x: memref<8xf32>, %p: memref<8xf32>,
                               %q: memref<8xf32>) {
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%p : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%q : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  %t = memref.alloc() : memref<8xf32>
  %u = memref.alloc() : memref<8xf32>
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  func.call @opaque() : () -> ()
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%u : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.dealloc %t : memref<8xf32>
  memref.dealloc %u : memref<8xf32>
  return
}

// -----

// GEMMs are cuBLAS calls: never in a group, and a run ends at one. The
// two independent elementwise ops after it form a group.

#e2 = affine_map<(d0, d1) -> (d0, d1)>
#ma = affine_map<(d0, d1, d2) -> (d0, d2)>
#mb = affine_map<(d0, d1, d2) -> (d2, d1)>
#mc = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @gemm
// CHECK: linalg.matmul
// CHECK: zero.launch_group {
// CHECK-NEXT: linalg.generic
// CHECK: linalg.generic
// CHECK: }
// CHECK-NOT: zero.launch_group
func.func @gemm(%x: memref<4x4xf32>) {
  %t = memref.alloc() : memref<4x4xf32>
  %u = memref.alloc() : memref<4x4xf32>
  %v = memref.alloc() : memref<4x4xf32>
  %w = memref.alloc() : memref<4x4xf32>
  linalg.matmul ins(%x, %x : memref<4x4xf32>, memref<4x4xf32>)
      outs(%t : memref<4x4xf32>)
  linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x4xf32>) outs(%u : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x4xf32>) outs(%v : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.dealloc %t : memref<4x4xf32>
  memref.dealloc %u : memref<4x4xf32>
  memref.dealloc %v : memref<4x4xf32>
  memref.dealloc %w : memref<4x4xf32>
  return
}

// -----

// A zero fill right before a GEMM is the GEMM's beta = 0: it stays there,
// out of the group of the two ops before it.

#e2 = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @gemm_fill
// CHECK: zero.launch_group {
// CHECK-NOT: linalg.fill
// CHECK: memref.alloc
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.matmul
func.func @gemm_fill(%x: memref<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4x4xf32>
  %u = memref.alloc() : memref<4x4xf32>
  %v = memref.alloc() : memref<4x4xf32>
  linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x4xf32>) outs(%u : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#e2, #e2], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<4x4xf32>) outs(%v : memref<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<4x4xf32>)
  linalg.matmul ins(%x, %x : memref<4x4xf32>, memref<4x4xf32>)
      outs(%t : memref<4x4xf32>)
  memref.dealloc %t : memref<4x4xf32>
  memref.dealloc %u : memref<4x4xf32>
  memref.dealloc %v : memref<4x4xf32>
  return
}

// -----

// What a body loads counts as read: the gather reads the buffer the op
// before it writes, so the two stay apart and in order.

#e = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @gather
// CHECK-NOT: zero.launch_group
// CHECK: arith.negf
// CHECK: memref.load
func.func @gather(%x: memref<8xf32>, %ids: memref<4xindex>) {
  %t = memref.alloc() : memref<8xf32>
  %u = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%ids : memref<4xindex>) outs(%u : memref<4xf32>) {
  ^bb0(%i: index, %o: f32):
    %v = memref.load %t[%i] : memref<8xf32>
    linalg.yield %v : f32
  }
  memref.dealloc %t : memref<8xf32>
  memref.dealloc %u : memref<4xf32>
  return
}

// -----

// A step whose calls pass disjoint buffers (zero.disjoint_arguments): two
// updates of different arguments, and copies into arguments, are one
// launch each wave.

#e = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @disjoint_arguments
// CHECK: zero.launch_group {
// CHECK-NEXT: linalg.generic {{.*}} outs(%arg1
// CHECK: linalg.generic {{.*}} outs(%arg2
// CHECK: memref.copy %arg0, %arg3
// CHECK-NEXT: }
// CHECK-NOT: zero.launch_group
// CHECK: return
func.func @disjoint_arguments(%x: memref<8xf32>, %p: memref<8xf32>,
                              %q: memref<8xf32>, %r: memref<8xf32>)
    attributes {zero.disjoint_arguments} {
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%p : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.subf %o, %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%q : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.subf %o, %a : f32
    linalg.yield %n : f32
  }
  memref.copy %x, %r : memref<8xf32> to memref<8xf32>
  return
}

// -----

// A bucket's member copies (before and after their lowering to copies of
// strided views): slots of one staging buffer are apart when their
// columns are, in every rank's row, so the three packs are one launch. A
// copy into an argument stays a launch of its own (two arguments may be
// one buffer).

// CHECK-LABEL: func.func @bucket
// CHECK: zero.launch_group {
// CHECK-NEXT: zero.bucket_pack {{.*}}[0] rows 2
// CHECK-NEXT: zero.bucket_pack {{.*}}[4] rows 2
// CHECK-NEXT: zero.bucket_pack {{.*}}[6] rows 2
// CHECK-NEXT: }
// CHECK-NOT: zero.launch_group
// CHECK: zero.bucket_pack {{.*}}[5] rows 2
// CHECK: memref.copy {{.*}}, %arg3
// CHECK: memref.copy {{.*}}, %arg4
// CHECK: return
func.func @bucket(%a: memref<8xf32>, %b: memref<4xf32>, %c: memref<2xf32>,
                  %p: memref<8xf32>, %q: memref<8xf32>) {
  %s = memref.alloc() : memref<16xf32>
  zero.bucket_pack %a into %s[0] rows 2 : memref<8xf32>, memref<16xf32>
  zero.bucket_pack %b into %s[4] rows 2 : memref<4xf32>, memref<16xf32>
  zero.bucket_pack %c into %s[6] rows 2 : memref<2xf32>, memref<16xf32>
  // Columns 5 and 6 of each row: overlaps the slot of %b and of %c.
  zero.bucket_pack %b into %s[5] rows 2 : memref<4xf32>, memref<16xf32>
  memref.copy %a, %p : memref<8xf32> to memref<8xf32>
  memref.copy %a, %q : memref<8xf32> to memref<8xf32>
  memref.dealloc %s : memref<16xf32>
  return
}

// CHECK-LABEL: func.func @bucket_lowered
// CHECK: zero.launch_group {
// CHECK-NEXT: memref.copy
// CHECK-NEXT: memref.copy
// CHECK-NEXT: }
// CHECK-NOT: zero.launch_group
func.func @bucket_lowered(%a: memref<2x4xf32>, %b: memref<2x2xf32>) {
  %s = memref.alloc() : memref<16xf32>
  %rows = memref.expand_shape %s [[0, 1]] output_shape [2, 8] : memref<16xf32> into memref<2x8xf32>
  %sa = memref.subview %rows[0, 0] [2, 4] [1, 1] : memref<2x8xf32> to memref<2x4xf32, strided<[8, 1]>>
  %sb = memref.subview %rows[0, 4] [2, 2] [1, 1] : memref<2x8xf32> to memref<2x2xf32, strided<[8, 1], offset: 4>>
  memref.copy %a, %sa : memref<2x4xf32> to memref<2x4xf32, strided<[8, 1]>>
  memref.copy %b, %sb : memref<2x2xf32> to memref<2x2xf32, strided<[8, 1], offset: 4>>
  memref.dealloc %s : memref<16xf32>
  return
}

// -----

// A launch's parameters fit PTX's 4352 bytes: twelve independent ops on
// rank-10 buffers (a 184-byte descriptor each, 368 bytes an op) are a
// group of eleven (4048 bytes) and one launch alone.

#r10 = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, d1, d2, d3, d4, d5, d6, d7, d8, d9)>

// CHECK-LABEL: func.func @parameter_space
// CHECK: zero.launch_group {
// CHECK-COUNT-11: linalg.generic
// CHECK-NOT: zero.launch_group
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @parameter_space(%x0: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x1: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x2: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x3: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x4: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x5: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x6: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x7: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x8: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x9: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x10: memref<1x1x1x1x1x1x1x1x1x2xf32>, %x11: memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  %o0 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o1 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o2 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o3 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o4 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o5 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o6 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o7 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o8 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o9 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o10 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  %o11 = memref.alloc() : memref<1x1x1x1x1x1x1x1x1x2xf32>
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x0 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o0 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x1 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o1 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x2 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o2 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x3 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o3 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x4 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o4 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x5 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o5 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x6 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o6 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x7 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o7 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x8 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o8 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x9 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o9 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x10 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o10 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#r10, #r10], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x11 : memref<1x1x1x1x1x1x1x1x1x2xf32>) outs(%o11 : memref<1x1x1x1x1x1x1x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  memref.dealloc %o0 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o1 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o2 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o3 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o4 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o5 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o6 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o7 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o8 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o9 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o10 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  memref.dealloc %o11 : memref<1x1x1x1x1x1x1x1x1x2xf32>
  return
}

// -----

// Large buffers (2 MiB here) keep their lifetimes apart: %big1 is freed
// before %big2 is allocated, so the launch that writes %big2 (independent
// of everything before it) comes in a wave after the last use of %big1
// and the free still comes before the allocation. The launch that writes
// %big1 is grouped with the small ones beside it.

#e = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>

// CHECK-LABEL: func.func @large_buffers
// CHECK: %[[BIG1:.*]] = memref.alloc() : memref<524288xf32>
// CHECK: zero.launch_group {
// CHECK-NEXT: linalg.generic {{.*}} ins(%arg1 : memref<524288xf32>) outs(%[[BIG1]] : memref<524288xf32>)
// CHECK-COUNT-2: ins(%arg0 : memref<8xf32>)
// CHECK: }
// CHECK: linalg.generic {{.*}} ins(%[[BIG1]] : memref<524288xf32>)
// CHECK: memref.dealloc %[[BIG1]]
// CHECK: %[[BIG2:.*]] = memref.alloc() : memref<524288xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%arg1 : memref<524288xf32>) outs(%[[BIG2]] : memref<524288xf32>)
// CHECK-NOT: zero.launch_group
func.func private @use(memref<8xf32>, memref<8xf32>, memref<f32>, memref<524288xf32>)
func.func @large_buffers(%x: memref<8xf32>, %y: memref<524288xf32>) {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %r = memref.alloc() : memref<f32>
  %big1 = memref.alloc() : memref<524288xf32>
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%y : memref<524288xf32>) outs(%big1 : memref<524288xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#e, #s], iterator_types = ["reduction"]}
      ins(%big1 : memref<524288xf32>) outs(%r : memref<f32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.addf %v, %o : f32
    linalg.yield %n : f32
  }
  memref.dealloc %big1 : memref<524288xf32>
  %big2 = memref.alloc() : memref<524288xf32>
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%y : memref<524288xf32>) outs(%big2 : memref<524288xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%x : memref<8xf32>) outs(%b : memref<8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  }
  func.call @use(%a, %b, %r, %big2) : (memref<8xf32>, memref<8xf32>, memref<f32>, memref<524288xf32>) -> ()
  memref.dealloc %big2 : memref<524288xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<8xf32>
  memref.dealloc %r : memref<f32>
  return
}

// -----

// A reduction with two outputs and a fill for each (two column sums split
// as one): both fills join its unit, which an independent sum then joins
// in one wave.
// CHECK-LABEL: func.func @two_fills
// CHECK: zero.launch_group {
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[S:[^ ]*]] : memref<32xf32>)
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[Q:[^ ]*]] : memref<32xf32>)
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[S]], %[[Q]] : memref<32xf32>, memref<32xf32>)
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: zero.launch_group
#in = affine_map<(d0, d1) -> (d0, d1)>
#part = affine_map<(d0, d1) -> (d1)>
func.func @two_fills(%g0: memref<4x32xf32>, %g1: memref<2x32xf32>) -> (memref<32xf32>, memref<32xf32>, memref<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<32xf32>
  %q = memref.alloc() : memref<32xf32>
  %r = memref.alloc() : memref<32xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<32xf32>)
  linalg.fill ins(%zero : f32) outs(%q : memref<32xf32>)
  linalg.generic {indexing_maps = [#in, #part, #part],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g0 : memref<4x32xf32>) outs(%s, %q : memref<32xf32>, memref<32xf32>) {
  ^bb0(%x: f32, %acc: f32, %acc2: f32):
    %sq = arith.mulf %x, %x : f32
    %a = arith.addf %sq, %acc2 : f32
    %b = arith.addf %x, %acc : f32
    linalg.yield %b, %a : f32, f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<32xf32>)
  linalg.generic {indexing_maps = [#in, #part],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g1 : memref<2x32xf32>) outs(%r : memref<32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %b = arith.addf %x, %acc : f32
    linalg.yield %b : f32
  }
  return %s, %q, %r : memref<32xf32>, memref<32xf32>, memref<32xf32>
}
