// RUN: zero-opt %s --split-input-file --zero-cpu-release-early | FileCheck %s

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

// A collective reads the buffer until its wait; views and pointers count as
// uses.
func.func private @zero_rt_comm_start(i32, i32, i64, i64, i64, i64) -> i64
func.func private @zero_rt_comm_wait(i64)

// CHECK-LABEL: func.func @collective
// CHECK: %[[H:.*]] = call @zero_rt_comm_start
// CHECK: linalg.copy
// CHECK: call @zero_rt_comm_wait(%[[H]])
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @collective(%x: memref<2x2xf32>, %out: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : i32
  %c0_i64 = arith.constant 0 : i64
  %c4 = arith.constant 4 : i64
  %a = memref.alloc() : memref<2x2xf32>
  linalg.copy ins(%x : memref<2x2xf32>) outs(%a : memref<2x2xf32>)
  %flat = memref.collapse_shape %a [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %flat : memref<4xf32> -> index
  %pi = arith.index_cast %p : index to i64
  %q = memref.extract_aligned_pointer_as_index %out : memref<4xf32> -> index
  %qi = arith.index_cast %q : index to i64
  %h = func.call @zero_rt_comm_start(%c0, %c0, %pi, %qi, %c4, %c0_i64) : (i32, i32, i64, i64, i64, i64) -> i64
  linalg.copy ins(%y : memref<4xf32>) outs(%y : memref<4xf32>)
  func.call @zero_rt_comm_wait(%h) : (i64) -> ()
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
