// RUN: not zero-opt %s --zero-prefetch-gathers="prefetch-bucket-size=8 max-live-parameters=2" 2>&1 | FileCheck %s

// A limit below one gathered parameter cannot be met: one error, at the
// allocation where the step holds the most parameter elements.
// CHECK: error: {{.*}}"g1"{{.*}}: stage3_max_live_parameters allows 2 elements of gathered parameters, but the step holds 4 at once here without any prefetching; raise it to at least 4
// CHECK-NOT: error
func.func @too_small(%s1: memref<2xf32>, %s2: memref<2xf32>, %s3: memref<2xf32>, %y: memref<4xf32>, %x: memref<8xf32>, %x2: memref<8xf32>) {
  %b1 = memref.alloc() : memref<4xf32> loc(fused<#zero.buffer<parameters, forward>>["g1"])
  %r1 = zero.all_gather_start %s1 into %b1 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  linalg.copy ins(%x : memref<8xf32>) outs(%x2 : memref<8xf32>)
  zero.wait %r1
  linalg.copy ins(%b1 : memref<4xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %b1 : memref<4xf32>
  %b2 = memref.alloc() : memref<4xf32> loc(fused<#zero.buffer<parameters, forward>>["g2"])
  %r2 = zero.all_gather_start %s2 into %b2 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  linalg.copy ins(%x : memref<8xf32>) outs(%x2 : memref<8xf32>)
  zero.wait %r2
  linalg.copy ins(%b2 : memref<4xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %b2 : memref<4xf32>
  %b3 = memref.alloc() : memref<4xf32> loc(fused<#zero.buffer<parameters, forward>>["g3"])
  %r3 = zero.all_gather_start %s3 into %b3 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  linalg.copy ins(%x : memref<8xf32>) outs(%x2 : memref<8xf32>)
  zero.wait %r3
  linalg.copy ins(%b3 : memref<4xf32>) outs(%y : memref<4xf32>)
  memref.dealloc %b3 : memref<4xf32>
  return
}
