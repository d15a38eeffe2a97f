// RUN: zero-opt %s --zero-gpu-split-reductions -split-input-file | FileCheck %s

// An MLP bias's gradient: a column sum over the tokens of an elementwise
// op's whole output (a GELU's backward, a bias broadcast over the tokens
// among its inputs). The partial stage computes the op too: each
// iteration writes its element of the op's buffer and adds it up, so the
// buffer is written once and not read back. The producer's inputs are
// freed after it.
// CHECK-LABEL: func.func @gelu_backward
// CHECK-SAME: (%[[DY:[^:]*]]: memref<1024x64xbf16>
// CHECK: %[[A:.*]] = memref.alloc() : memref<1024x64xbf16>
// CHECK: %[[B:.*]] = memref.alloc() : memref<1x64xbf16>
// CHECK: %[[DH:.*]] = memref.alloc() : memref<1024x64xbf16>
// CHECK-NOT: linalg.generic
// CHECK: %[[P:.*]] = memref.alloc() : memref<32x64xf32>
// CHECK: %[[DHV:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [32, 32, 64]
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: ins(%{{[^,]*}}, %{{[^,]*}}, %[[B]] :
// CHECK-SAME: outs(%[[P]], %[[DHV]] : memref<32x64xf32>, memref<32x32x64xbf16, strided<[2048, 64, 1]>>)
// CHECK-NEXT: ^bb0(%[[G:.*]]: bf16, %[[X:.*]]: bf16, %[[C:.*]]: bf16, %[[ACC:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[C]] : bf16
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[G]], %[[S]] : bf16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[M]] : bf16 to f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[E]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]], %[[M]] : f32, bf16
// CHECK: linalg.generic {{.*}} ins(%[[P]] : memref<32x64xf32>)
// CHECK-NOT: linalg.generic
// CHECK: memref.dealloc %[[A]] :
// CHECK-NEXT: memref.dealloc %[[B]] :
// CHECK-NEXT: return %[[DH]]
#in = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @gelu_backward(%dy: memref<1024x64xbf16>, %r: memref<64xbf16>) -> (memref<1024x64xbf16>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<1024x64xbf16>
  %b = memref.alloc() : memref<1x64xbf16>
  %dh = memref.alloc() : memref<1024x64xbf16>
  linalg.generic {indexing_maps = [#in, #in, #bias, #in], iterator_types = ["parallel", "parallel"]} ins(%dy, %a, %b : memref<1024x64xbf16>, memref<1024x64xbf16>, memref<1x64xbf16>) outs(%dh : memref<1024x64xbf16>) {
  ^bb0(%g: bf16, %x: bf16, %c: bf16, %o: bf16):
    %s = arith.addf %x, %c : bf16
    %m = arith.mulf %g, %s : bf16
    linalg.yield %m : bf16
  }
  memref.dealloc %a : memref<1024x64xbf16>
  memref.dealloc %b : memref<1x64xbf16>
  %db = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]} ins(%dh : memref<1024x64xbf16>) outs(%db : memref<64xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %e = arith.extf %v : bf16 to f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  return %dh, %db : memref<1024x64xbf16>, memref<64xf32>
}

// -----

// Tokens as [8, 128]: the sum's loops collapsed, the producer's inputs
// collapsed alike (the broadcast bias's unit dimensions kept apart).
// CHECK-LABEL: func.func @collapsed
// CHECK: memref.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : memref<8x128x64xf32> into memref<1024x64xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK-SAME: outs(%{{[^,]*}}, %{{[^ ]*}} : memref<32x64xf32>, memref<32x32x64xf32, strided<[2048, 64, 1]>>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<32x64xf32>)
// CHECK-NOT: linalg.generic
#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bias3 = affine_map<(d0, d1, d2) -> (0, 0, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d2)>
func.func @collapsed(%dy: memref<8x128x64xf32>, %b: memref<1x1x64xf32>) -> (memref<8x128x64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<8x128x64xf32>
  linalg.generic {indexing_maps = [#in3, #bias3, #in3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%dy, %b : memref<8x128x64xf32>, memref<1x1x64xf32>) outs(%dh : memref<8x128x64xf32>) {
  ^bb0(%g: f32, %c: f32, %o: f32):
    %m = arith.mulf %g, %c : f32
    linalg.yield %m : f32
  }
  %db = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<64xf32>)
  linalg.generic {indexing_maps = [#in3, #out3], iterator_types = ["reduction", "reduction", "parallel"]} ins(%dh : memref<8x128x64xf32>) outs(%db : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return %dh, %db : memref<8x128x64xf32>, memref<64xf32>
}

// -----

// Left alone: something reads the buffer in between; something writes the
// producer's input in between; the sum reads the buffer twice; the producer
// reads a row's statistic (what a row group reads beside its rows).
// CHECK-LABEL: func.func @read_between
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @input_written_between
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @read_twice
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @row_statistic
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
#in = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @read_between(%dy: memref<1024x64xf32>, %copy: memref<1024x64xf32>) -> (memref<1024x64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<1024x64xf32>
  linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel"]} ins(%dy : memref<1024x64xf32>) outs(%dh : memref<1024x64xf32>) {
  ^bb0(%g: f32, %o: f32):
    %m = arith.mulf %g, %g : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel"]} ins(%dh : memref<1024x64xf32>) outs(%copy : memref<1024x64xf32>) {
  ^bb0(%g: f32, %o: f32):
    linalg.yield %g : f32
  }
  %db = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]} ins(%dh : memref<1024x64xf32>) outs(%db : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return %dh, %db : memref<1024x64xf32>, memref<64xf32>
}
func.func @input_written_between(%dy: memref<1024x64xf32>, %x: memref<1024x64xf32>) -> (memref<1024x64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<1024x64xf32>
  linalg.generic {indexing_maps = [#in, #in, #in], iterator_types = ["parallel", "parallel"]} ins(%dy, %x : memref<1024x64xf32>, memref<1024x64xf32>) outs(%dh : memref<1024x64xf32>) {
  ^bb0(%g: f32, %y: f32, %o: f32):
    %m = arith.mulf %g, %y : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel"]} ins(%dy : memref<1024x64xf32>) outs(%x : memref<1024x64xf32>) {
  ^bb0(%g: f32, %o: f32):
    linalg.yield %g : f32
  }
  %db = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]} ins(%dh : memref<1024x64xf32>) outs(%db : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return %dh, %db : memref<1024x64xf32>, memref<64xf32>
}
func.func @read_twice(%dy: memref<1024x64xf32>) -> (memref<1024x64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<1024x64xf32>
  linalg.generic {indexing_maps = [#in, #in], iterator_types = ["parallel", "parallel"]} ins(%dy : memref<1024x64xf32>) outs(%dh : memref<1024x64xf32>) {
  ^bb0(%g: f32, %o: f32):
    %m = arith.mulf %g, %g : f32
    linalg.yield %m : f32
  }
  %db = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #in, #out], iterator_types = ["reduction", "parallel"]} ins(%dh, %dh : memref<1024x64xf32>, memref<1024x64xf32>) outs(%db : memref<64xf32>) {
  ^bb0(%v: f32, %w: f32, %acc: f32):
    %m = arith.mulf %v, %w : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return %dh, %db : memref<1024x64xf32>, memref<64xf32>
}
func.func @row_statistic(%dy: memref<1024x64xf32>, %mean: memref<1024xf32>) -> (memref<1024x64xf32>, memref<64xf32>) attributes {zero.disjoint_arguments} {
  %zero = arith.constant 0.0 : f32
  %dh = memref.alloc() : memref<1024x64xf32>
  linalg.generic {indexing_maps = [#in, #row, #in], iterator_types = ["parallel", "parallel"]} ins(%dy, %mean : memref<1024x64xf32>, memref<1024xf32>) outs(%dh : memref<1024x64xf32>) {
  ^bb0(%g: f32, %m: f32, %o: f32):
    %d = arith.subf %g, %m : f32
    linalg.yield %d : f32
  }
  %db = memref.alloc() : memref<64xf32>
  linalg.fill ins(%zero : f32) outs(%db : memref<64xf32>)
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]} ins(%dh : memref<1024x64xf32>) outs(%db : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  return %dh, %db : memref<1024x64xf32>, memref<64xf32>
}
