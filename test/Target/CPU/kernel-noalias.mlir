// RUN: zero-opt %s --zero-cpu-kernel-noalias --split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-cpu-kernel-noalias --convert-to-llvm --zero-apply-noalias --split-input-file | FileCheck %s --check-prefix=LLVM

// Input a step argument, output an allocation of the step: neither can
// overlap the other. After conversion, the descriptors' aligned pointers
// (parameters 1 and 8: a rank-2 memref expands to 7 values) are noalias.
// CHECK-LABEL: func.func private @kernel_sum
// CHECK-SAME: (%{{.*}}: memref<4x8xf32> {llvm.noalias}, %{{.*}}: memref<4xf32> {llvm.noalias})
// CHECK-SAME: zero.noalias_params = array<i64: 1, 8>
// LLVM-LABEL: llvm.func @kernel_sum
// LLVM-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias}, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias},
// LLVM-NOT: zero.noalias_params
func.func private @kernel_sum(%a: memref<4x8xf32>, %c: memref<4xf32>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func @step(%arg: memref<4x8xf32>) {
  %c = memref.alloc() : memref<4xf32>
  call @kernel_sum(%arg, %c) : (memref<4x8xf32>, memref<4xf32>) -> ()
  memref.dealloc %c : memref<4xf32>
  return
}

// -----

// In place (the same buffer twice), two views of one allocation that meet,
// or two step arguments: no noalias, at any call of a shared kernel.
// CHECK-LABEL: func.func private @kernel_add
// CHECK-NOT: llvm.noalias
// CHECK-NOT: zero.noalias_params
// CHECK-LABEL: func.func private @kernel_copy
// CHECK-NOT: llvm.noalias
// CHECK-LABEL: func.func @calls
func.func private @kernel_add(%a: memref<4xf32, strided<[1], offset: ?>>, %b: memref<4xf32, strided<[1], offset: ?>>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func private @kernel_copy(%a: memref<4xf32>, %b: memref<4xf32>) attributes {zero.kernel = "memref.copy"} {
  return
}
func.func @calls(%x: memref<4xf32>, %y: memref<4xf32>) {
  %buf = memref.alloc() : memref<8xf32>
  %lo = memref.subview %buf[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %hi = memref.subview %buf[3] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 3>>
  %l = memref.cast %lo : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1], offset: ?>>
  %h = memref.cast %hi : memref<4xf32, strided<[1], offset: 3>> to memref<4xf32, strided<[1], offset: ?>>
  call @kernel_add(%l, %h) : (memref<4xf32, strided<[1], offset: ?>>, memref<4xf32, strided<[1], offset: ?>>) -> ()
  call @kernel_copy(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.dealloc %buf : memref<8xf32>
  return
}

// -----

// Views of one buffer (the CUDA target's arena) whose byte ranges are
// disjoint do not overlap; ranges that meet do, and a range not known
// statically may meet any.
// CHECK-LABEL: func.func private @kernel_disjoint
// CHECK-SAME: (%{{.*}}: memref<4xf32> {llvm.noalias}, %{{.*}}: memref<2x2xf32> {llvm.noalias}, %{{.*}}: memref<2xf32, strided<[1], offset: 4>> {llvm.noalias})
// CHECK-LABEL: func.func private @kernel_meet
// CHECK-NOT: llvm.noalias
// CHECK-LABEL: func.func private @kernel_unknown
// CHECK-NOT: llvm.noalias
// CHECK-LABEL: func.func @arena
func.func private @kernel_disjoint(%a: memref<4xf32>, %b: memref<2x2xf32>, %c: memref<2xf32, strided<[1], offset: 4>>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func private @kernel_meet(%a: memref<4xf32>, %b: memref<2xf32, strided<[1], offset: 3>>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func private @kernel_unknown(%a: memref<4xf32>, %b: memref<4xf32>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func @arena(%shift: index) {
  %arena = memref.alloc() : memref<96xi8>
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %a = memref.view %arena[%c0][] : memref<96xi8> to memref<4xf32>
  %b = memref.view %arena[%c16][] : memref<96xi8> to memref<2x2xf32>
  %w = memref.view %arena[%c64][] : memref<96xi8> to memref<8xf32>
  %c = memref.subview %w[4] [2] [1] : memref<8xf32> to memref<2xf32, strided<[1], offset: 4>>
  call @kernel_disjoint(%a, %b, %c) : (memref<4xf32>, memref<2x2xf32>, memref<2xf32, strided<[1], offset: 4>>) -> ()
  %v = memref.view %arena[%c0][] : memref<96xi8> to memref<8xf32>
  %m = memref.subview %v[3] [2] [1] : memref<8xf32> to memref<2xf32, strided<[1], offset: 3>>
  call @kernel_meet(%a, %m) : (memref<4xf32>, memref<2xf32, strided<[1], offset: 3>>) -> ()
  %u = memref.view %arena[%shift][] : memref<96xi8> to memref<4xf32>
  call @kernel_unknown(%a, %u) : (memref<4xf32>, memref<4xf32>) -> ()
  memref.dealloc %arena : memref<96xi8>
  return
}

// -----

// A cast to a dynamic offset (a shared kernel's argument type) hides no
// range: the cast's source says where the view lies.
// CHECK-LABEL: func.func private @kernel_cast
// CHECK-SAME: {llvm.noalias}, %{{.*}}: memref<4xf32, strided<[1], offset: ?>> {llvm.noalias})
func.func private @kernel_cast(%a: memref<4xf32, strided<[1], offset: ?>>, %b: memref<4xf32, strided<[1], offset: ?>>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func @casts() {
  %buf = memref.alloc() : memref<8xf32>
  %lo = memref.subview %buf[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %hi = memref.subview %buf[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %l = memref.cast %lo : memref<4xf32, strided<[1]>> to memref<4xf32, strided<[1], offset: ?>>
  %h = memref.cast %hi : memref<4xf32, strided<[1], offset: 4>> to memref<4xf32, strided<[1], offset: ?>>
  call @kernel_cast(%l, %h) : (memref<4xf32, strided<[1], offset: ?>>, memref<4xf32, strided<[1], offset: ?>>) -> ()
  memref.dealloc %buf : memref<8xf32>
  return
}

// -----

// Two arguments of a step whose calls pass disjoint buffers
// (zero.disjoint_arguments, which the entry's ABI promises): noalias. A
// view of one argument against the argument itself still may meet.
// CHECK-LABEL: func.func private @kernel_update
// CHECK-SAME: (%{{.*}}: memref<4xf32> {llvm.noalias}, %{{.*}}: memref<4xf32> {llvm.noalias})
// CHECK-LABEL: func.func private @kernel_self
// CHECK-NOT: llvm.noalias
// CHECK-LABEL: func.func @disjoint_step
func.func private @kernel_update(%a: memref<4xf32>, %b: memref<4xf32>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func private @kernel_self(%a: memref<8xf32>, %b: memref<4xf32, strided<[1], offset: 2>>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func @disjoint_step(%g: memref<4xf32>, %p: memref<4xf32>, %q: memref<8xf32>) attributes {zero.disjoint_arguments} {
  call @kernel_update(%g, %p) : (memref<4xf32>, memref<4xf32>) -> ()
  %v = memref.subview %q[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  call @kernel_self(%q, %v) : (memref<8xf32>, memref<4xf32, strided<[1], offset: 2>>) -> ()
  return
}

// -----

// A buffer also passed unranked may be any other: nothing is marked.
// CHECK-LABEL: func.func private @kernel_unranked
// CHECK-NOT: llvm.noalias
// CHECK-NOT: zero.noalias_params
// CHECK-LABEL: func.func @unranked
func.func private @kernel_unranked(%a: memref<4xf32>, %u: memref<*xf32>, %b: memref<4xf32>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func @unranked() {
  %x = memref.alloc() : memref<4xf32>
  %y = memref.alloc() : memref<4xf32>
  %u = memref.cast %x : memref<4xf32> to memref<*xf32>
  call @kernel_unranked(%x, %u, %y) : (memref<4xf32>, memref<*xf32>, memref<4xf32>) -> ()
  return
}
