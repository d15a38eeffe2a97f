// RUN: zero-opt %s --split-input-file --zero-schedule-collectives | FileCheck %s

// The gather's wait moves past the compute that does not touch its buffers
// to the first op that reads the gathered buffer (through a view).
// CHECK-LABEL: func.func @gather
// CHECK: %[[R:.*]] = zero.all_gather_start
// CHECK-NEXT: linalg.copy ins(%arg2
// CHECK-NEXT: linalg.copy ins(%arg3
// CHECK-NEXT: memref.expand_shape
// CHECK-NEXT: zero.wait %[[R]]
// CHECK-NEXT: linalg.copy ins(%{{.*}} : memref<2x2xf32>)
func.func @gather(%shard: memref<2xf32>, %out: memref<2x2xf32>, %x: memref<8xf32>, %y: memref<8xf32>) {
  %full = memref.alloc() : memref<4xf32>
  %r = zero.all_gather_start %shard into %full {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  zero.wait %r
  linalg.copy ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  linalg.copy ins(%y : memref<8xf32>) outs(%x : memref<8xf32>)
  %v = memref.expand_shape %full [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  linalg.copy ins(%v : memref<2x2xf32>) outs(%out : memref<2x2xf32>)
  memref.dealloc %full : memref<4xf32>
  return
}

// -----

// Writing the send buffer also has to wait: the collective may still be
// reading it.
// CHECK-LABEL: func.func @send_reuse
// CHECK: zero.reduce_scatter_start
// CHECK-NEXT: linalg.copy ins(%arg2
// CHECK-NEXT: zero.wait
// CHECK-NEXT: linalg.fill
func.func @send_reuse(%g: memref<4xf32>, %s: memref<2xf32>, %x: memref<8xf32>, %y: memref<8xf32>) {
  %f = arith.constant 0.0 : f32
  %r = zero.reduce_scatter_start %g into %s {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
  zero.wait %r
  linalg.copy ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  linalg.fill ins(%f : f32) outs(%g : memref<4xf32>)
  return
}

// -----

// Nothing touches the buffers again: the wait goes to the terminator.
// CHECK-LABEL: func.func @to_end
// CHECK: zero.all_reduce_start
// CHECK-NEXT: linalg.copy
// CHECK-NEXT: zero.wait
// CHECK-NEXT: return
func.func @to_end(%g: memref<4xf64>, %x: memref<8xf32>, %y: memref<8xf32>) {
  %r = zero.all_reduce_start %g into %g {world_size = 4 : i64} : memref<4xf64>, memref<4xf64>
  zero.wait %r
  linalg.copy ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

// Waits pass one another: the first collective's result is read only at
// the end, so its wait moves past the second one's wait and use.
// CHECK-LABEL: func.func @passing
// CHECK: %[[R1:.*]] = zero.all_reduce_start %arg0
// CHECK: %[[R2:.*]] = zero.all_reduce_start %arg1
// CHECK-NEXT: zero.wait %[[R2]]
// CHECK-NEXT: linalg.copy ins(%arg1
// CHECK-NEXT: zero.wait %[[R1]]
// CHECK-NEXT: linalg.copy ins(%arg0
func.func @passing(%a: memref<4xf32>, %b: memref<4xf32>, %y: memref<4xf32>) {
  %r1 = zero.all_reduce_start %a into %a {world_size = 2 : i64} : memref<4xf32>, memref<4xf32>
  zero.wait %r1
  %r2 = zero.all_reduce_start %b into %b {world_size = 2 : i64} : memref<4xf32>, memref<4xf32>
  zero.wait %r2
  linalg.copy ins(%b : memref<4xf32>) outs(%y : memref<4xf32>)
  linalg.copy ins(%a : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}

// -----

// Inside a loop body the wait stays in its block, before the yield.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK: zero.reduce_scatter_start
// CHECK-NEXT: linalg.copy
// CHECK-NEXT: zero.wait
// CHECK-NEXT: }
func.func @loop(%g: memref<4xf32>, %s: memref<2xf32>, %x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %r = zero.reduce_scatter_start %g into %s {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
    zero.wait %r
    linalg.copy ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  }
  return
}
