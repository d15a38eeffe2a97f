// RUN: zero-opt %s --zero-gpu-split-reductions -split-input-file | FileCheck %s

// A layer norm's backward: the sums of dy and of dy * x-hat over the tokens
// for each feature, a rounding of the first in between. Cut alike (32
// partials of 32 tokens), they become one stage that reads dy once, with a
// partial buffer and a fill for each; each output keeps its own combine,
// its fill right before it, and the rounding still reads the first's sums.
// CHECK-LABEL: func.func @siblings
// CHECK-SAME: (%[[DY:.*]]: memref<1024x64xf32>, %[[XH:.*]]: memref<1024x64xf32>, %[[R:.*]]: memref<64xbf16>)
// CHECK-DAG: %[[DB:.*]] = memref.alloc() : memref<64xf32>
// CHECK-DAG: %[[DG:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[DYV:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [32, 32, 64]
// CHECK: %[[XHV:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [32, 32, 64]
// CHECK: %[[P1:.*]] = memref.alloc() : memref<32x64xf32>
// CHECK: %[[P2:.*]] = memref.alloc() : memref<32x64xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[P1]] : memref<32x64xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[P2]] : memref<32x64xf32>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: ins(%[[DYV]], %[[XHV]] : {{.*}}) outs(%[[P1]], %[[P2]] :
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[O1:.*]]: f32, %[[O2:.*]]: f32):
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[A]], %[[O1]] : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[M]], %[[O2]] : f32
// CHECK-NEXT: linalg.yield %[[S1]], %[[S2]] : f32, f32
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[DB]] : memref<64xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[P1]] : memref<32x64xf32>) outs(%[[DB]] : memref<64xf32>)
// CHECK: memref.dealloc %[[P1]]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[DG]] : memref<64xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[P2]] : memref<32x64xf32>) outs(%[[DG]] : memref<64xf32>)
// CHECK: memref.dealloc %[[P2]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[DB]] : memref<64xf32>) outs(%[[R]] : memref<64xbf16>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[DB]], %[[DG]]
#id = affine_map<(d0) -> (d0)>
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @siblings(%dy: memref<1024x64xf32>, %xh: memref<1024x64xf32>, %r: memref<64xbf16>) -> (memref<64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %db = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<1024x64xf32>) outs(%db : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%db : memref<64xf32>) outs(%r : memref<64xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  }
  %dg = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%dg : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #in, #out], iterator_types = ["reduction", "parallel"]} ins(%xh, %dy : memref<1024x64xf32>, memref<1024x64xf32>) outs(%dg : memref<64xf32>) {
  ^bb0(%b: f32, %a: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return %db, %dg : memref<64xf32>, memref<64xf32>
}

// -----

// One buffer through two views of one place (collapsed reductions view
// their inputs anew): read once. A maximum beside a sum: each output keeps
// its combiner and its neutral element.
// CHECK-LABEL: func.func @views_of_one_buffer
// CHECK: linalg.fill ins(%[[NEG:.*]] : f32) outs(%[[P1:.*]] : memref<32x64xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[P2:.*]] : memref<32x64xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[V:[^ ]*]] : {{[^)]*}}) outs(%[[P1]], %[[P2]] :
// CHECK: arith.maximumf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[P1]] : memref<32x64xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%[[P2]] : memref<32x64xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @views_of_one_buffer() -> (memref<64xf32>, memref<64xf32>) {
  %low = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %x = memref.alloc() : memref<1x1024x64xf32>
  %a = memref.collapse_shape %x [[0, 1], [2]] : memref<1x1024x64xf32> into memref<1024x64xf32>
  %e = memref.expand_shape %x [[0], [1, 2], [3]] output_shape [1, 8, 128, 64] : memref<1x1024x64xf32> into memref<1x8x128x64xf32>
  %b = memref.collapse_shape %e [[0, 1, 2], [3]] : memref<1x8x128x64xf32> into memref<1024x64xf32>
  %mx = memref.alloc() : memref<64xf32>
  linalg.fill ins(%low : f32) outs(%mx : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]} ins(%a : memref<1024x64xf32>) outs(%mx : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  }
  %sum = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]} ins(%b : memref<1024x64xf32>) outs(%sum : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return %mx, %sum : memref<64xf32>, memref<64xf32>
}

// -----

// The second reads its input through a view of the first's, made between
// the first's fill and the first: the view moves right before the first,
// after what it views.
// CHECK-LABEL: func.func @view_of_first_view
// CHECK: %[[A:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]]
// CHECK: %[[B:.*]] = memref.expand_shape %[[A]]
// CHECK: linalg.generic {{.*}} outs(%{{[^,]*}}, %{{[^ ]*}} : memref<32x64xf32>, memref<32x64xf32>)
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d2)>
func.func @view_of_first_view(%x: memref<8x128x64xf32>) -> (memref<64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %s1 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s1 : memref<64xf32>)
  %a = memref.collapse_shape %x [[0, 1], [2]] : memref<8x128x64xf32> into memref<1024x64xf32>
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]} ins(%a : memref<1024x64xf32>) outs(%s1 : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  }
  %b = memref.expand_shape %a [[0, 1], [2]] output_shape [1, 1024, 64] : memref<1024x64xf32> into memref<1x1024x64xf32>
  %c = memref.collapse_shape %b [[0, 1], [2]] : memref<1x1024x64xf32> into memref<1024x64xf32>
  %s2 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s2 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]} ins(%c : memref<1024x64xf32>) outs(%s2 : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  }
  return %s1, %s2 : memref<64xf32>, memref<64xf32>
}

// -----

// Left apart: the second reads the first's sums; something in between
// writes what the second reads; the two read no buffer in common; the two
// are cut differently (1024 and 1536 tokens); row sums (a warp's
// interleaved partials a row, which row groups take).
// CHECK-LABEL: func.func @reads_first
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @written_between
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @nothing_shared
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @cut_differently
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @rows
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
#in = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @reads_first(%dy: memref<1024x64xf32>) -> (memref<64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %s1 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s1 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<1024x64xf32>) outs(%s1 : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %s2 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s2 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #col, #col], iterator_types = ["reduction", "parallel"]} ins(%dy, %s1 : memref<1024x64xf32>, memref<64xf32>) outs(%s2 : memref<64xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %s = arith.addf %d, %acc : f32
    linalg.yield %s : f32
  }
  return %s1, %s2 : memref<64xf32>, memref<64xf32>
}
func.func @written_between(%dy: memref<1024x64xf32>, %xh: memref<1024x64xf32>) -> (memref<64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %s1 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s1 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<1024x64xf32>) outs(%s1 : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel"]} ins(%dy : memref<1024x64xf32>) outs(%xh : memref<1024x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %s2 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s2 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #in, #col], iterator_types = ["reduction", "parallel"]} ins(%dy, %xh : memref<1024x64xf32>, memref<1024x64xf32>) outs(%s2 : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return %s1, %s2 : memref<64xf32>, memref<64xf32>
}
func.func @nothing_shared(%x: memref<1024x64xf32>, %y: memref<1024x64xf32>) -> (memref<64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %s1 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s1 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]} ins(%x : memref<1024x64xf32>) outs(%s1 : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %s2 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s2 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]} ins(%y : memref<1024x64xf32>) outs(%s2 : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return %s1, %s2 : memref<64xf32>, memref<64xf32>
}
func.func @cut_differently(%x: memref<1536x64xf32>) -> (memref<64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %half = memref.subview %x[0, 0] [1024, 64] [1, 1] : memref<1536x64xf32> to memref<1024x64xf32, strided<[64, 1]>>
  %s1 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s1 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]} ins(%half : memref<1024x64xf32, strided<[64, 1]>>) outs(%s1 : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %s2 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s2 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #col], iterator_types = ["reduction", "parallel"]} ins(%x : memref<1536x64xf32>) outs(%s2 : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return %s1, %s2 : memref<64xf32>, memref<64xf32>
}
func.func @rows(%x: memref<64x4096xf32>, %y: memref<64x4096xf32>) -> (memref<64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %s1 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s1 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x4096xf32>) outs(%s1 : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %s2 = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%s2 : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #in, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %y : memref<64x4096xf32>, memref<64x4096xf32>) outs(%s2 : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return %s1, %s2 : memref<64xf32>, memref<64xf32>
}
