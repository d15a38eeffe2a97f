// RUN: zero-opt %s | zero-opt | FileCheck %s

// CHECK-LABEL: func.func @group
// CHECK: zero.launch_group {
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%arg0 : memref<4xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%arg1 : memref<8xf32>)
// CHECK-NEXT: }
func.func @group(%a: memref<4xf32>, %b: memref<8xf32>) {
  %z = arith.constant 0.0 : f32
  zero.launch_group {
    linalg.fill ins(%z : f32) outs(%a : memref<4xf32>)
    linalg.fill ins(%z : f32) outs(%b : memref<8xf32>)
  }
  return
}
