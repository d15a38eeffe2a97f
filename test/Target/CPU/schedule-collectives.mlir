// RUN: zero-opt %s --split-input-file --zero-cpu-schedule-collectives | FileCheck %s

func.func private @zero_rt_comm_start(i32, i32, i64, i64, i64, i64) -> i64
func.func private @zero_rt_comm_wait(i64)

// The gather's wait moves past the compute that does not touch its buffers
// to the first op that reads the gathered buffer (through a view).
// CHECK-LABEL: func.func @gather
// CHECK: %[[H:.*]] = call @zero_rt_comm_start
// CHECK-NEXT: linalg.copy ins(%arg2
// CHECK-NEXT: linalg.copy ins(%arg3
// CHECK-NEXT: memref.expand_shape
// CHECK-NEXT: call @zero_rt_comm_wait(%[[H]])
// CHECK-NEXT: linalg.copy ins(%{{.*}} : memref<2x2xf32>)
func.func @gather(%shard: memref<2xf32>, %out: memref<2x2xf32>, %x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : i32
  %c2 = arith.constant 2 : i32
  %z = arith.constant 0 : i64
  %n = arith.constant 2 : i64
  %full = memref.alloc() : memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %shard : memref<2xf32> -> index
  %pi = arith.index_cast %p : index to i64
  %q = memref.extract_aligned_pointer_as_index %full : memref<4xf32> -> index
  %qi = arith.index_cast %q : index to i64
  %h = func.call @zero_rt_comm_start(%c2, %c0, %pi, %qi, %n, %z) : (i32, i32, i64, i64, i64, i64) -> i64
  func.call @zero_rt_comm_wait(%h) : (i64) -> ()
  linalg.copy ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  linalg.copy ins(%y : memref<8xf32>) outs(%x : memref<8xf32>)
  %v = memref.expand_shape %full [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  linalg.copy ins(%v : memref<2x2xf32>) outs(%out : memref<2x2xf32>)
  memref.dealloc %full : memref<4xf32>
  return
}

// -----

func.func private @zero_rt_comm_start(i32, i32, i64, i64, i64, i64) -> i64
func.func private @zero_rt_comm_wait(i64)

// Writing the send buffer also has to wait: the collective may still be
// reading it.
// CHECK-LABEL: func.func @send_reuse
// CHECK: call @zero_rt_comm_start
// CHECK-NEXT: linalg.copy ins(%arg2
// CHECK-NEXT: call @zero_rt_comm_wait
// CHECK-NEXT: linalg.fill
func.func @send_reuse(%g: memref<4xf32>, %s: memref<2xf32>, %x: memref<8xf32>, %y: memref<8xf32>) {
  %c1 = arith.constant 1 : i32
  %c0 = arith.constant 0 : i32
  %z = arith.constant 0 : i64
  %n = arith.constant 2 : i64
  %f = arith.constant 0.0 : f32
  %p = memref.extract_aligned_pointer_as_index %g : memref<4xf32> -> index
  %pi = arith.index_cast %p : index to i64
  %q = memref.extract_aligned_pointer_as_index %s : memref<2xf32> -> index
  %qi = arith.index_cast %q : index to i64
  %h = func.call @zero_rt_comm_start(%c1, %c0, %pi, %qi, %n, %z) : (i32, i32, i64, i64, i64, i64) -> i64
  func.call @zero_rt_comm_wait(%h) : (i64) -> ()
  linalg.copy ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  linalg.fill ins(%f : f32) outs(%g : memref<4xf32>)
  return
}

// -----

func.func private @zero_rt_comm_start(i32, i32, i64, i64, i64, i64) -> i64
func.func private @zero_rt_comm_wait(i64)

// overlap_comm off: the wait stays with its start.
// CHECK-LABEL: func.func @sync
// CHECK: call @zero_rt_comm_start
// CHECK-NEXT: call @zero_rt_comm_wait
func.func @sync(%g: memref<4xf32>, %x: memref<8xf32>, %y: memref<8xf32>) attributes {zero.overlap_comm = false} {
  %c0 = arith.constant 0 : i32
  %z = arith.constant 0 : i64
  %n = arith.constant 4 : i64
  %p = memref.extract_aligned_pointer_as_index %g : memref<4xf32> -> index
  %pi = arith.index_cast %p : index to i64
  %h = func.call @zero_rt_comm_start(%c0, %c0, %pi, %pi, %n, %z) : (i32, i32, i64, i64, i64, i64) -> i64
  func.call @zero_rt_comm_wait(%h) : (i64) -> ()
  linalg.copy ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}

// -----

func.func private @zero_rt_comm_start(i32, i32, i64, i64, i64, i64) -> i64
func.func private @zero_rt_comm_wait(i64)

// Waits pass one another: the first collective's result is read only at
// the end, so its wait moves past the second one's wait and use.
// CHECK-LABEL: func.func @passing
// CHECK: %[[H1:.*]] = call @zero_rt_comm_start
// CHECK: %[[H2:.*]] = call @zero_rt_comm_start
// CHECK-NEXT: call @zero_rt_comm_wait(%[[H2]])
// CHECK-NEXT: linalg.copy ins(%arg1
// CHECK-NEXT: call @zero_rt_comm_wait(%[[H1]])
// CHECK-NEXT: linalg.copy ins(%arg0
func.func @passing(%a: memref<4xf32>, %b: memref<4xf32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : i32
  %z = arith.constant 0 : i64
  %n = arith.constant 4 : i64
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %pi = arith.index_cast %p : index to i64
  %q = memref.extract_aligned_pointer_as_index %b : memref<4xf32> -> index
  %qi = arith.index_cast %q : index to i64
  %h1 = func.call @zero_rt_comm_start(%c0, %c0, %pi, %pi, %n, %z) : (i32, i32, i64, i64, i64, i64) -> i64
  func.call @zero_rt_comm_wait(%h1) : (i64) -> ()
  %h2 = func.call @zero_rt_comm_start(%c0, %c0, %qi, %qi, %n, %z) : (i32, i32, i64, i64, i64, i64) -> i64
  func.call @zero_rt_comm_wait(%h2) : (i64) -> ()
  linalg.copy ins(%b : memref<4xf32>) outs(%y : memref<4xf32>)
  linalg.copy ins(%a : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}
