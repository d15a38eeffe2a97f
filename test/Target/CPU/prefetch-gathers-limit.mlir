// RUN: not zero-opt %s --zero-cpu-prefetch-gathers 2>&1 | FileCheck %s

// A limit below one gathered parameter cannot be met: one error, at the
// allocation where the step holds the most parameter bytes.
// CHECK: error: {{.*}}"g1"{{.*}}: stage3_max_live_parameters allows 2 elements of gathered parameters, but the step holds 4 at once here without any prefetching; raise it to at least 4
// CHECK-NOT: error
func.func private @zero_rt_comm_start(i32, i32, i64, i64, i64, i64) -> i64
func.func private @zero_rt_comm_wait(i64)
func.func @too_small(%s1: memref<2xf32>, %s2: memref<2xf32>, %s3: memref<2xf32>, %y: memref<4xf32>, %x: memref<8xf32>, %x2: memref<8xf32>) attributes {zero.prefetch_bytes = 32 : i64, zero.max_live_parameter_bytes = 8 : i64} {
  %c2 = arith.constant 2 : i32
  %c0 = arith.constant 0 : i32
  %zero = arith.constant 0 : i64
  %n = arith.constant 2 : i64
  %b1 = memref.alloc() : memref<4xf32> loc(fused<#zero.buffer<parameters, forward>>["g1"])
  %p1 = memref.extract_aligned_pointer_as_index %s1 : memref<2xf32> -> index
  %p1i = arith.index_cast %p1 : index to i64
  %q1 = memref.extract_aligned_pointer_as_index %b1 : memref<4xf32> -> index
  %q1i = arith.index_cast %q1 : index to i64
  %h1 = func.call @zero_rt_comm_start(%c2, %c0, %p1i, %q1i, %n, %zero) : (i32, i32, i64, i64, i64, i64) -> i64
  linalg.copy ins(%x : memref<8xf32>) outs(%x2 : memref<8xf32>)
  func.call @zero_rt_comm_wait(%h1) : (i64) -> ()
  linalg.copy ins(%b1 : memref<4xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %b1 : memref<4xf32>
  %b2 = memref.alloc() : memref<4xf32> loc(fused<#zero.buffer<parameters, forward>>["g2"])
  %p2 = memref.extract_aligned_pointer_as_index %s2 : memref<2xf32> -> index
  %p2i = arith.index_cast %p2 : index to i64
  %q2 = memref.extract_aligned_pointer_as_index %b2 : memref<4xf32> -> index
  %q2i = arith.index_cast %q2 : index to i64
  %h2 = func.call @zero_rt_comm_start(%c2, %c0, %p2i, %q2i, %n, %zero) : (i32, i32, i64, i64, i64, i64) -> i64
  linalg.copy ins(%x : memref<8xf32>) outs(%x2 : memref<8xf32>)
  func.call @zero_rt_comm_wait(%h2) : (i64) -> ()
  linalg.copy ins(%b2 : memref<4xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %b2 : memref<4xf32>
  %b3 = memref.alloc() : memref<4xf32> loc(fused<#zero.buffer<parameters, forward>>["g3"])
  %p3 = memref.extract_aligned_pointer_as_index %s3 : memref<2xf32> -> index
  %p3i = arith.index_cast %p3 : index to i64
  %q3 = memref.extract_aligned_pointer_as_index %b3 : memref<4xf32> -> index
  %q3i = arith.index_cast %q3 : index to i64
  %h3 = func.call @zero_rt_comm_start(%c2, %c0, %p3i, %q3i, %n, %zero) : (i32, i32, i64, i64, i64, i64) -> i64
  linalg.copy ins(%x : memref<8xf32>) outs(%x2 : memref<8xf32>)
  func.call @zero_rt_comm_wait(%h3) : (i64) -> ()
  linalg.copy ins(%b3 : memref<4xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %b3 : memref<4xf32>
  return
}
