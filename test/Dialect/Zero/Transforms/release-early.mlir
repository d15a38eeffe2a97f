// RUN: zero-opt %s --split-input-file --zero-release-early | FileCheck %s

// Each buffer is freed after its last use, not at the end of the block.
// CHECK-LABEL: func.func @chain
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: linalg.copy ins(%arg0{{.*}}outs(%[[A]]
// CHECK: %[[B:.*]] = memref.alloc
// CHECK: linalg.copy ins(%[[A]]{{.*}}outs(%[[B]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: linalg.copy ins(%[[B]]{{.*}}outs(%arg1
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @chain(%x: memref<4xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%a : memref<4xf32>)
  %b = memref.alloc() : memref<4xf32>
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  linalg.copy ins(%b : memref<4xf32>) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A collective reads the buffer until its wait; views count as uses.
// CHECK-LABEL: func.func @collective
// CHECK: %[[R:.*]] = zero.all_reduce_start
// CHECK: linalg.copy
// CHECK: zero.wait %[[R]]
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @collective(%x: memref<2x2xf32>, %out: memref<4xf32>, %y: memref<4xf32>) {
  %a = memref.alloc() : memref<2x2xf32>
  linalg.copy ins(%x : memref<2x2xf32>) outs(%a : memref<2x2xf32>)
  %flat = memref.collapse_shape %a [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  %r = zero.all_reduce_start %flat into %out {world_size = 2 : i64} : memref<4xf32>, memref<4xf32>
  linalg.copy ins(%y : memref<4xf32>) outs(%y : memref<4xf32>)
  zero.wait %r
  memref.dealloc %a : memref<2x2xf32>
  return
}

// -----

// A buffer that leaves its block keeps its dealloc.
// CHECK-LABEL: func.func @escapes
// CHECK: scf.yield
// CHECK: memref.dealloc
func.func @escapes(%x: memref<4xf32>, %c: i1) -> memref<4xf32> {
  %a = memref.alloc() : memref<4xf32>
  %r = scf.if %c -> memref<4xf32> {
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %x : memref<4xf32>
  }
  linalg.copy ins(%x : memref<4xf32>) outs(%r : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  return %x : memref<4xf32>
}
