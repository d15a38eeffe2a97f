// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu-latency.json gpu=true" | FileCheck %s
// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu-latency.json gpu=true load-batch=8" | FileCheck %s --check-prefix=BATCH
// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu.json gpu=true load-batch=8" | FileCheck %s --check-prefix=NOLAT
// RUN: not zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu-latency.json gpu=true load-batch=0" 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: not zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu-bad-latency.json gpu=true" 2>&1 | FileCheck %s --check-prefix=BADLAT

// The unit GPU (1 GFLOP/s, 1 GB/s, 1024 resident threads) with a memory
// latency of 100 us (20 us for what the cache serves): a launch costs at
// least the loads each thread waits for one after another, once per wave
// of 1024 threads.
//
// An add over 4096 floats on 4096 threads: 4 waves of one load each,
// 400 us, against 32768 B at 1 GB/s (32.768 us); batches change nothing
// (a thread has one iteration). The latency bounds it; without a latency
// key, the bytes.
// CHECK-LABEL: module attributes
// CHECK-SAME: bound_seconds = {latency = {{4\.0[0-9]*(e|E)-0?4}} : f64}
// CHECK-SAME: compute_seconds = {{4\.0[0-9]*(e|E)-0?4}} : f64
// BATCH-LABEL: module attributes
// BATCH-SAME: compute_seconds = {{4\.0[0-9]*(e|E)-0?4}} : f64
// NOLAT-LABEL: module attributes
// NOLAT-SAME: bound_seconds = {memory = {{3\.2768[0-9]*(e|E)-0?5}} : f64}
// NOLAT-SAME: compute_seconds = {{3\.2768[0-9]*(e|E)-0?5}} : f64
// ERR: error: zero-timeline-report: load-batch 0 must be at least 1
// BADLAT: error: {{.*}}unit-gpu-bad-latency.json: device.memory_latency: expected a number >= 0
#id = affine_map<(i) -> (i)>
module {
  func.func @step(%a: memref<4096xf32>, %b: memref<4096xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<4096xf32>) outs(%b : memref<4096xf32>) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %x : f32
      linalg.yield %s : f32
    }
    return
  }
}

// -----

// Row sums of [1024, 64] on 1024 threads: 64 loads a thread, one after
// another (6.4 ms), or in 8 batches of 8 (800 us), against 270,336 B at
// 1 GB/s (the rows read, the sums read and written: 270.336 us). Where the
// sums may lie in the rows' buffer, the loads stay one at a time.
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_seconds = {{6\.4[0-9]*(e|E)-0?3}} : f64
// BATCH-LABEL: module attributes
// BATCH-SAME: compute_seconds = {{(8\.0|7\.9999)[0-9]*(e|E)-0?4}} : f64
// NOLAT-LABEL: module attributes
// NOLAT-SAME: compute_seconds = {{2\.70336[0-9]*(e|E)-0?4}} : f64
module {
  func.func @step(%rows: memref<1024x64xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %sums = memref.alloc() : memref<1024xf32>
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%rows : memref<1024x64xf32>) outs(%sums : memref<1024xf32>) {
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
    memref.dealloc %sums : memref<1024xf32>
    return
  }
}

// -----

// CHECK-LABEL: module attributes
// CHECK-SAME: compute_seconds = {{6\.4[0-9]*(e|E)-0?3}} : f64
// BATCH-LABEL: module attributes
// BATCH-SAME: compute_seconds = {{6\.4[0-9]*(e|E)-0?3}} : f64
// NOLAT-LABEL: module attributes
// NOLAT-SAME: compute_seconds = {{2\.70336[0-9]*(e|E)-0?4}} : f64
module {
  func.func @step(%buf: memref<66560xf32>, %k: index) attributes {zero.entry, zero.world_size = 1 : i64} {
    %rows = memref.subview %buf[0] [65536] [1] : memref<66560xf32> to memref<65536xf32>
    %rows2 = memref.expand_shape %rows [[0, 1]] output_shape [1024, 64] : memref<65536xf32> into memref<1024x64xf32>
    %sums = memref.subview %buf[%k] [1024] [1] : memref<66560xf32> to memref<1024xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%rows2 : memref<1024x64xf32>) outs(%sums : memref<1024xf32, strided<[1], offset: ?>>) {
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
    return
  }
}

// -----

// A gather: each of 1024 threads loads its index, then the table's
// element at it: two loads one after the other, 200 us. A fill reads
// nothing and waits for no load: 4096 B at 1 GB/s, 4.096 us.
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_seconds = {{2\.0409(6|599)[0-9]*(e|E)-0?4}} : f64
// BATCH-LABEL: module attributes
// BATCH-SAME: compute_seconds = {{2\.0409(6|599)[0-9]*(e|E)-0?4}} : f64
// NOLAT-LABEL: module attributes
// NOLAT-SAME: compute_seconds = {{1\.6384[0-9]*(e|E)-0?5}} : f64
module {
  func.func @step(%idx: memref<1024xi64>, %table: memref<100xf32>, %out: memref<1024xf32>, %z: memref<1024xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%idx : memref<1024xi64>) outs(%out : memref<1024xf32>) {
    ^bb0(%k: i64, %y: f32):
      %i = arith.index_cast %k : i64 to index
      %v = memref.load %table[%i] : memref<100xf32>
      linalg.yield %v : f32
    }
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%z : memref<1024xf32>)
    return
  }
}

// -----

// A copy: a thread per element, one load each: 4096 floats are 4 waves,
// 400 us (against 32768 B, 32.768 us).
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_seconds = {{4\.0[0-9]*(e|E)-0?4}} : f64
// BATCH-LABEL: module attributes
// BATCH-SAME: compute_seconds = {{4\.0[0-9]*(e|E)-0?4}} : f64
// NOLAT-LABEL: module attributes
// NOLAT-SAME: compute_seconds = {{3\.2768[0-9]*(e|E)-0?5}} : f64
module {
  func.func @step(%a: memref<4096xf32>, %b: memref<4096xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    memref.copy %a, %b : memref<4096xf32> to memref<4096xf32>
    return
  }
}

// -----

// A bias broadcast over [1024, 64] (65536 threads, 64 waves): each thread
// loads an element of a 256 B buffer read 1024 times, which the cache
// serves: 64 x 20 us = 1.28 ms, against 262,400 B (262.4 us).
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_seconds = {{1\.28[0-9]*(e|E)-0?3}} : f64
// NOLAT-LABEL: module attributes
// NOLAT-SAME: compute_seconds = {{2\.624[0-9]*(e|E)-0?4}} : f64
// BATCH-LABEL: module attributes
// BATCH-SAME: compute_seconds = {{1\.28[0-9]*(e|E)-0?3}} : f64
module {
  func.func @step(%bias: memref<64xf32>, %out: memref<1024x64xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%bias : memref<64xf32>) outs(%out : memref<1024x64xf32>) {
    ^bb0(%b: f32, %y: f32):
      %s = arith.addf %b, %b : f32
      linalg.yield %s : f32
    }
    return
  }
}

// -----

// A row group's phases wait in turn: on a thread a row (64 threads, one
// wave; the sums and the quotients are the step's own buffers, so no
// input may be an output), the sum loads its row's 128 elements from memory (128 x 100 us;
// in batches of 8, 16), then the division reads the row and the sum again,
// from the cache (128 x 20 us; 16): 15.36 ms, or 1.92 ms, against the
// group's 65792 B and 16384 FLOP on 64 threads (1052.672 us).
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_seconds = {{1\.536[0-9]*(e|E)-0?2}} : f64
// BATCH-LABEL: module attributes
// BATCH-SAME: compute_seconds = {{(1\.92|1\.9199)[0-9]*(e|E)-0?3}} : f64
// NOLAT-LABEL: module attributes
// NOLAT-SAME: compute_seconds = {{1\.052672(e|E)-0?3|0\.00105267[0-9]*}} : f64
#e = affine_map<(r, j) -> (r, j)>
#row = affine_map<(r, j) -> (r)>
module {
  func.func @step(%x: memref<64x128xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %z = arith.constant 0.0 : f32
    %s = memref.alloc() : memref<64xf32>
    %y = memref.alloc() : memref<64x128xf32>
    zero.row_group rows(1) {
      linalg.fill ins(%z : f32) outs(%s : memref<64xf32>)
      linalg.generic {indexing_maps = [#e, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x128xf32>) outs(%s : memref<64xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %0 = arith.addf %a, %acc : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [#e, #row, #e], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<64x128xf32>, memref<64xf32>) outs(%y : memref<64x128xf32>) {
      ^bb0(%a: f32, %sum: f32, %o: f32):
        %0 = arith.divf %a, %sum : f32
        linalg.yield %0 : f32
      }
    }
    memref.dealloc %s : memref<64xf32>
    memref.dealloc %y : memref<64x128xf32>
    return
  }
}

// -----

// A token loop (an embedding gradient's scatter) on one thread, as the
// pass maps no grid: each of the 64 iterations loads a token's id, then
// adds the token's 16-element row into the table's row at that id. The
// ids come from memory one at a time (64 rounds), or 8 at a time (8: the
// loop writes no id); each row add is 16 loads one after another, or 2
// batches: 1088 rounds of 100 us (108.8 ms), or 136 (13.6 ms). Without
// the latencies: the row adds' 1024 additions on one thread, 1/1024 of the
// device (1.048576 ms).
// CHECK-LABEL: module attributes
// CHECK-SAME: {{ }}compute_seconds = {{1\.088[0-9]*(e|E)-0?1|0\.1088[0-9]*}} : f64
// BATCH-LABEL: module attributes
// BATCH-SAME: {{ }}compute_seconds = {{1\.36[0-9]*(e|E)-0?2|0\.0136[0-9]*}} : f64
// NOLAT-LABEL: module attributes
// NOLAT-SAME: {{ }}compute_seconds = {{1\.048576[0-9]*(e|E)-0?3|0\.001048576[0-9]*}} : f64
#r3 = affine_map<(i, j) -> (i, j)>
module {
  func.func @step(%d: memref<64x16xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %ids = memref.alloc() : memref<64xi32>
    %table = memref.alloc() : memref<128x16xf32>
    scf.for %i = %c0 to %c64 step %c1 {
      %id = memref.load %ids[%i] : memref<64xi32>
      %k = arith.index_cast %id : i32 to index
      %src = memref.subview %d[%i, 0] [1, 16] [1, 1] : memref<64x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
      %row = memref.subview %table[%k, 0] [1, 16] [1, 1] : memref<128x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
      %sum = memref.alloc() : memref<1x16xf32>
      linalg.generic {indexing_maps = [#r3, #r3, #r3], iterator_types = ["parallel", "parallel"]} ins(%row, %src : memref<1x16xf32, strided<[16, 1], offset: ?>>, memref<1x16xf32, strided<[16, 1], offset: ?>>) outs(%sum : memref<1x16xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %0 = arith.addf %a, %b : f32
        linalg.yield %0 : f32
      }
      memref.copy %sum, %row : memref<1x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
      memref.dealloc %sum : memref<1x16xf32>
    }
    memref.dealloc %ids : memref<64xi32>
    memref.dealloc %table : memref<128x16xf32>
    return
  }
}

// -----

// The same loop over 8 ids read 8 times each: more reads than elements,
// from the cache (64 rounds of 20 us, 8 batched), the row adds as before
// (1024 rounds of 100 us, 128 batched): 103.68 ms, 12.96 ms.
// CHECK-LABEL: module attributes
// CHECK-SAME: {{ }}compute_seconds = {{1\.0368[0-9]*(e|E)-0?1|0\.10368[0-9]*}} : f64
// BATCH-LABEL: module attributes
// BATCH-SAME: {{ }}compute_seconds = {{1\.296[0-9]*(e|E)-0?2|0\.01296[0-9]*}} : f64
#r4 = affine_map<(i, j) -> (i, j)>
module {
  func.func @step(%d: memref<64x16xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %ids = memref.alloc() : memref<8xi32>
    %table = memref.alloc() : memref<128x16xf32>
    scf.for %i = %c0 to %c64 step %c1 {
      %j = arith.remui %i, %c8 : index
      %id = memref.load %ids[%j] : memref<8xi32>
      %k = arith.index_cast %id : i32 to index
      %src = memref.subview %d[%i, 0] [1, 16] [1, 1] : memref<64x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
      %row = memref.subview %table[%k, 0] [1, 16] [1, 1] : memref<128x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
      %sum = memref.alloc() : memref<1x16xf32>
      linalg.generic {indexing_maps = [#r4, #r4, #r4], iterator_types = ["parallel", "parallel"]} ins(%row, %src : memref<1x16xf32, strided<[16, 1], offset: ?>>, memref<1x16xf32, strided<[16, 1], offset: ?>>) outs(%sum : memref<1x16xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %0 = arith.addf %a, %b : f32
        linalg.yield %0 : f32
      }
      memref.copy %sum, %row : memref<1x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
      memref.dealloc %sum : memref<1x16xf32>
    }
    memref.dealloc %ids : memref<8xi32>
    memref.dealloc %table : memref<128x16xf32>
    return
  }
}
