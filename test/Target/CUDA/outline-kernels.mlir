// RUN: zero-opt %s --zero-gpu-outline-kernels --canonicalize | FileCheck %s

// A 2-d block forall over (64, 100) in 8 x 32 tiles is a grid of 8 x 4
// blocks (y, x) of 32 x 8 threads; the forall's ivs become block id times
// step, the thread forall's the thread ids. Both kernels' launches go to
// one gpu.module; the kernel function keeps only the launches.
// CHECK: module attributes {gpu.container_module}
// CHECK-LABEL: func.func private @ew
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: gpu.launch_func @zero_kernels::@ew_0 blocks in (%[[C4]], %[[C8]], %[[C1]]) threads in (%[[C32]], %[[C8]], %[[C1]]) args(%{{.*}} : memref<64x100xf32>, %{{.*}} : memref<64x100xf32>)
// CHECK-NOT: scf.forall
// CHECK-LABEL: func.func private @serial
// CHECK: gpu.launch_func @zero_kernels::@serial_0 blocks in (%[[S1:.*]], %[[S1]], %[[S1]]) threads in (%[[S1]], %[[S1]], %[[S1]])
// CHECK: gpu.module @zero_kernels
// CHECK: gpu.func @ew_0(%{{.*}}: memref<64x100xf32>, %{{.*}}: memref<64x100xf32>) kernel
// CHECK-DAG: %[[BX:.*]] = gpu.block_id x
// CHECK-DAG: %[[BY:.*]] = gpu.block_id y
// CHECK-DAG: %[[TX:.*]] = gpu.thread_id x
// CHECK-DAG: %[[TY:.*]] = gpu.thread_id y
// CHECK-DAG: arith.muli %[[BY]], %{{.*}} : index
// CHECK-DAG: arith.muli %[[BX]], %{{.*}} : index
// CHECK: memref.load
// CHECK: gpu.return
// CHECK: gpu.func @serial_0
// CHECK: scf.for
// CHECK: gpu.return
func.func private @ew(%a: memref<64x100xf32>, %b: memref<64x100xf32>) attributes {zero.kernel = "linalg.generic"} {
  scf.forall (%i, %j) = (0, 0) to (64, 100) step (8, 32) {
    scf.forall (%ti, %tj) in (8, 32) {
      %r = arith.addi %i, %ti : index
      %c = arith.addi %j, %tj : index
      %in = arith.cmpi ult, %c, %i : index
      scf.if %in {
        %x = memref.load %a[%r, %c] : memref<64x100xf32>
        memref.store %x, %b[%r, %c] : memref<64x100xf32>
      }
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  } {mapping = [#gpu.block<y>, #gpu.block<x>]}
  return
}
func.func private @serial(%a: memref<16xf32>, %s: memref<f32>) attributes {zero.kernel = "linalg.generic"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.forall (%b) in (1) {
    scf.forall (%t) in (1) {
      scf.for %i = %c0 to %c16 step %c1 {
        %x = memref.load %a[%i] : memref<16xf32>
        %acc = memref.load %s[] : memref<f32>
        %y = arith.addf %x, %acc : f32
        memref.store %y, %s[] : memref<f32>
      }
    } {mapping = [#gpu.thread<z>]}
  } {mapping = [#gpu.block<z>]}
  return
}

