// RUN: zero-opt %s --zero-gpu-split-reductions=max-partials=128 -split-input-file | FileCheck %s
// RUN: not zero-opt %s --zero-gpu-split-reductions=max-partials=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: max-partials 0 must be at least 2
// RUN: not zero-opt %s --zero-gpu-split-reductions=row-threads=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADROWS
// BADROWS: row-threads 0 must be at least 1
// RUN: not zero-opt %s --zero-gpu-split-reductions=column-threads=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADCOLS
// BADCOLS: column-threads 0 must be at least 1

// A sum of squares over 300x40: the two loops are one in memory, so one
// loop of 12000, cut into 125 interleaved partials of 96 (128 would leave a
// tail; 125 divides 12000), partial p adding elements p, p + 125, ...,
// then the partials added into the output in order. The output's fill
// stays first: the arguments may be one buffer.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @sumsq
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg1 : memref<f32>)
// CHECK: %[[C:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<300x40xf32> into memref<12000xf32>
// CHECK: %[[E:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [96, 125]
// CHECK: %[[PART:.*]] = memref.alloc() : memref<125xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[PART]] : memref<125xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[P]]], iterator_types = ["reduction", "parallel"]} ins(%[[E]] : {{.*}}) outs(%[[PART]] : memref<125xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PART]] : memref<125xf32>) outs(%arg1 : memref<f32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[V]] : f32
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: memref.dealloc %[[PART]]
// CHECK-NEXT: return
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#sc = affine_map<(d0, d1) -> ()>
func.func @sumsq(%x: memref<300x40xf32>, %out: memref<f32>) attributes {zero.entry} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%out : memref<f32>)
  linalg.generic {indexing_maps = [#id2, #sc], iterator_types = ["reduction", "reduction"]} ins(%x : memref<300x40xf32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %r = arith.addf %acc, %sq : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A maximum over 2x4259 elements with a transposed input, loop 0 indexing
// the second, contiguous dimension: 128 interleaved partials, partial p
// taking elements p, p + 128, ... of each row (a warp reads adjacent
// elements), 33 each (the partials start at -inf, the combining op's
// neutral element), the partials' loop last, and the 35 iterations left
// reduced by the original op after them.
// CHECK-DAG: #[[TI:.*]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-DAG: #[[TP:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @max_tail
// CHECK: memref.subview %arg0[0, 0] [2, 4224] [1, 1]
// CHECK: memref.expand_shape {{.*}} output_shape [2, 33, 128]
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG]] : f32) outs(%[[PART:.*]] : memref<128xf32>)
// CHECK: indexing_maps = [#[[TI]], #[[TP]]], iterator_types = ["reduction", "reduction", "parallel"]
// CHECK: arith.maximumf
// CHECK: ins(%[[PART]] : memref<128xf32>) outs(%arg1 : memref<f32>)
// CHECK: arith.maximumf
// CHECK: memref.dealloc %[[PART]]
// CHECK: %[[T:.*]] = memref.subview %arg0[0, 4224] [2, 35] [1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[T]] : {{.*}}) outs(%arg1 : memref<f32>)
#t = affine_map<(d0, d1) -> (d1, d0)>
#sc2 = affine_map<(d0, d1) -> ()>
func.func @max_tail(%x: memref<2x4259xf32>, %out: memref<f32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#t, #sc2], iterator_types = ["reduction", "reduction"]} ins(%x : memref<2x4259xf32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A maximum over each of 64 rows of 4100: 64 x 1024 threads wanted, at
// least 32 iterations each, so 128 partials per row (max-partials),
// interleaved along the contiguous row, 32 each, in a [64, 128] buffer
// starting at -inf; the partials' loop is last (x on a GPU: a warp reads
// 32 adjacent elements of its row); combined per row in order, and the
// last 4 iterations of each row reduced by the original op.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @rows
// CHECK: %[[S:.*]] = memref.subview %arg0[0, 0] [64, 4096] [1, 1]
// CHECK: %[[E:.*]] = memref.expand_shape %[[S]] {{\[\[}}0], [1, 2]] output_shape [64, 32, 128]
// CHECK: %[[P:.*]] = memref.alloc() : memref<64x128xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[P]] : memref<64x128xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : {{.*}}) outs(%[[P]] : memref<64x128xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[P]] : memref<64x128xf32>) outs(%arg1 : memref<64xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.maximumf %[[ACC]], %[[V]] : f32
// CHECK: memref.dealloc %[[P]]
// CHECK: %[[TAIL:.*]] = memref.subview %arg0[0, 4096] [64, 4] [1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[TAIL]] : {{.*}}) outs(%arg1 : memref<64xf32>)
#rr = affine_map<(d0, d1) -> (d0, d1)>
#ro = affine_map<(d0, d1) -> (d0)>
func.func @rows(%x: memref<64x4100xf32>, %rows: memref<64xf32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#rr, #ro], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x4100xf32>) outs(%rows : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.maximumf %acc, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Left alone: reductions with as many rows as row-threads (65536: enough
// threads already) whose rows are too short for a warp of partials (512 <
// 32 x 32) or not contiguous (a column sum), a reduction too small to
// split, and a kernel's body.
// CHECK-LABEL: func.func @alone
// CHECK-NOT: memref.alloc
// CHECK: return
#r = affine_map<(d0, d1) -> (d0, d1)>
#o = affine_map<(d0, d1) -> (d0)>
#c = affine_map<(d0, d1) -> (d1, d0)>
#s1 = affine_map<(d0) -> (d0)>
#s0 = affine_map<(d0) -> ()>
func.func @alone(%x: memref<65536x512xf32>, %rows: memref<65536xf32>, %xt: memref<4096x65536xf32>, %y: memref<512xf32>, %out: memref<f32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#r, #o], iterator_types = ["parallel", "reduction"]} ins(%x : memref<65536x512xf32>) outs(%rows : memref<65536xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#c, #o], iterator_types = ["parallel", "reduction"]} ins(%xt : memref<4096x65536xf32>) outs(%rows : memref<65536xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#s1, #s0], iterator_types = ["reduction"]} ins(%y : memref<512xf32>) outs(%out : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// An input indexed by a constant (a broadcast unit dimension) keeps it, the
// other loops shifted behind the new parallel one; the two reduction loops
// are not collapsed into one (the broadcast input would be read with the
// collapsed extent).
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-LABEL: func.func @broadcast
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[B]], #{{.*}}], iterator_types = ["parallel", "reduction", "reduction"]}
#x = affine_map<(d0, d1) -> (d0, d1)>
#w = affine_map<(d0, d1) -> (0, d1)>
#o0 = affine_map<(d0, d1) -> ()>
func.func @broadcast(%x: memref<256x16xf32>, %w: memref<1x16xf32>, %out: memref<f32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#x, #w, #o0], iterator_types = ["reduction", "reduction"]} ins(%x, %w : memref<256x16xf32>, memref<1x16xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A body that reads its loop indices reads the original loop's. Interleaved
// (4100 = 41 x 100 partials): iteration i of partial p is i * 100 + p.
// CHECK-LABEL: func.func @indexed
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : memref<41x100xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[P:.*]] = linalg.index 1 : index
// CHECK: %[[C:.*]] = arith.constant 100 : index
// CHECK: %[[M:.*]] = arith.muli %[[I]], %[[C]] : index
// CHECK: %[[K:.*]] = arith.addi %[[M]], %[[P]] : index
// CHECK: arith.index_cast %[[K]] : index to i32
#i1 = affine_map<(d0) -> (d0)>
#i0 = affine_map<(d0) -> ()>
func.func @indexed(%x: memref<4100xf32>, %out: memref<f32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#i1, #i0], iterator_types = ["reduction"]} ins(%x : memref<4100xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %m = arith.mulf %a, %f : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Rows that read their indices keep a thread a row, in loop order.
// CHECK-LABEL: func.func @indexed_rows
// CHECK-NOT: memref.alloc
// CHECK: linalg.index 1
#r2 = affine_map<(d0, d1) -> (d0, d1)>
#r1 = affine_map<(d0, d1) -> (d0)>
func.func @indexed_rows(%x: memref<64x4096xf32>, %out: memref<64xf32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#r2, #r1], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x4096xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 1 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %m = arith.mulf %a, %f : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// In chunks (the rows are no input's innermost dimension, as the loss's
// sum over tokens): iteration i of partial p is p * 33 + i, and the tail's
// iterations start at 124 x 33 = 4092.
// CHECK-LABEL: func.func @indexed_chunks
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}} : memref<124x33x1xf32
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[P:.*]] = linalg.index 0 : index
// CHECK: %[[C:.*]] = arith.constant 33 : index
// CHECK: %[[M:.*]] = arith.muli %[[P]], %[[C]] : index
// CHECK: %[[K:.*]] = arith.addi %[[M]], %[[I]] : index
// CHECK: arith.index_cast %[[K]] : index to i32
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<8x1xf32, strided<[1, 1], offset: 4092>>)
// CHECK: %[[T:.*]] = linalg.index 0 : index
// CHECK: %[[O:.*]] = arith.constant 4092 : index
// CHECK: %[[K2:.*]] = arith.addi %[[T]], %[[O]] : index
// CHECK: arith.index_cast %[[K2]] : index to i32
#x = affine_map<(d0, d1) -> (d0, d1)>
#o = affine_map<(d0, d1) -> (d1)>
func.func @indexed_chunks(%x: memref<4100x1xf32>, %out: memref<1xf32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#x, #o], iterator_types = ["reduction", "parallel"]} ins(%x : memref<4100x1xf32>) outs(%out : memref<1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    %m = arith.mulf %a, %f : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A linalg.reduce (a bias gradient: 4096 rows summed per feature) is a
// generic with a reduction loop: 64 features x 128 partials of 32 rows,
// the feature loop innermost (coalesced). A feature's 128 partials would
// be added on one thread: that combine is split again, into 16 partials of
// 8, then added into the output in order.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[PART:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @bias_grad
// CHECK-NOT: linalg.reduce
// CHECK: %[[E:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [128, 32, 64]
// CHECK: %[[P:.*]] = memref.alloc() : memref<128x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[PART]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : {{.*}}) outs(%[[P]] : memref<128x64xf32>)
// CHECK: %[[E2:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [16, 8, 64]
// CHECK: %[[P2:.*]] = memref.alloc() : memref<16x64xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[E2]] : {{.*}}) outs(%[[P2]] : memref<16x64xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[P2]] : memref<16x64xf32>) outs(%arg1 : memref<64xf32>)
// CHECK-NOT: linalg.reduce
func.func @bias_grad(%dy: memref<4096x64xf32>, %db: memref<64xf32>) attributes {zero.entry} {
  linalg.reduce ins(%dy : memref<4096x64xf32>) outs(%db : memref<64xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// 4096 rows of 2048 would want 16 partials per row for 65536 threads; an
// interleaved row takes a whole warp of them: 32 partials of 64, no tail.
// CHECK-LABEL: func.func @warp_rows
// CHECK: %[[E:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [4096, 64, 32]
// CHECK: %[[P:.*]] = memref.alloc() : memref<4096x32xf32>
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : {{.*}}) outs(%[[P]] : memref<4096x32xf32>)
// CHECK: ins(%[[P]] : memref<4096x32xf32>) outs(%arg1 : memref<4096xf32>)
// CHECK-NOT: memref.subview
// CHECK: return
#wr = affine_map<(d0, d1) -> (d0, d1)>
#wo = affine_map<(d0, d1) -> (d0)>
func.func @warp_rows(%x: memref<4096x2048xf32>, %out: memref<4096xf32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#wr, #wo], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4096x2048xf32>) outs(%out : memref<4096xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// 65536 rows (row-threads) of 4096 would run a thread per row, each thread
// reading its own row; a long contiguous row takes a warp of interleaved
// partials instead (32 of 128), so a warp reads 32 adjacent elements.
// CHECK-LABEL: func.func @many_rows
// CHECK: %[[E:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [65536, 128, 32]
// CHECK: %[[P:.*]] = memref.alloc() : memref<65536x32xf32>
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]] : {{.*}}) outs(%[[P]] : memref<65536x32xf32>)
// CHECK: ins(%[[P]] : memref<65536x32xf32>) outs(%arg1 : memref<65536xf32>)
// CHECK-NOT: memref.alloc
// CHECK: return
#mr = affine_map<(d0, d1) -> (d0, d1)>
#mo = affine_map<(d0, d1) -> (d0)>
func.func @many_rows(%x: memref<65536x4096xf32>, %out: memref<65536xf32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#mr, #mo], iterator_types = ["parallel", "reduction"]} ins(%x : memref<65536x4096xf32>) outs(%out : memref<65536xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  return
}


// -----

// The output's fill moves next to the combine, which reads it first, so
// that the two form one kernel: nothing the partials read is the output
// (two allocations). A row sum over [4, 4096]: 128 interleaved partials of
// 32 a row, a [4, 128] partial buffer.
// CHECK-LABEL: func.func @fill_moves
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[P:.*]] = memref.alloc() : memref<4x128xf32>
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: linalg.fill ins(%[[Z]] : f32) outs(%[[P]] : memref<4x128xf32>)
// CHECK-NEXT: linalg.generic {{.*}} outs(%[[P]] : memref<4x128xf32>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[P]] : memref<4x128xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-LABEL: func.func @fill_stays
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[O:.*]] : memref<4xf32, strided<[1]>>)
// CHECK: memref.alloc() : memref<4x128xf32>
// CHECK: ins(%{{.*}} : memref<4x128xf32>) outs(%[[O]] : memref<4xf32, strided<[1]>>)
#fr = affine_map<(d0, d1) -> (d0, d1)>
#fo = affine_map<(d0, d1) -> (d0)>
func.func @fill_moves() -> memref<4xf32> attributes {zero.entry} {
  %x = memref.alloc() : memref<4x4096xf32>
  %out = memref.alloc() : memref<4xf32>
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%out : memref<4xf32>)
  linalg.generic {indexing_maps = [#fr, #fo], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x4096xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  memref.dealloc %x : memref<4x4096xf32>
  return %out : memref<4xf32>
}
// The output is the first row's first four elements: the fill must come
// before the partials, which read them.
func.func @fill_stays() attributes {zero.entry} {
  %buf = memref.alloc() : memref<16388xf32>
  %x0 = memref.subview %buf[0] [16384] [1] : memref<16388xf32> to memref<16384xf32, strided<[1]>>
  %x = memref.expand_shape %x0 [[0, 1]] output_shape [4, 4096] : memref<16384xf32, strided<[1]>> into memref<4x4096xf32>
  %out = memref.subview %buf[0] [4] [1] : memref<16388xf32> to memref<4xf32, strided<[1]>>
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%out : memref<4xf32, strided<[1]>>)
  linalg.generic {indexing_maps = [#fr, #fo], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x4096xf32>) outs(%out : memref<4xf32, strided<[1]>>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %acc, %in : f32
    linalg.yield %r : f32
  }
  memref.dealloc %buf : memref<16388xf32>
  return
}

// -----

// A sum over [8, 1024] tokens for each of 64 features whose loops do not
// collapse (the second input is broadcast over the 8): the 1024 is split,
// not the 8. 262144 column threads want 4096 partials a feature, at most
// 128 (max-partials) of 64 iterations (8 x 8 tokens): 128 partials, whose
// combine (128 a feature, on one thread each) is split again into 16 of 8.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func.func @columns
// CHECK: %[[XE:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0], [1, 2], [3]] output_shape [8, 128, 8, 64]
// CHECK: %[[WE:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [128, 8, 64]
// CHECK: %[[PART:.*]] = memref.alloc() : memref<128x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[P]]], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%[[XE]], %[[WE]] : {{.*}}) outs(%[[PART]] : memref<128x64xf32>)
// CHECK: %[[PART2:.*]] = memref.alloc() : memref<16x64xf32>
// CHECK: linalg.generic {{.*}} outs(%[[PART2]] : memref<16x64xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PART2]] : memref<16x64xf32>) outs(%arg2 : memref<64xf32>)
#x = affine_map<(b, t, e) -> (b, t, e)>
#w = affine_map<(b, t, e) -> (t, e)>
#o = affine_map<(b, t, e) -> (e)>
func.func @columns(%x: memref<8x1024x64xf32>, %w: memref<1024x64xf32>, %out: memref<64xf32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["reduction", "reduction", "parallel"]} ins(%x, %w : memref<8x1024x64xf32>, memref<1024x64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  }
  return
}
