// RUN: zero-opt %s --split-input-file --zero-pack-in-place | FileCheck %s

// A gradient rounded to bf16 and packed into rows 2 of a bucket: the
// rounding writes its slot (columns [4, 12) of each 12-wide row) through
// its input viewed as the same 2 rows; the buffer and the pack go.
// CHECK-LABEL: func.func @rounding
// CHECK-SAME: (%[[SUM:.*]]: memref<16x1xf32>)
// CHECK: %[[STAGE:.*]] = memref.alloc() : memref<24xbf16>
// CHECK-NEXT: %[[GRID:.*]] = memref.expand_shape %[[STAGE]] {{\[\[}}0, 1]] output_shape [2, 12] : memref<24xbf16> into memref<2x12xbf16>
// CHECK-NEXT: %[[SLOT:.*]] = memref.subview %[[GRID]][0, 4] [2, 8] [1, 1] : memref<2x12xbf16> to memref<2x8xbf16, strided<[12, 1], offset: 4>>
// CHECK-NEXT: %[[FLAT:.*]] = memref.collapse_shape %[[SUM]] {{\[\[}}0, 1]] : memref<16x1xf32> into memref<16xf32>
// CHECK-NEXT: %[[ROWS:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [2, 8] : memref<16xf32> into memref<2x8xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[ROWS]] : memref<2x8xf32>) outs(%[[SLOT]] : memref<2x8xbf16, strided<[12, 1], offset: 4>>)
// CHECK: arith.truncf
// CHECK-NOT: zero.bucket_pack
// CHECK-NOT: memref.alloc() : memref<16x1xbf16>
// CHECK: zero.reduce_scatter %[[STAGE]]
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @rounding(%sum: memref<16x1xf32>) -> memref<12xbf16> {
  %stage = memref.alloc() : memref<24xbf16>
  %g = memref.alloc() : memref<16x1xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum : memref<16x1xf32>) outs(%g : memref<16x1xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  }
  %flat = memref.collapse_shape %g [[0, 1]] : memref<16x1xbf16> into memref<16xbf16>
  zero.bucket_pack %flat into %stage[4] rows 2 : memref<16xbf16>, memref<24xbf16>
  %part = memref.alloc() : memref<12xbf16>
  zero.reduce_scatter %stage into %part {world_size = 2 : i64} : memref<24xbf16>, memref<12xbf16>
  return %part : memref<12xbf16>
}

// -----

// The staging buffer allocated after the op (the bucket's first member was
// ready later) moves up to it; in a one-row bucket the op runs flat over
// its slot.
// CHECK-LABEL: func.func @staging_after
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>)
// CHECK: %[[STAGE:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[SLOT:.*]] = memref.subview %[[STAGE]][0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[A]], %[[B]] : memref<4xf32>, memref<4xf32>) outs(%[[SLOT]] : memref<4xf32, strided<[1]>>)
// CHECK-NOT: zero.bucket_pack
func.func @staging_after(%a: memref<4xf32>, %b: memref<4xf32>) -> memref<8xf32> {
  %g = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : memref<4xf32>, memref<4xf32>) outs(%g : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  %stage = memref.alloc() : memref<8xf32>
  zero.bucket_pack %g into %stage[0] rows 1 : memref<4xf32>, memref<8xf32>
  return %stage : memref<8xf32>
}

// -----

// Left alone in a reduce-scatter bucket (rows 2): a buffer something else
// reads too, a writer reading its indices, and an argument. A writer that
// reduces and one with a broadcast input are not elementwise: they write
// their slots in blocks of rows (the input's split dimension, or none).
// CHECK-LABEL: func.func @kept
// CHECK: zero.bucket_pack
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<2x2x2xf32>) outs(%{{.*}} : memref<2x2xf32, strided<[20, 1], offset: 2>>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<2xf32>) outs(%{{.*}} : memref<2x2x2xf32, strided<[20, 2, 1], offset: 4>>)
// CHECK-COUNT-2: zero.bucket_pack
// CHECK-NOT: zero.bucket_pack
func.func @kept(%a: memref<4xf32>, %m: memref<4x2xf32>, %v: memref<2xf32>, %arg: memref<4xf32>, %o: memref<4xf32>) -> memref<40xf32> {
  %stage = memref.alloc() : memref<40xf32>
  %g0 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : memref<4xf32>) outs(%g0 : memref<4xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  }
  memref.copy %g0, %o : memref<4xf32> to memref<4xf32>
  zero.bucket_pack %g0 into %stage[0] rows 2 : memref<4xf32>, memref<40xf32>
  %g1 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m : memref<4x2xf32>) outs(%g1 : memref<4xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.addf %x, %out : f32
    linalg.yield %s : f32
  }
  zero.bucket_pack %g1 into %stage[2] rows 2 : memref<4xf32>, memref<40xf32>
  %g2 = memref.alloc() : memref<4x2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%v : memref<2xf32>) outs(%g2 : memref<4x2xf32>) {
  ^bb0(%x: f32, %out: f32):
    linalg.yield %x : f32
  }
  zero.bucket_pack %g2 into %stage[4] rows 2 : memref<4x2xf32>, memref<40xf32>
  %g3 = memref.alloc() : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%g3 : memref<4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    %f = arith.sitofp %c : i32 to f32
    linalg.yield %f : f32
  }
  zero.bucket_pack %g3 into %stage[8] rows 2 : memref<4xf32>, memref<40xf32>
  zero.bucket_pack %arg into %stage[10] rows 2 : memref<4xf32>, memref<40xf32>
  return %stage : memref<40xf32>
}

// -----

// Into a one-row (all-reduce) bucket any op writing the buffer itself
// writes its slot, viewed in the buffer's shape: a GEMM and its zero fill,
// and a column sum.
// CHECK-LABEL: func.func @one_row
// CHECK-SAME: (%[[A:.*]]: memref<4x3xf32>, %[[B:.*]]: memref<3x2xf32>, %[[M:.*]]: memref<5x2xf32>)
// CHECK: %[[STAGE:.*]] = memref.alloc() : memref<10xf32>
// CHECK-NEXT: %[[S0:.*]] = memref.subview %[[STAGE]][0] [8] [1] : memref<10xf32> to memref<8xf32, strided<[1]>>
// CHECK-NEXT: %[[W:.*]] = memref.expand_shape %[[S0]] {{\[\[}}0, 1]] output_shape [4, 2] : memref<8xf32, strided<[1]>> into memref<4x2xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[W]] : memref<4x2xf32>)
// CHECK-NEXT: linalg.matmul ins(%[[A]], %[[B]] : memref<4x3xf32>, memref<3x2xf32>) outs(%[[W]] : memref<4x2xf32>)
// CHECK-NEXT: %[[S1:.*]] = memref.subview %[[STAGE]][8] [2] [1] : memref<10xf32> to memref<2xf32, strided<[1], offset: 8>>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[S1]] : memref<2xf32, strided<[1], offset: 8>>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[M]] : memref<5x2xf32>) outs(%[[S1]] : memref<2xf32, strided<[1], offset: 8>>)
// CHECK-NOT: zero.bucket_pack
// CHECK: zero.all_reduce %[[STAGE]] into %[[STAGE]]
func.func @one_row(%a: memref<4x3xf32>, %b: memref<3x2xf32>, %m: memref<5x2xf32>) -> memref<10xf32> {
  %zero = arith.constant 0.0 : f32
  %stage = memref.alloc() : memref<10xf32>
  %w = memref.alloc() : memref<4x2xf32>
  linalg.fill ins(%zero : f32) outs(%w : memref<4x2xf32>)
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x2xf32>) outs(%w : memref<4x2xf32>)
  %wf = memref.collapse_shape %w [[0, 1]] : memref<4x2xf32> into memref<8xf32>
  zero.bucket_pack %wf into %stage[0] rows 1 : memref<8xf32>, memref<10xf32>
  %c = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m : memref<5x2xf32>) outs(%c : memref<2xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.addf %x, %out : f32
    linalg.yield %s : f32
  }
  zero.bucket_pack %c into %stage[8] rows 1 : memref<2xf32>, memref<10xf32>
  zero.all_reduce %stage into %stage {world_size = 2 : i64} : memref<10xf32>, memref<10xf32>
  return %stage : memref<10xf32>
}

// -----

// Into a reduce-scatter bucket (rows 2; a member's slot is a run of
// columns in each row) an op writing the buffer computes it in blocks of
// rows, one per bucket row: the loop of the output's first dimension split
// in two, the slot viewed as the rows of the buffer, each input it indexes
// viewed alike. A GEMM with its zero fill stays a GEMM (the block loop a
// batch loop along which B is broadcast), so does a weight gradient's bf16
// GEMM reading A transposed, and a column sum.
// CHECK-DAG: #[[A3:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[B2:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[C3:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d0, d1)>
// CHECK-LABEL: func.func @row_blocks
// CHECK-SAME: (%[[A:[^:]*]]: memref<4x3xf32>, %[[B:[^:]*]]: memref<3x2xf32>, %[[M:[^:]*]]: memref<5x2xf32>, %[[X:[^:]*]]: memref<6x4xbf16>, %[[DY:[^:]*]]: memref<6x8xbf16>)
// CHECK: %[[STAGE:.*]] = memref.alloc() : memref<20xf32>
// CHECK-NEXT: %[[GRID:.*]] = memref.expand_shape %[[STAGE]] {{\[\[}}0, 1]] output_shape [2, 10]
// CHECK-NEXT: %[[SLOT:.*]] = memref.subview %[[GRID]][0, 0] [2, 4] [1, 1] : memref<2x10xf32> to memref<2x4xf32, strided<[10, 1]>>
// CHECK-NEXT: %[[W:.*]] = memref.expand_shape %[[SLOT]] {{\[\[}}0], [1, 2]] output_shape [2, 2, 2] : memref<2x4xf32, strided<[10, 1]>> into memref<2x2x2xf32, strided<[10, 2, 1]>>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[W]] : memref<2x2x2xf32, strided<[10, 2, 1]>>)
// CHECK-NEXT: %[[AB:.*]] = memref.expand_shape %[[A]] {{\[\[}}0, 1], [2]] output_shape [2, 2, 3] : memref<4x3xf32> into memref<2x2x3xf32>
// CHECK-NEXT: linalg.generic {indexing_maps = [#[[A3]], #[[B2]], #[[C3]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[AB]], %[[B]] : memref<2x2x3xf32>, memref<3x2xf32>) outs(%[[W]] : memref<2x2x2xf32, strided<[10, 2, 1]>>)
// CHECK: arith.mulf
// CHECK: %[[SUMS:.*]] = memref.subview %{{.*}}[0, 4] [2, 1] [1, 1] : memref<2x10xf32> to memref<2x1xf32, strided<[10, 1], offset: 4>>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[SUMS]] :
// CHECK-NEXT: %[[MB:.*]] = memref.expand_shape %[[M]] {{\[\[}}0], [1, 2]] output_shape [5, 2, 1] : memref<5x2xf32> into memref<5x2x1xf32>
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[MB]] : memref<5x2x1xf32>) outs(%[[SUMS]] :
// CHECK: %[[STAGE16:.*]] = memref.alloc() : memref<64xbf16>
// CHECK: %[[SLOT16:.*]] = memref.subview %{{.*}}[0, 8] [2, 16] [1, 1]
// CHECK-NEXT: %[[DW:.*]] = memref.expand_shape %[[SLOT16]] {{\[\[}}0], [1, 2]] output_shape [2, 2, 8] : memref<2x16xbf16, strided<[32, 1], offset: 8>> into memref<2x2x8xbf16, strided<[32, 8, 1], offset: 8>>
// CHECK-NEXT: %[[XB:.*]] = memref.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [6, 2, 2] : memref<6x4xbf16> into memref<6x2x2xbf16>
// CHECK-NEXT: zero.rounded_matmul %[[XB]], %[[DY]] into %[[DW]] maps [#[[AT]], #[[B2]], #[[C3]]]
// CHECK-NOT: zero.bucket_pack
// CHECK: return %[[STAGE]], %[[STAGE16]]
func.func @row_blocks(%a: memref<4x3xf32>, %b: memref<3x2xf32>, %m: memref<5x2xf32>,
                      %x: memref<6x4xbf16>, %dy: memref<6x8xbf16>) -> (memref<20xf32>, memref<64xbf16>) {
  %zero = arith.constant 0.0 : f32
  %stage = memref.alloc() : memref<20xf32>
  %w = memref.alloc() : memref<4x2xf32>
  linalg.fill ins(%zero : f32) outs(%w : memref<4x2xf32>)
  linalg.matmul ins(%a, %b : memref<4x3xf32>, memref<3x2xf32>) outs(%w : memref<4x2xf32>)
  %wf = memref.collapse_shape %w [[0, 1]] : memref<4x2xf32> into memref<8xf32>
  zero.bucket_pack %wf into %stage[0] rows 2 : memref<8xf32>, memref<20xf32>
  %c = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m : memref<5x2xf32>) outs(%c : memref<2xf32>) {
  ^bb0(%v: f32, %out: f32):
    %s = arith.addf %v, %out : f32
    linalg.yield %s : f32
  }
  zero.bucket_pack %c into %stage[4] rows 2 : memref<2xf32>, memref<20xf32>
  %stage16 = memref.alloc() : memref<64xbf16>
  %dw = memref.alloc() : memref<4x8xbf16>
  zero.rounded_matmul %x, %dy into %dw
    maps [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>]
    : memref<6x4xbf16>, memref<6x8xbf16>, memref<4x8xbf16>
  %dwf = memref.collapse_shape %dw [[0, 1]] : memref<4x8xbf16> into memref<32xbf16>
  zero.bucket_pack %dwf into %stage16[8] rows 2 : memref<32xbf16>, memref<64xbf16>
  return %stage, %stage16 : memref<20xf32>, memref<64xbf16>
}

// -----

// A weight gradient's GEMM over a unit batch loop (the tokens of one
// micro-batch as [1, T, d]): its first dimension that is not a unit one is
// split, the slot viewed as [1, rows, 4 / rows, 8].
// CHECK-LABEL: func.func @unit_batch
// CHECK-SAME: (%[[X:[^:]*]]: memref<1x6x4xbf16>, %[[DY:[^:]*]]: memref<1x6x8xbf16>)
// CHECK: %[[SLOT:.*]] = memref.subview %{{.*}}[0, 0] [2, 16] [1, 1] : memref<2x32xbf16> to memref<2x16xbf16, strided<[32, 1]>>
// CHECK-NEXT: %[[DW:.*]] = memref.expand_shape %[[SLOT]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 2, 2, 8] : memref<2x16xbf16, strided<[32, 1]>> into memref<1x2x2x8xbf16, strided<[64, 32, 8, 1]>>
// CHECK-NEXT: %[[XB:.*]] = memref.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 6, 2, 2] : memref<1x6x4xbf16> into memref<1x6x2x2xbf16>
// CHECK-NEXT: zero.rounded_matmul %[[XB]], %[[DY]] into %[[DW]]
// CHECK-NOT: zero.bucket_pack
func.func @unit_batch(%x: memref<1x6x4xbf16>, %dy: memref<1x6x8xbf16>) -> memref<64xbf16> {
  %stage = memref.alloc() : memref<64xbf16>
  %dw = memref.alloc() : memref<1x4x8xbf16>
  zero.rounded_matmul %x, %dy into %dw
    maps [affine_map<(b, m, n, k) -> (b, k, m)>, affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]
    : memref<1x6x4xbf16>, memref<1x6x8xbf16>, memref<1x4x8xbf16>
  %dwf = memref.collapse_shape %dw [[0, 1, 2]] : memref<1x4x8xbf16> into memref<32xbf16>
  zero.bucket_pack %dwf into %stage[0] rows 2 : memref<32xbf16>, memref<64xbf16>
  return %stage : memref<64xbf16>
}

// -----

// An optimizer update that writes the state and a 16-bit copy of the
// parameter, the copy packed into a one-row bucket: the copy is written in
// its slot, the state where it was.
// CHECK-LABEL: func.func @several_outputs
// CHECK-SAME: (%[[G:.*]]: memref<8xbf16>, %[[P:.*]]: memref<8xf32>)
// CHECK: %[[STAGE:.*]] = memref.alloc() : memref<16xbf16>
// CHECK-NEXT: %[[SLOT:.*]] = memref.subview %[[STAGE]][8] [8] [1] : memref<16xbf16> to memref<8xbf16, strided<[1], offset: 8>>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[G]] : memref<8xbf16>) outs(%[[P]], %[[SLOT]] : memref<8xf32>, memref<8xbf16, strided<[1], offset: 8>>)
// CHECK-NOT: zero.bucket_pack
func.func @several_outputs(%g: memref<8xbf16>, %p: memref<8xf32>) -> memref<16xbf16> {
  %stage = memref.alloc() : memref<16xbf16>
  %copy = memref.alloc() : memref<8xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%g : memref<8xbf16>) outs(%p, %copy : memref<8xf32>, memref<8xbf16>) {
  ^bb0(%x: bf16, %w: f32, %out: bf16):
    %xf = arith.extf %x : bf16 to f32
    %n = arith.subf %w, %xf : f32
    %t = arith.truncf %n : f32 to bf16
    linalg.yield %n, %t : f32, bf16
  }
  zero.bucket_pack %copy into %stage[8] rows 1 : memref<8xbf16>, memref<16xbf16>
  return %stage : memref<16xbf16>
}

// -----

// Kept in a reduce-scatter bucket: an output whose first dimension the
// rows do not divide, a GEMM that has its two batch loops already, and a
// fill after the writer.
// CHECK-LABEL: func.func @kept_gemm
// CHECK-COUNT-3: zero.bucket_pack
func.func @kept_gemm(%a: memref<3x3xf32>, %b: memref<3x2xf32>, %m: memref<5x2xf32>,
                     %ba: memref<2x2x2x3xf32>, %bb: memref<2x2x3x2xf32>) -> (memref<20xf32>, memref<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %stage = memref.alloc() : memref<20xf32>
  %w = memref.alloc() : memref<3x2xf32>
  linalg.fill ins(%zero : f32) outs(%w : memref<3x2xf32>)
  linalg.matmul ins(%a, %b : memref<3x3xf32>, memref<3x2xf32>) outs(%w : memref<3x2xf32>)
  %wf = memref.collapse_shape %w [[0, 1]] : memref<3x2xf32> into memref<6xf32>
  zero.bucket_pack %wf into %stage[0] rows 2 : memref<6xf32>, memref<20xf32>
  %c = memref.alloc() : memref<2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m : memref<5x2xf32>) outs(%c : memref<2xf32>) {
  ^bb0(%x: f32, %out: f32):
    %s = arith.addf %x, %out : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%c : memref<2xf32>)
  zero.bucket_pack %c into %stage[4] rows 2 : memref<2xf32>, memref<20xf32>
  %stage2 = memref.alloc() : memref<32xf32>
  %bw = memref.alloc() : memref<2x2x2x2xf32>
  linalg.fill ins(%zero : f32) outs(%bw : memref<2x2x2x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(b0, b1, m, n, k) -> (b0, b1, m, k)>, affine_map<(b0, b1, m, n, k) -> (b0, b1, k, n)>, affine_map<(b0, b1, m, n, k) -> (b0, b1, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%ba, %bb : memref<2x2x2x3xf32>, memref<2x2x3x2xf32>) outs(%bw : memref<2x2x2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  %bwf = memref.collapse_shape %bw [[0, 1, 2, 3]] : memref<2x2x2x2xf32> into memref<16xf32>
  zero.bucket_pack %bwf into %stage2[0] rows 2 : memref<16xf32>, memref<32xf32>
  return %stage, %stage2 : memref<20xf32>, memref<32xf32>
}
