// RUN: zero-opt %s -split-input-file --zero-comm-report | FileCheck %s

// Ring volumes per rank with N = 4 ranks, each kind sized differently so a
// mix-up of kinds or of whole vs. per-rank buffers shows:
//   all_reduce of 16 x f32 (64 B):           2 * (4-1)/4 * 64 = 96 B
//   reduce_scatter of 16 x f32 into 4 x f32: the whole buffer is the 16-element
//     input (64 B): (4-1)/4 * 64 = 48 B (not 3/4 of the 16 B shard)
//   all_gather of 2 x f32 into 8 x f32:     the whole buffer is the 8-element
//     output (32 B): (4-1)/4 * 32 = 24 B (not 3/4 of the 8 B shard)
// CHECK: module attributes {zero.comm = {step = {
// CHECK-SAME: bytes_sent_per_rank = {all_gather = 24 : i64, all_reduce = 96 : i64, reduce_scatter = 48 : i64}
// CHECK-SAME: calls = {all_gather = 1 : i64, all_reduce = 1 : i64, reduce_scatter = 1 : i64}
// CHECK-SAME: }}}
// CHECK-LABEL: func.func @step
func.func @step(%g: tensor<16xf32>, %s: tensor<2xf32>)
    -> (tensor<16xf32>, tensor<4xf32>, tensor<8xf32>) attributes {zero.entry} {
  %e16 = tensor.empty() : tensor<16xf32>
  %ar = zero.all_reduce %g into %e16 {world_size = 4 : i64}
      : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %rs = zero.reduce_scatter %g into %e4 {world_size = 4 : i64}
      : tensor<16xf32>, tensor<4xf32> -> tensor<4xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %ag = zero.all_gather %s into %e8 {world_size = 4 : i64}
      : tensor<2xf32>, tensor<8xf32> -> tensor<8xf32>
  return %ar, %rs, %ag : tensor<16xf32>, tensor<4xf32>, tensor<8xf32>
}

// -----

// The element size counts: N = 2 ranks, f16 (2 B) and f64 (8 B).
//   all_reduce of 8 x f16 (16 B):           2 * (2-1)/2 * 16 = 16 B
//   reduce_scatter of 6 x f64 (48 B) into 3: (2-1)/2 * 48     = 24 B
//   all_gather of 3 x f64 into 6 (48 B):     (2-1)/2 * 48     = 24 B,
//   twice: 48 B in 2 calls.
// CHECK: zero.comm = {mixed = {
// CHECK-SAME: bytes_sent_per_rank = {all_gather = 48 : i64, all_reduce = 16 : i64, reduce_scatter = 24 : i64}
// CHECK-SAME: calls = {all_gather = 2 : i64, all_reduce = 1 : i64, reduce_scatter = 1 : i64}
// CHECK-LABEL: func.func @mixed
func.func @mixed(%h: memref<8xf16>, %d: memref<6xf64>, %sh: memref<3xf64>)
    attributes {zero.entry} {
  zero.all_reduce %h into %h {world_size = 2 : i64} : memref<8xf16>, memref<8xf16>
  zero.reduce_scatter %d into %sh {world_size = 2 : i64} : memref<6xf64>, memref<3xf64>
  zero.all_gather %sh into %d {world_size = 2 : i64} : memref<3xf64>, memref<6xf64>
  zero.all_gather %sh into %d {world_size = 2 : i64} : memref<3xf64>, memref<6xf64>
  return
}

// -----

// Loop bodies count times their static trip counts, nested loops
// multiplying: the outer loop runs 2 times, the inner one
// ceil((10 - 1) / 4) = 3 times (i = 1, 5, 9), so the all_reduce runs 6 times.
// Each sends 2 * (2-1)/2 * 32 B = 32 B (8 x f32, N = 2): 6 * 32 = 192 B.
// The all_gather sits in a loop of ceil((7 - 0) / 3) = 3 trips (i = 0, 3, 6)
// and sends (2-1)/2 * 16 B = 8 B each (4 x f32 gathered): 3 * 8 = 24 B.
// The reduce_scatter is in a loop of zero trips (lb = ub): it never runs.
// CHECK: zero.comm = {loops = {
// CHECK-SAME: bytes_sent_per_rank = {all_gather = 24 : i64, all_reduce = 192 : i64, reduce_scatter = 0 : i64}
// CHECK-SAME: calls = {all_gather = 3 : i64, all_reduce = 6 : i64, reduce_scatter = 0 : i64}
// CHECK-LABEL: func.func @loops
func.func @loops(%g: memref<8xf32>, %s: memref<2xf32>, %full: memref<4xf32>)
    attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c7 = arith.constant 7 : index
  %c10 = arith.constant 10 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c1 to %c10 step %c4 {
      zero.all_reduce %g into %g {world_size = 2 : i64} : memref<8xf32>, memref<8xf32>
    }
  }
  scf.for %i = %c0 to %c7 step %c3 {
    zero.all_gather %s into %full {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  }
  scf.for %i = %c4 to %c4 step %c1 {
    zero.reduce_scatter %full into %s {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
  }
  return
}

// -----

// Only zero.entry functions are reported, each under its own name; a helper
// without zero.entry is left out even though it communicates. With a single
// rank nothing is sent ((1-1)/1 = 0), but the call is still counted.
// The report holds exactly the two entries (keys are sorted; a `helper` key
// would come first).
// CHECK: module attributes {zero.comm = {other = {bytes_sent_per_rank = {all_gather = 0 : i64, all_reduce = 0 : i64, reduce_scatter = 0 : i64}, calls = {all_gather = 0 : i64, all_reduce = 0 : i64, reduce_scatter = 0 : i64}}
// CHECK-SAME: single = {bytes_sent_per_rank = {all_gather = 0 : i64, all_reduce = 0 : i64, reduce_scatter = 0 : i64}, calls = {all_gather = 0 : i64, all_reduce = 1 : i64, reduce_scatter = 0 : i64}}}} {
// CHECK-LABEL: func.func @helper
func.func @helper(%g: memref<8xf32>) {
  zero.all_reduce %g into %g {world_size = 4 : i64} : memref<8xf32>, memref<8xf32>
  return
}
// CHECK-LABEL: func.func @single
func.func @single(%g: memref<8xf32>) attributes {zero.entry} {
  zero.all_reduce %g into %g {world_size = 1 : i64} : memref<8xf32>, memref<8xf32>
  return
}
// CHECK-LABEL: func.func @other
func.func @other() attributes {zero.entry} {
  return
}

// -----

// A module without zero.entry functions gets an empty report.
// CHECK: module attributes {zero.comm = {}}
// CHECK-LABEL: func.func @plain
func.func @plain(%g: memref<8xf32>) {
  zero.all_reduce %g into %g {world_size = 4 : i64} : memref<8xf32>, memref<8xf32>
  return
}
