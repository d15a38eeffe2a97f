// RUN: zero-opt %s --zero-gpu-scalar-copies -split-input-file | FileCheck %s

// The global norm's packing: each element the host would move between
// device buffers becomes a copy between 0-d views (a kernel once formed);
// the source's free moves after the copy. Host-resident hyperparameters
// are still loaded on the host.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[LR:.*]] = memref.load %arg1[] : memref<f64>
// CHECK: %[[DST:.*]] = memref.alloc() : memref<2xf32>
// CHECK: %[[S0:.*]] = memref.subview %arg0[%c0] [1] [1] : memref<1xf32> to memref<f32, strided<[], offset: ?>>
// CHECK: %[[D0:.*]] = memref.subview %[[DST]][%c0] [1] [1] : memref<2xf32> to memref<f32, strided<[], offset: ?>>
// CHECK: memref.copy %[[S0]], %[[D0]]
// CHECK: %[[S1:.*]] = memref.subview %[[SRC:.*]][%c0] [1] [1] : memref<1xf32> to memref<f32, strided<[], offset: ?>>
// CHECK: %[[D1:.*]] = memref.subview %[[DST]][%c1] [1] [1]
// CHECK: memref.copy %[[S1]], %[[D1]]
// CHECK-NEXT: memref.dealloc %[[SRC]]
// CHECK-NOT: memref.load
// CHECK: call @use(%[[DST]], %[[LR]])
func.func private @use(memref<2xf32>, f64)
func.func @train_step(%arg0: memref<1xf32>, %arg1: memref<f64> {zero.role = #zero.role<hyperparameter>}) attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %lr = memref.load %arg1[] : memref<f64>
  %src = memref.alloc() : memref<1xf32>
  %a = memref.load %arg0[%c0] : memref<1xf32>
  %b = memref.load %src[%c0] : memref<1xf32>
  memref.dealloc %src : memref<1xf32>
  %dst = memref.alloc() : memref<2xf32>
  memref.store %a, %dst[%c0] : memref<2xf32>
  memref.store %b, %dst[%c1] : memref<2xf32>
  func.call @use(%dst, %lr) : (memref<2xf32>, f64) -> ()
  return
}

// -----

// Loads and stores inside a loop of pure compute belong to a kernel.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
func.func @loop(%arg0: memref<4xf32>, %arg1: memref<4xf32>) attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %arg0[%i] : memref<4xf32>
    memref.store %v, %arg1[%i] : memref<4xf32>
  }
  return
}
