// RUN: zero-opt %s --pass-pipeline="builtin.module(func.func(zero-cpu-expand-strided-copies))" | FileCheck %s

// CHECK-LABEL: func.func @copies
// Contiguous copies stay memref.copy (they become memcpy).
// CHECK: memref.copy %arg0, %arg1 : memref<4x4xf32> to memref<4x4xf32>
// CHECK: linalg.copy ins(%arg0 : memref<4x4xf32>) outs(%arg2 : memref<4x4xf32, strided<[8, 1], offset: 2>>)
// CHECK-NOT: memref.copy
func.func @copies(%a: memref<4x4xf32>, %b: memref<4x4xf32>,
                  %c: memref<4x4xf32, strided<[8, 1], offset: 2>>) {
  memref.copy %a, %b : memref<4x4xf32> to memref<4x4xf32>
  memref.copy %a, %c : memref<4x4xf32> to memref<4x4xf32, strided<[8, 1], offset: 2>>
  return
}
