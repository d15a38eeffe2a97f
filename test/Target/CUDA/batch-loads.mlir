// RUN: zero-opt %s -split-input-file --zero-gpu-batch-loads=batch=4 | FileCheck %s
// RUN: zero-opt %s -split-input-file --zero-gpu-batch-loads | FileCheck %s --check-prefix=DEFAULT

// A thread's row sum over 10 elements: 4 iterations a loop iteration, the
// 4 loads of the row first, then the accumulations in their order; the 2
// left over are one more iteration of 2 copies. The row and the sum are
// different buffers at the only call.
// CHECK: module attributes {zero.kernels = {gpu_batched_loops = 1 : i64}}
// CHECK-LABEL: func.func private @row_sum
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[C8]] step %[[C4]] {
// CHECK-NEXT: %[[X0:.*]] = memref.load %arg0[%[[I]]]
// CHECK-NEXT: %[[I1:.*]] = arith.addi %[[I]], %[[C1]]
// CHECK-NEXT: %[[X1:.*]] = memref.load %arg0[%[[I1]]]
// CHECK-NEXT: %[[I2:.*]] = arith.addi %[[I]], %[[C2]]
// CHECK-NEXT: %[[X2:.*]] = memref.load %arg0[%[[I2]]]
// CHECK-NEXT: %[[I3:.*]] = arith.addi %[[I]], %[[C3]]
// CHECK-NEXT: %[[X3:.*]] = memref.load %arg0[%[[I3]]]
// CHECK-NEXT: %[[A0:.*]] = memref.load %arg1[]
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[X0]], %[[A0]]
// CHECK-NEXT: memref.store %[[S0]], %arg1[]
// CHECK-NEXT: %[[A1:.*]] = memref.load %arg1[]
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[X1]], %[[A1]]
// CHECK-NEXT: memref.store %[[S1]], %arg1[]
// CHECK: memref.store {{.*}}, %arg1[]
// CHECK-NEXT: memref.load %arg1[]
// CHECK-NEXT: arith.addf %[[X3]]
// CHECK-NEXT: memref.store {{.*}}, %arg1[]
// CHECK-NEXT: }
// CHECK: scf.for %[[T:.*]] = %c8{{.*}} to %c10{{.*}} step %c2{{.*}} {
// CHECK-NEXT: memref.load %arg0[%[[T]]]
// CHECK-NEXT: %[[T1:.*]] = arith.addi %[[T]], %c1
// CHECK-NEXT: memref.load %arg0[%[[T1]]]
// CHECK-NEXT: memref.load %arg1[]
// CHECK-COUNT-2: memref.store
// CHECK-NEXT: }
// DEFAULT-LABEL: func.func private @row_sum
// DEFAULT: scf.for %{{.*}} = %{{.*}} to %c8{{.*}} step %c8{{.*}} {
// DEFAULT-COUNT-8: memref.load %arg0
// DEFAULT: scf.for %{{.*}} = %c8{{.*}} to %c10{{.*}} step %c2{{.*}} {
// DEFAULT-COUNT-2: memref.load %arg0
// DEFAULT: return
module {
  func.func private @row_sum(%row: memref<10xf32>, %sum: memref<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    scf.for %i = %c0 to %c10 step %c1 {
      %x = memref.load %row[%i] : memref<10xf32>
      %a = memref.load %sum[] : memref<f32>
      %s = arith.addf %x, %a : f32
      memref.store %s, %sum[] : memref<f32>
    }
    return
  }
  func.func @step() {
    %row = memref.alloc() : memref<10xf32>
    %sum = memref.alloc() : memref<f32>
    func.call @row_sum(%row, %sum) : (memref<10xf32>, memref<f32>) -> ()
    return
  }
}

// -----

// The row may be the sum's buffer (one call passes views of one buffer):
// its loads stay behind the stores.
// CHECK: module attributes {zero.kernels = {gpu_batched_loops = 0 : i64}}
// CHECK-LABEL: func.func private @maybe_same
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {
// CHECK-NEXT: memref.load %arg0
// CHECK-NEXT: memref.load %arg1
module {
  func.func private @maybe_same(%row: memref<10xf32>, %sum: memref<f32, strided<[], offset: ?>>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    scf.for %i = %c0 to %c10 step %c1 {
      %x = memref.load %row[%i] : memref<10xf32>
      %a = memref.load %sum[] : memref<f32, strided<[], offset: ?>>
      %s = arith.addf %x, %a : f32
      memref.store %s, %sum[] : memref<f32, strided<[], offset: ?>>
    }
    return
  }
  func.func @step(%buf: memref<16xf32>, %k: index) {
    %row = memref.subview %buf[0] [10] [1] : memref<16xf32> to memref<10xf32>
    %sum = memref.subview %buf[%k] [1] [1] : memref<16xf32> to memref<f32, strided<[], offset: ?>>
    func.call @maybe_same(%row, %sum) : (memref<10xf32>, memref<f32, strided<[], offset: ?>>) -> ()
    return
  }
}

// -----

// A kernel without a call site: `llvm.noalias` on the arguments says the
// same. A masked score's guarded load moves as a whole after the masks:
// the masks of the batch are loaded first, then the guarded scores.
// CHECK: module attributes {zero.kernels = {gpu_batched_loops = 1 : i64}}
// CHECK-LABEL: func.func @guarded
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4 {
// CHECK-COUNT-4: memref.load %arg0
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.load %arg1
// CHECK: scf.if
// CHECK: scf.if
// CHECK: scf.if
// CHECK-NOT: memref.load %arg0
// CHECK: memref.store
func.func @guarded(%mask: memref<8xi1> {llvm.noalias}, %s: memref<8xf32> {llvm.noalias},
                   %out: memref<8xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %ninf = arith.constant 0xFF800000 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    %m = memref.load %mask[%i] : memref<8xi1>
    %v = scf.if %m -> (f32) {
      %x = memref.load %s[%i] : memref<8xf32>
      scf.yield %x : f32
    } else {
      scf.yield %ninf : f32
    }
    memref.store %v, %out[%i] : memref<8xf32>
  }
  return
}

// -----

// Left alone: a call in the body (effects unknown), a loop of one
// iteration, bounds known only at run time, and a body that loads only
// what it writes.
// CHECK: module attributes {zero.kernels = {gpu_batched_loops = 0 : i64}}
// CHECK-LABEL: func.func @left_alone
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK-NEXT: memref.load
// CHECK-NEXT: func.call @g
// CHECK: scf.for %{{.*}} = %c0 to %c1 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %arg2 step %c1 {
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1 {
// CHECK-NEXT: memref.load %arg1
// CHECK-NEXT: arith.addf
// CHECK-NEXT: memref.store
func.func private @g(f32)
func.func @left_alone(%a: memref<8xf32> {llvm.noalias}, %b: memref<8xf32> {llvm.noalias}, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    func.call @g(%x) : (f32) -> ()
  }
  scf.for %i = %c0 to %c1 step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %b[%i] : memref<8xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i] : memref<8xf32>
  }
  return
}

// -----

// Values carried by the loop go from copy to copy; only the innermost
// loop is unrolled.
// CHECK-LABEL: func.func @carried
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:.*]] = %{{.*}}) -> (f32) {
// CHECK-COUNT-4: memref.load %arg0
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[S]],
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]],
// CHECK-NEXT: %[[S3:.*]] = arith.addf %[[S2]],
// CHECK-NEXT: %[[S4:.*]] = arith.addf %[[S3]],
// CHECK-NEXT: scf.yield %[[S4]] : f32
// CHECK: memref.store %[[R]], %arg1
func.func @carried(%a: memref<4x8xf32> {llvm.noalias}, %out: memref<4xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %r = %c0 to %c4 step %c1 {
    %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %zero) -> (f32) {
      %x = memref.load %a[%r, %i] : memref<4x8xf32>
      %t = arith.addf %s, %x : f32
      scf.yield %t : f32
    }
    memref.store %sum, %out[%r] : memref<4xf32>
  }
  return
}
