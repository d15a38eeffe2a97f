// RUN: zero-opt %s --split-input-file --zero-prefetch-gathers="prefetch-bucket-size=4" | FileCheck %s --check-prefix=ONE
// RUN: zero-opt %s --split-input-file --zero-prefetch-gathers="prefetch-bucket-size=8" | FileCheck %s --check-prefix=TWO
// RUN: zero-opt %s --split-input-file --zero-prefetch-gathers="prefetch-bucket-size=8 max-live-parameters=8" | FileCheck %s --check-prefix=LIVE
// RUN: zero-opt %s --split-input-file --zero-prefetch-gathers="prefetch-bucket-size=0" | FileCheck %s --check-prefix=NONE

// Three gathers of 4 elements, each used once and freed.
//
// A 4-element budget lets one gather be ahead of its use: each starts right
// after the previous one's wait, its buffer with it.
// ONE-LABEL: func.func @gathers
// ONE: %[[R1:.*]] = zero.all_gather_start
// ONE: zero.wait %[[R1]]
// ONE-NEXT: memref.alloc() : memref<4xf32>
// ONE-NEXT: %[[R2:.*]] = zero.all_gather_start
// ONE-NEXT: linalg.copy ins(%{{.*}} : memref<4xf32>)
// ONE-NEXT: memref.dealloc
// ONE-NEXT: linalg.copy ins(%arg4
// ONE-NEXT: zero.wait %[[R2]]
// ONE-NEXT: memref.alloc() : memref<4xf32>
// ONE-NEXT: %[[R3:.*]] = zero.all_gather_start
//
// An 8-element budget: two gathers ahead. The third starts right after the
// first one's wait, next to the second.
// TWO-LABEL: func.func @gathers
// TWO: %[[R1:.*]] = zero.all_gather_start
// TWO: zero.wait %[[R1]]
// TWO: %[[R2:.*]] = zero.all_gather_start
// TWO: %[[R3:.*]] = zero.all_gather_start
// TWO: zero.wait %[[R2]]
// TWO: zero.wait %[[R3]]
//
// The same budget under an 8-element live limit: a gather may not start
// while two other gathered buffers are live, so only one is ahead.
// LIVE-LABEL: func.func @gathers
// LIVE: %[[R1:.*]] = zero.all_gather_start
// LIVE: zero.wait %[[R1]]
// LIVE: %[[R2:.*]] = zero.all_gather_start
// LIVE: zero.wait %[[R2]]
// LIVE: %[[R3:.*]] = zero.all_gather_start
//
// Without a budget nothing moves.
// NONE-LABEL: func.func @gathers
// NONE: %[[R1:.*]] = zero.all_gather_start
// NONE: zero.wait %[[R1]]
// NONE: memref.dealloc
// NONE-NEXT: memref.alloc
func.func @gathers(%s1: memref<2xf32>, %s2: memref<2xf32>, %s3: memref<2xf32>, %y: memref<4xf32>, %x: memref<8xf32>, %x2: memref<8xf32>) {
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

// -----

// The budget counts elements, whatever their size: f64 gathers of 4
// elements (32 bytes) under a 4-element budget are one ahead, as f32 ones.
// ONE-LABEL: func.func @gathers_f64
// ONE: zero.wait
// ONE-NEXT: memref.alloc() : memref<4xf64>
// ONE-NEXT: zero.all_gather_start
// TWO-LABEL: func.func @gathers_f64
// TWO: zero.all_gather_start
// TWO: zero.wait
// TWO: zero.all_gather_start
// TWO: zero.all_gather_start
func.func @gathers_f64(%s1: memref<2xf64>, %s2: memref<2xf64>, %s3: memref<2xf64>, %y: memref<4xf64>, %x: memref<8xf32>, %x2: memref<8xf32>) {
  %b1 = memref.alloc() : memref<4xf64> loc(fused<#zero.buffer<parameters, forward>>["g1"])
  %r1 = zero.all_gather_start %s1 into %b1 {world_size = 2 : i64} : memref<2xf64>, memref<4xf64>
  linalg.copy ins(%x : memref<8xf32>) outs(%x2 : memref<8xf32>)
  zero.wait %r1
  linalg.copy ins(%b1 : memref<4xf64>) outs(%y : memref<4xf64>)
  memref.dealloc %b1 : memref<4xf64>
  %b2 = memref.alloc() : memref<4xf64> loc(fused<#zero.buffer<parameters, forward>>["g2"])
  %r2 = zero.all_gather_start %s2 into %b2 {world_size = 2 : i64} : memref<2xf64>, memref<4xf64>
  linalg.copy ins(%x : memref<8xf32>) outs(%x2 : memref<8xf32>)
  zero.wait %r2
  linalg.copy ins(%b2 : memref<4xf64>) outs(%y : memref<4xf64>)
  memref.dealloc %b2 : memref<4xf64>
  %b3 = memref.alloc() : memref<4xf64> loc(fused<#zero.buffer<parameters, forward>>["g3"])
  %r3 = zero.all_gather_start %s3 into %b3 {world_size = 2 : i64} : memref<2xf64>, memref<4xf64>
  linalg.copy ins(%x : memref<8xf32>) outs(%x2 : memref<8xf32>)
  zero.wait %r3
  linalg.copy ins(%b3 : memref<4xf64>) outs(%y : memref<4xf64>)
  memref.dealloc %b3 : memref<4xf64>
  return
}

// -----

// Below stage 3 the gathers bring back updated shards after the optimizer:
// nothing moves.
// TWO-LABEL: func.func @stage2
// TWO: %[[R1:.*]] = zero.all_gather_start
// TWO: zero.wait %[[R1]]
// TWO: memref.dealloc
// TWO-NEXT: memref.alloc
func.func @stage2(%s1: memref<2xf32>, %s2: memref<2xf32>, %s3: memref<2xf32>, %y: memref<4xf32>, %x: memref<8xf32>, %x2: memref<8xf32>) attributes {zero.stage = 2 : i64} {
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
