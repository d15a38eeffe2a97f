// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-async-collectives | FileCheck %s

// Each buffer collective becomes a start and, right after it, its wait.
// CHECK-LABEL: func.func @split
// CHECK-NEXT: %[[R1:.*]] = zero.all_reduce_start %arg0 into %arg0 {world_size = 4 : i64} : memref<4xf32>, memref<4xf32>
// CHECK-NEXT: zero.wait %[[R1]]
// CHECK-NEXT: %[[R2:.*]] = zero.reduce_scatter_start %arg0 into %arg1 {world_size = 4 : i64} : memref<4xf32>, memref<1xf32>
// CHECK-NEXT: zero.wait %[[R2]]
// CHECK-NEXT: %[[R3:.*]] = zero.all_gather_start %arg1 into %arg0 {world_size = 4 : i64} : memref<1xf32>, memref<4xf32>
// CHECK-NEXT: zero.wait %[[R3]]
// CHECK-NEXT: return
func.func @split(%a: memref<4xf32>, %s: memref<1xf32>) {
  zero.all_reduce %a into %a {world_size = 4 : i64} : memref<4xf32>, memref<4xf32>
  zero.reduce_scatter %a into %s {world_size = 4 : i64} : memref<4xf32>, memref<1xf32>
  zero.all_gather %s into %a {world_size = 4 : i64} : memref<1xf32>, memref<4xf32>
  return
}

// -----

func.func @tensor(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{collective was not bufferized}}
  %r = zero.all_reduce %a into %a {world_size = 2 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}
