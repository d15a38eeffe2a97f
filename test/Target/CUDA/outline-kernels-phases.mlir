// RUN: zero-opt %s --zero-gpu-outline-kernels | FileCheck %s

// A row group's block forall holds a thread forall per op: one launch
// whose block is as large as the largest (32 x 8), each phase on its own
// threads (the 8 x 1 one guarded to thread x 0), a barrier between each
// two, none after the last.
// CHECK-LABEL: func.func private @rows
// CHECK: gpu.launch_func @zero_kernels::@rows_0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%[[C32:.*]], %[[C8:.*]], %{{.*}})
// CHECK: gpu.func @rows_0
// CHECK-DAG: %[[TX:.*]] = gpu.thread_id x
// CHECK-DAG: %[[TY:.*]] = gpu.thread_id y
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}, %[[TX]]] : memref<64x32xf32>
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[X0:.*]] = arith.cmpi ult, %[[TX]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[X0]] {
// CHECK: memref.load %{{.*}} : memref<64x32xf32>
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: memref.load %{{.*}} : memref<64xf32>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func private @rows(%parts: memref<64x32xf32>, %m: memref<64xf32>, %y: memref<64x32xf32>) attributes {zero.kernel = "zero.row_group"} {
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.forall (%b) in (8) {
    %first = arith.muli %b, %c8 : index
    scf.forall (%t, %l) in (8, 32) {
      %r = arith.addi %first, %t : index
      memref.store %one, %parts[%r, %l] : memref<64x32xf32>
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
    scf.forall (%t, %l) in (8, 1) {
      %r = arith.addi %first, %t : index
      %c0 = arith.constant 0 : index
      %x = memref.load %parts[%r, %c0] : memref<64x32xf32>
      memref.store %x, %m[%r] : memref<64xf32>
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
    scf.forall (%t, %l) in (8, 32) {
      %r = arith.addi %first, %t : index
      %x = memref.load %m[%r] : memref<64xf32>
      memref.store %x, %y[%r, %l] : memref<64x32xf32>
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

// A phase that maps no y runs on the block's first row of threads only
// (tid.y < 1), not once per row.
// CHECK-LABEL: gpu.func @mixed_0
// CHECK-DAG: %[[MY:.*]] = gpu.thread_id y
// CHECK: gpu.barrier
// CHECK-NEXT: %[[Y0:.*]] = arith.cmpi ult, %[[MY]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[Y0]] {
// CHECK: memref.store
// CHECK: }
// CHECK-NEXT: gpu.return
func.func private @mixed(%a: memref<8x32xf32>, %b: memref<32xf32>) attributes {zero.kernel = "zero.row_group"} {
  %one = arith.constant 1.0 : f32
  scf.forall (%blk) in (1) {
    scf.forall (%t, %l) in (8, 32) {
      memref.store %one, %a[%t, %l] : memref<8x32xf32>
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
    scf.forall (%l) in (32) {
      %c0 = arith.constant 0 : index
      %x = memref.load %a[%c0, %l] : memref<8x32xf32>
      memref.store %x, %b[%l] : memref<32xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}
