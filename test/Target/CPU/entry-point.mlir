// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-cpu-entry-point | FileCheck %s

// CHECK-LABEL: func.func @main_entry(
// CHECK-SAME: %[[T:[a-z0-9]+]]: !llvm.ptr)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[T]][0] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[M0:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x8xf32>
// CHECK: llvm.getelementptr %[[T]][1]
// CHECK: %[[M1:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64)> to memref<f32>
// CHECK: call @main(%[[M0]], %[[M1]]) : (memref<4x8xf32>, memref<f32>) -> ()
func.func @main(%x: memref<4x8xf32>, %out: memref<f32>) attributes {zero.entry} {
  return
}

// -----

// expected-error @+1 {{entry function must return its results through out-parameters}}
func.func @main(%x: memref<4xf32>) -> memref<4xf32> attributes {zero.entry} {
  return %x : memref<4xf32>
}

// -----

// expected-error @+1 {{is not a static identity-layout memref}}
func.func @main(%x: memref<?xf32>) attributes {zero.entry} {
  return
}

// -----

// A step whose planned buffer count was not met: an in-place update failed.
// expected-error @+1 {{takes 2 buffers where 1 were planned}}
func.func @main(%x: memref<4xf32>, %y: memref<4xf32>) attributes {zero.entry, zero.abi_buffers = 1 : i64} {
  return
}
