// RUN: zero-opt %s --split-input-file --zero-cpu-split-deallocs | FileCheck %s

// Distinct allocations freed unconditionally each get a dealloc of their
// own; an argument stays in the op.
// CHECK-LABEL: func.func @straight
// CHECK-DAG: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: bufferization.dealloc (%[[A]] : memref<4xf32>) if (%{{.*}})
// CHECK-NEXT: bufferization.dealloc (%[[B]] : memref<8xf32>) if (%{{.*}})
// CHECK-NEXT: bufferization.dealloc (%arg0 : memref<2xf32>) if (%false)
// CHECK-NOT: bufferization.dealloc
func.func @straight(%arg0: memref<2xf32>) {
  %true = arith.constant true
  %false = arith.constant false
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf32>
  bufferization.dealloc (%a, %b, %arg0 : memref<4xf32>, memref<8xf32>, memref<2xf32>) if (%true, %true, %false)
  return
}

// -----

// A view of %a beside %a, a retained alias of %b, and a condition known
// only at run time keep theirs in the op; %d goes alone.
// CHECK-LABEL: func.func @aliases
// CHECK: %[[D:.*]] = memref.alloc() : memref<3xf32>
// CHECK: bufferization.dealloc (%[[D]] : memref<3xf32>) if (%true)
// CHECK-NEXT: bufferization.dealloc (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : memref<4xf32>, memref<2xf32, strided<[1], offset: 1>>, memref<8xf32>, memref<5xf32>) if ({{.*}}) retain (%{{.*}} : memref<4xf32, strided<[1], offset: 4>>)
func.func @aliases(%c: i1) -> memref<4xf32, strided<[1], offset: 4>> {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %v = memref.subview %a[1] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 1>>
  %b = memref.alloc() : memref<8xf32>
  %r = memref.subview %b[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %e = memref.alloc() : memref<5xf32>
  %d = memref.alloc() : memref<3xf32>
  %o = bufferization.dealloc (%a, %v, %b, %e, %d : memref<4xf32>, memref<2xf32, strided<[1], offset: 1>>, memref<8xf32>, memref<5xf32>, memref<3xf32>) if (%true, %true, %true, %c, %true) retain (%r : memref<4xf32, strided<[1], offset: 4>>)
  return %r : memref<4xf32, strided<[1], offset: 4>>
}

// -----

// A buffer from a call may be any of them: the op stays whole.
// CHECK-LABEL: func.func @unknown
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>) if (%true, %true)
// CHECK-NOT: bufferization.dealloc
func.func private @make() -> memref<4xf32>
func.func @unknown() {
  %true = arith.constant true
  %a = memref.alloc() : memref<4xf32>
  %m = call @make() : () -> memref<4xf32>
  bufferization.dealloc (%a, %m : memref<4xf32>, memref<4xf32>) if (%true, %true)
  return
}
