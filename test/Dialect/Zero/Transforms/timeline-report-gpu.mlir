// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu.json gpu=true" | FileCheck %s
// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu.json" | FileCheck %s --check-prefix=OPS
// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu-small-cache.json gpu=true" | FileCheck %s --check-prefix=SMALL
// RUN: not zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-machine.json gpu=true" 2>&1 | FileCheck %s --check-prefix=NOGPU

// The CUDA target's launches on the unit GPU: 1 GFLOP/s, 1 GB/s, 1024
// resident threads, no launch overhead; an allocation would cost 1 us on
// the host but lies in the arena.
//
// alloc: counted, free.
// generic, addf over 1024 floats on 1024 threads (the whole device):
//   1.024 us of arithmetic against 8192 B (8.192 us): 8.192 us.
// generic, addf over 64 floats on 64 threads: 1/16 of the arithmetic
//   rate and 2 warps of 32 of the bandwidth: 0.064 us x 16 against
//   512 B x 16 / 1 GB/s: 8.192 us.
// full sum of 1024 floats, no parallel loop: one thread, 1/1024 of the
//   arithmetic, one warp (1/32) of the bandwidth: 1.024 us x 1024 =
//   1048.576 us against 4104 B x 32 (131.328 us): 1048.576 us.
// matmul 10x10x10: cuBLAS, 2000 FLOP (2 us) against 1200 B: 2 us.
// a loop of 3 over a 16-element exp and mulf: one launch on one thread,
//   3 x 16 x (10 ns + 1 ns) = 0.528 us x 1024 = 540.672 us against
//   384 B x 32 (12.288 us): 540.672 us.
// 5 launches, 2 of them on one thread; 4208 FLOP; 1607.632 us, of which
// the two generics' 16.384 us are bound by memory, the rest by arithmetic.
// CHECK-LABEL: module attributes
// CHECK-SAME: zero.timeline = {step = {allocations = 1 : i64, bound_seconds = {compute = {{1\.591248e-03|0\.00159124[0-9]*}} : f64, memory = {{1\.638400e-05|1\.6384[0-9]*E-5}} : f64}, bytes_sent = 0 : i64, collectives = 0 : i64, communication_seconds = 0.000000e+00 : f64, compute_ops = 5 : i64, compute_seconds = {{1\.607632e-03|0\.00160763[0-9]*}} : f64, exposed_seconds = 0.000000e+00 : f64, flops = 4.208000e+03 : f64
// CHECK-SAME: serial_launches = 2 : i64, step_seconds = {{1\.607632e-03|0\.00160763[0-9]*}} : f64}}
// Per op (the CPU's model) the same step costs each op's roofline, the
// loop's body once per iteration (3 ops) and the allocation 1 us.
// OPS-LABEL: module attributes
// OPS-SAME: allocations = 1 : i64
// OPS-SAME: compute_ops = 7 : i64
// OPS-SAME: serial_launches = 0 : i64
// NOGPU: error: unit machine describes no GPU (device.threads: the threads it keeps resident), and the CUDA target's launches are costed by the threads they run on; pass a GPU description such as hardware/h100-8x-nvlink.json
#id = affine_map<(i) -> (i)>
module {
  func.func @step(%a: memref<1024xf32>, %b: memref<1024xf32>, %c: memref<64xf32>, %d: memref<64xf32>, %sum: memref<f32>, %m: memref<10x10xf32>, %n: memref<10x10xf32>, %o: memref<10x10xf32>, %e: memref<16xf32>, %f: memref<16xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %t = memref.alloc() : memref<1024xf32>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : memref<1024xf32>) outs(%t : memref<1024xf32>) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %x : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%c : memref<64xf32>) outs(%d : memref<64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %x : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#id, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%t : memref<1024xf32>) outs(%sum : memref<f32>) {
    ^bb0(%x: f32, %acc: f32):
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
    linalg.matmul ins(%m, %n : memref<10x10xf32>, memref<10x10xf32>) outs(%o : memref<10x10xf32>)
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %i = %c0 to %c3 step %c1 {
      linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%e : memref<16xf32>) outs(%f : memref<16xf32>) {
      ^bb0(%x: f32, %y: f32):
        %x2 = math.exp %x : f32
        %p = arith.mulf %x2, %x : f32
        linalg.yield %p : f32
      }
    }
    memref.dealloc %t : memref<1024xf32>
    return
  }
}

// -----

// A fill that the next op's threads run (that op's accumulator) is no
// launch of its own; one that initializes what the next op only reads is.
// fill of %s, then the full sum of 1024 floats into it: one launch, on one
//   thread; the fill's 4 B at a warp's share of the bandwidth (0.128 us)
//   and the sum as above (1048.576 us).
// fill of %u, then a 64-thread op reading it: the fill is a launch on one
//   thread (0.128 us), the op 64 x 1 ns of arithmetic at 1/16 of the rate
//   against 260 B x 16 / 1 GB/s: 4.16 us.
// 3 launches, 2 of them on one thread, 1088 FLOP; 1052.992 us.
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_ops = 3 : i64, compute_seconds = {{1\.052992e-03|0\.00105299[0-9]*}} : f64
// CHECK-SAME: flops = 1.088000e+03 : f64
// CHECK-SAME: serial_launches = 2 : i64
// OPS-LABEL: module attributes
#id = affine_map<(i) -> (i)>
module {
  func.func @step(%a: memref<1024xf32>, %d: memref<64xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %z = arith.constant 0.0 : f32
    %s = memref.alloc() : memref<f32>
    linalg.fill ins(%z : f32) outs(%s : memref<f32>)
    linalg.generic {indexing_maps = [#id, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<1024xf32>) outs(%s : memref<f32>) {
    ^bb0(%x: f32, %acc: f32):
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
    %u = memref.alloc() : memref<f32>
    linalg.fill ins(%z : f32) outs(%u : memref<f32>)
    linalg.generic {indexing_maps = [affine_map<(i) -> ()>, #id], iterator_types = ["parallel"]} ins(%u : memref<f32>) outs(%d : memref<64xf32>) {
    ^bb0(%x: f32, %y: f32):
      %r = arith.addf %x, %x : f32
      linalg.yield %r : f32
    }
    memref.dealloc %s : memref<f32>
    memref.dealloc %u : memref<f32>
    return
  }
}

// -----

// A zero fill right before a GEMM of its output is BLAS's beta = 0: no
// launch and no bytes. A fill of another value is a launch on 100 threads
// (a tenth of the arithmetic rate, 4 warps of the bandwidth: 400 B x 8 =
// 3.2 us), then the GEMMs as above (2 us each).
// 3 launches, 4000 FLOP; 7.2 us.
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_ops = 3 : i64, compute_seconds = {{7\.2[0-9]*e-06|7\.1999[0-9]*E-6}} : f64
// CHECK-SAME: flops = 4.000000e+03 : f64
// OPS-LABEL: module attributes
// OPS-SAME: compute_ops = 3 : i64
module {
  func.func @step(%m: memref<10x10xf32>, %n: memref<10x10xf32>, %o: memref<10x10xf32>, %p: memref<10x10xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %z = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    linalg.fill ins(%z : f32) outs(%o : memref<10x10xf32>)
    linalg.matmul ins(%m, %n : memref<10x10xf32>, memref<10x10xf32>) outs(%o : memref<10x10xf32>)
    linalg.fill ins(%one : f32) outs(%p : memref<10x10xf32>)
    linalg.matmul ins(%m, %n : memref<10x10xf32>, memref<10x10xf32>) outs(%p : memref<10x10xf32>)
    return
  }
}

// -----

// Launch groups (zero-gpu-group-launches) are one launch each: their ops'
// work on all their threads, and no sooner done than the slowest op alone.
// Two addf ops over 64 floats: 128 threads, 0.128 us x 8 against 1024 B x
// 8 = 8.192 us, the time of one of them alone (8.192 us each, 16.384 us
// apart). An addf over 64 floats with a full sum of 1024 (its fill in the
// sum's thread): the sum alone takes 1048.576 us on its one thread, more
// than the group's 1088 FLOP and 4620 B on 65 threads (49.28 us).
// 2 launches, none on one thread, 1216 FLOP; 1056.768 us.
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_ops = 2 : i64, compute_seconds = {{1\.056768e-03|0\.00105676[0-9]*}} : f64
// CHECK-SAME: flops = 1.216000e+03 : f64
// CHECK-SAME: serial_launches = 0 : i64
#id = affine_map<(i) -> (i)>
module {
  func.func @step(%a: memref<1024xf32>, %c: memref<64xf32>, %d: memref<64xf32>, %e: memref<64xf32>, %sum: memref<f32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %z = arith.constant 0.0 : f32
    zero.launch_group {
      linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%c : memref<64xf32>) outs(%d : memref<64xf32>) {
      ^bb0(%x: f32, %y: f32):
        %s = arith.addf %x, %x : f32
        linalg.yield %s : f32
      }
      linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%c : memref<64xf32>) outs(%e : memref<64xf32>) {
      ^bb0(%x: f32, %y: f32):
        %s = arith.addf %x, %x : f32
        linalg.yield %s : f32
      }
    }
    zero.launch_group {
      linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%d : memref<64xf32>) outs(%e : memref<64xf32>) {
      ^bb0(%x: f32, %y: f32):
        %s = arith.addf %x, %x : f32
        linalg.yield %s : f32
      }
      linalg.fill ins(%z : f32) outs(%sum : memref<f32>)
      linalg.generic {indexing_maps = [#id, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<1024xf32>) outs(%sum : memref<f32>) {
      ^bb0(%x: f32, %acc: f32):
        %s = arith.addf %x, %acc : f32
        linalg.yield %s : f32
      }
    }
    return
  }
}

// -----

// A row group (zero-gpu-row-groups) is one launch that moves each buffer
// once: x (32768 B) read by the sum and again by the division, which
// reads it from the cache; s (256 B) written by the fill, read back by
// the sum and the division; y (32768 B) written. 65792 B and 16384 FLOP
// (the sum's addf and the division's divf over 8192 elements) on a
// thread a row (no target mapping: 64 threads, 1/16 of the arithmetic
// rate and 2 warps of the bandwidth): max(16.384, 65.792) us x 16 =
// 1052.672 us, one launch. With a cache of 32896 B (half of the 65792 B
// the rows in flight touch: 64 threads, all resident), half the 33280 B
// read again (x by the division, s by the sum and the division) goes to
// memory: 82432 B, 1318.912 us.
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_ops = 1 : i64, compute_seconds = {{1\.052672e-03|0\.00105267[0-9]*}} : f64
// SMALL: compute_ops = 1 : i64, compute_seconds = {{1\.318912e-03|0\.00131891[0-9]*}} : f64
// CHECK-SAME: flops = 1.638400e+04 : f64
#e = affine_map<(r, j) -> (r, j)>
#row = affine_map<(r, j) -> (r)>
module {
  func.func @step(%x: memref<64x128xf32>, %s: memref<64xf32>, %y: memref<64x128xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %z = arith.constant 0.0 : f32
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
    return
  }
}

// -----

// The same group with the division written only in its region (rows below
// 32 at columns [0, 64), the rest whole: 3/4 of y): 3/4 of its divisions
// and of its reads of x (from the cache) and y's 24576 B written. 57600 B
// and 14336 FLOP: max(14.336, 57.6) us x 16 = 921.6 us.
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_ops = 1 : i64, compute_seconds = {{9\.2159[0-9]*E-4|9\.216000e-04|0\.000921[0-9]*}} : f64
// CHECK-SAME: flops = 1.433600e+04 : f64
#e = affine_map<(r, j) -> (r, j)>
#row = affine_map<(r, j) -> (r)>
module {
  func.func @step(%x: memref<64x128xf32>, %s: memref<64xf32>, %y: memref<64x128xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %z = arith.constant 0.0 : f32
    zero.row_group rows(1) {
      linalg.fill ins(%z : f32) outs(%s : memref<64xf32>)
      linalg.generic {indexing_maps = [#e, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x128xf32>) outs(%s : memref<64xf32>) {
      ^bb0(%a: f32, %acc: f32):
        %0 = arith.addf %a, %acc : f32
        linalg.yield %0 : f32
      }
      linalg.generic {indexing_maps = [#e, #row, #e], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<64x128xf32>, memref<64xf32>) outs(%y : memref<64x128xf32>) attrs = {zero.written_region = array<i64: 32, 0, 64, 64, 0, 128>} {
      ^bb0(%a: f32, %sum: f32, %o: f32):
        %0 = arith.divf %a, %sum : f32
        linalg.yield %0 : f32
      }
    }
    return
  }
}

// -----

// A causal mask's select: a GPU thread loads its score only where the mask
// is true (zero-gpu-guard-loads), 36 of the 8 x 8 mask's 64 elements,
// broadcast over 16 rows of blocks: 1024 threads, 2 ns of arithmetic each
// (mulf, select) against the mask's 64 B, 36/64 of the scores' 4096 B
// (2304 B) and the 4096 B written: 6.464 us. The CPU's model reads every
// score: 8.256 us.
// CHECK: compute_ops = 1 : i64, compute_seconds = {{6\.464000e-06|6\.46[34][0-9]*e-06}} : f64
// OPS: compute_ops = 1 : i64, compute_seconds = {{8\.256000e-06|8\.25[56][0-9]*e-06}} : f64
#b3 = affine_map<(b, i, j) -> (b, i, j)>
#m3 = affine_map<(b, i, j) -> (i, j)>
module {
  memref.global "private" constant @causal : memref<8x8xi1> = dense<[
    [true, false, false, false, false, false, false, false],
    [true, true, false, false, false, false, false, false],
    [true, true, true, false, false, false, false, false],
    [true, true, true, true, false, false, false, false],
    [true, true, true, true, true, false, false, false],
    [true, true, true, true, true, true, false, false],
    [true, true, true, true, true, true, true, false],
    [true, true, true, true, true, true, true, true]]>
  func.func @step(%s: memref<16x8x8xf32>, %o: memref<16x8x8xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %mask = memref.get_global @causal : memref<8x8xi1>
    %ninf = arith.constant 0xFF800000 : f32
    %two = arith.constant 2.0 : f32
    linalg.generic {indexing_maps = [#m3, #b3, #b3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mask, %s : memref<8x8xi1>, memref<16x8x8xf32>) outs(%o : memref<16x8x8xf32>) {
    ^bb0(%m: i1, %x: f32, %y: f32):
      %t = arith.mulf %x, %two : f32
      %v = arith.select %m, %t, %ninf : f32
      linalg.yield %v : f32
    }
    return
  }
}

// -----

// The mask's density holds for the launch when the op reads the whole mask
// alike: a unit dimension indexed by a zero does (6.464 us as above); a
// mask row picked by a constant (row 0: one true element in 8) does not,
// and the scores are read whole (8.256 us). 14.72 us.
// CHECK: compute_ops = 2 : i64, compute_seconds = {{1\.472000e-05|1\.47[12][0-9]*e-05|1\.47[12][0-9]*E-5}} : f64
#b3 = affine_map<(b, i, j) -> (b, i, j)>
#u3 = affine_map<(b, i, j) -> (0, i, j)>
#r3 = affine_map<(b, i, j) -> (0, j)>
module {
  memref.global "private" constant @causal : memref<1x8x8xi1> = dense<[[
    [true, false, false, false, false, false, false, false],
    [true, true, false, false, false, false, false, false],
    [true, true, true, false, false, false, false, false],
    [true, true, true, true, false, false, false, false],
    [true, true, true, true, true, false, false, false],
    [true, true, true, true, true, true, false, false],
    [true, true, true, true, true, true, true, false],
    [true, true, true, true, true, true, true, true]]]>
  func.func @step(%s: memref<16x8x8xf32>, %o: memref<16x8x8xf32>, %p: memref<16x8x8xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %mask = memref.get_global @causal : memref<1x8x8xi1>
    %rows = memref.collapse_shape %mask [[0, 1], [2]] : memref<1x8x8xi1> into memref<8x8xi1>
    %ninf = arith.constant 0xFF800000 : f32
    %two = arith.constant 2.0 : f32
    linalg.generic {indexing_maps = [#u3, #b3, #b3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%mask, %s : memref<1x8x8xi1>, memref<16x8x8xf32>) outs(%o : memref<16x8x8xf32>) {
    ^bb0(%m: i1, %x: f32, %y: f32):
      %t = arith.mulf %x, %two : f32
      %v = arith.select %m, %t, %ninf : f32
      linalg.yield %v : f32
    }
    linalg.generic {indexing_maps = [#r3, #b3, #b3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%rows, %s : memref<8x8xi1>, memref<16x8x8xf32>) outs(%p : memref<16x8x8xf32>) {
    ^bb0(%m: i1, %x: f32, %y: f32):
      %t = arith.mulf %x, %two : f32
      %v = arith.select %m, %t, %ninf : f32
      linalg.yield %v : f32
    }
    return
  }
}
