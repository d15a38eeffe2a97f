// RUN: zero-opt %s | zero-opt | FileCheck %s
// RUN: zero-opt %s --cse --canonicalize | FileCheck %s --check-prefix=EFFECTS

// Starts, waits and bucket copies print and parse back.
// CHECK-LABEL: func.func @round_trip
// CHECK: %[[R:.*]] = zero.all_gather_start %arg0 into %arg1 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
// CHECK-NEXT: zero.wait %[[R]]
// CHECK-NEXT: zero.reduce_scatter_start %arg1 into %arg0 {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
// CHECK: zero.all_reduce_start %arg2 into %arg2 {world_size = 2 : i64} : memref<3xf64>, memref<3xf64>
// CHECK: zero.bucket_pack %arg1 into %arg3[2] rows 2 : memref<4xf32>, memref<8xf32>
// CHECK-NEXT: zero.bucket_unpack %arg3[2] rows 2 into %arg1 : memref<8xf32>, memref<4xf32>
//
// Memory effects: CSE does not merge two identical starts (each is a
// collective every rank issues), and canonicalization keeps a start whose
// request nobody waits for and a wait whose result nobody reads.
// EFFECTS-LABEL: func.func @round_trip
// EFFECTS: zero.all_gather_start
// EFFECTS-NEXT: zero.wait
// EFFECTS: zero.bucket_pack
// EFFECTS-NEXT: zero.bucket_unpack
// EFFECTS-NEXT: zero.all_gather_start
// EFFECTS-NEXT: return
func.func @round_trip(%s: memref<2xf32>, %g: memref<4xf32>, %d: memref<3xf64>, %stage: memref<8xf32>) {
  %r = zero.all_gather_start %s into %g {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  zero.wait %r
  %r2 = zero.reduce_scatter_start %g into %s {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
  zero.wait %r2
  %r3 = zero.all_reduce_start %d into %d {world_size = 2 : i64} : memref<3xf64>, memref<3xf64>
  zero.wait %r3
  zero.bucket_pack %g into %stage[2] rows 2 : memref<4xf32>, memref<8xf32>
  zero.bucket_unpack %stage[2] rows 2 into %g : memref<8xf32>, memref<4xf32>
  %r4 = zero.all_gather_start %s into %g {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  return
}

// A load of the received buffer stays after the wait.
// EFFECTS-LABEL: func.func @load_after_wait
// EFFECTS: zero.wait
// EFFECTS-NEXT: memref.load
func.func @load_after_wait(%s: memref<2xf32>, %g: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %r = zero.all_gather_start %s into %g {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  zero.wait %r
  %v = memref.load %g[%c0] : memref<4xf32>
  return %v : f32
}
