// RUN: zero-opt %s --zero-gpu-outline-kernels --split-input-file | FileCheck %s
// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(zero-gpu-outline-kernels, gpu.module(convert-gpu-to-nvvm, zero-apply-noalias))' | FileCheck %s --check-prefix=NVVM

// @copy is called with two allocations: each buffer is reached by one
// parameter only, its descriptor's aligned pointer (parameters 1 and 6 of
// two 1-d descriptors of 5 fields). @in_place is called with one buffer
// twice: no parameter is marked.
// CHECK: gpu.func @copy_0(%{{.*}}: memref<16xf32>, %{{.*}}: memref<16xf32>) kernel attributes {{{.*}}zero.noalias_params = array<i64: 1, 6>
// CHECK: gpu.func @in_place_0
// CHECK-NOT: zero.noalias_params
// CHECK: gpu.return
// NVVM-LABEL: llvm.func @copy_0
// NVVM-SAME: (%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {llvm.noalias}, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr {llvm.noalias},
// NVVM-NOT: zero.noalias_params
// NVVM-LABEL: llvm.func @in_place_0
// NVVM-NOT: llvm.noalias
// NVVM: llvm.return
func.func private @copy(%a: memref<16xf32>, %b: memref<16xf32>) attributes {zero.kernel = "linalg.generic"} {
  scf.forall (%bx) in (1) {
    scf.forall (%t) in (16) {
      %x = memref.load %a[%t] : memref<16xf32>
      memref.store %x, %b[%t] : memref<16xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}
func.func private @in_place(%a: memref<16xf32>, %b: memref<16xf32>) attributes {zero.kernel = "linalg.generic"} {
  scf.forall (%bx) in (1) {
    scf.forall (%t) in (16) {
      %x = memref.load %a[%t] : memref<16xf32>
      %y = arith.negf %x : f32
      memref.store %y, %b[%t] : memref<16xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}
func.func @step() {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<16xf32>
  call @copy(%a, %b) : (memref<16xf32>, memref<16xf32>) -> ()
  call @in_place(%a, %a) : (memref<16xf32>, memref<16xf32>) -> ()
  return
}

// -----

// A buffer reached through two parameters (the argument and a view of it
// made outside the launch) is not marked, the other buffer is: its 2-d
// descriptor follows the argument's and the view's (5 fields each), so
// its aligned pointer is parameter 11; the index comes last.
// CHECK-LABEL: gpu.func @views_0
// CHECK-SAME: %{{.*}}: memref<4x4xf32>, %{{.*}}: index) kernel
// CHECK-SAME: zero.noalias_params = array<i64: 11>
func.func private @views(%a: memref<16xf32>, %n: index, %b: memref<4x4xf32>) attributes {zero.kernel = "linalg.generic"} {
  %v = memref.subview %a[8] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1], offset: 8>>
  scf.forall (%bx) in (1) {
    scf.forall (%t) in (4) {
      %x = memref.load %a[%t] : memref<16xf32>
      %y = memref.load %v[%t] : memref<8xf32, strided<[1], offset: 8>>
      %s = arith.addf %x, %y : f32
      memref.store %s, %b[%t, %n] : memref<4x4xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}
func.func @step(%n: index) {
  %a = memref.alloc() : memref<16xf32>
  %b = memref.alloc() : memref<4x4xf32>
  call @views(%a, %n, %b) : (memref<16xf32>, index, memref<4x4xf32>) -> ()
  return
}
