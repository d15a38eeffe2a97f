// RUN: zero-opt %s | zero-opt | FileCheck %s

// A row sum and the scaling that reads it, over 64 rows.
// CHECK-LABEL: func.func @group
// CHECK: zero.row_group rows(1) {
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%arg1 : memref<64xf32>)
// CHECK-NEXT: linalg.generic
// CHECK: linalg.generic
// CHECK: }
#e = affine_map<(r, j) -> (r, j)>
#row = affine_map<(r, j) -> (r)>
func.func @group(%x: memref<64x128xf32>, %s: memref<64xf32>, %y: memref<64x128xf32>) {
  %z = arith.constant 0.0 : f32
  zero.row_group rows(1) {
    linalg.fill ins(%z : f32) outs(%s : memref<64xf32>)
    linalg.generic {indexing_maps = [#e, #row], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<64x128xf32>) outs(%s : memref<64xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %0 = arith.addf %a, %acc : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#e, #row, #e], iterator_types = ["parallel", "parallel"]}
        ins(%x, %s : memref<64x128xf32>, memref<64xf32>) outs(%y : memref<64x128xf32>) {
    ^bb0(%a: f32, %sum: f32, %o: f32):
      %0 = arith.divf %a, %sum : f32
      linalg.yield %0 : f32
    }
  }
  return
}
