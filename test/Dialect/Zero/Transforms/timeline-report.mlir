// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-machine.json" | FileCheck %s
// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-machine.json precision=tf32" | FileCheck %s --check-prefix=TF32
// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-machine.json overlap-comm=false" | FileCheck %s --check-prefix=SYNC
// RUN: not zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/bad-machine.json" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not zero-opt %s -split-input-file -zero-timeline-report 2>&1 | FileCheck %s --check-prefix=NOFILE

// The unit machine: 1 GFLOP/s, 1 GB/s, no op overhead; a collective at 2
// ranks costs 1 us + bytes sent / 1 GB/s.
//
// all_gather of 500 floats per rank: 4000 B in all, this rank sends 2000 B:
//   1 us + 2 us = 3 us, on the communication stream from t = 0.
// matmul 10x10x10: 2000 FLOP (2 us) against 1200 B (1.2 us): 2 us, t = 0..2.
// wait: the gather ends at 3 us, so 1 us is exposed.
// generic, one addf over 1024 floats: 1024 FLOP (1.024 us) against
//   8192 B read and written (8.192 us): 8.192 us, t = 3..11.192.
// Without overlap: 3 + 2 + 8.192 = 13.192 us. Lower bound: max(10.192, 3).
// At tf32 (2 GFLOP/s) the matmul takes max(1, 1.2) = 1.2 us; the wait
// exposes 1.8 us and the step is the same 11.192 us.
// What bounds each op: the matmul its arithmetic (2 us), the generic its
// memory (8.192 us); at tf32 both their memory (9.392 us).

// CHECK-LABEL: module attributes
// CHECK-SAME: zero.timeline = {step = {allocations = 0 : i64, bound_seconds = {compute = 2.000000e-06 : f64, memory = 8.192000e-06 : f64}, bytes_sent = 2000 : i64, collectives = 1 : i64, communication_seconds = 3.000000e-06 : f64, compute_ops = 2 : i64, compute_seconds = 1.019200e-05 : f64, exposed_seconds = {{1\.000000e-06|1\.0000000+[0-9]E-6}} : f64, flops = 3.024000e+03 : f64, lower_bound_seconds = 1.019200e-05 : f64, matmul_flops = {fp32 = 2.000000e+03 : f64}, mfu = 0.270192{{[0-9]*}} : f64, mfu_peak = "fp32", no_overlap_seconds = 1.319200e-05 : f64, recompute_flops = 0.000000e+00 : f64, recompute_ops = 0 : i64, recompute_seconds = 0.000000e+00 : f64, serial_launches = 0 : i64, step_seconds = 1.119200e-05 : f64}}
// TF32: bound_seconds = {memory = {{9\.392000e-06|9\.3920000+[0-9]E-6}} : f64}
// TF32-SAME: exposed_seconds = {{1\.800000e-06|1\.80000000+[0-9]E-6}} : f64
// TF32-SAME: step_seconds = 1.119200e-05 : f64
// Without overlap the gather completes where it starts: the step is the
// no-overlap time, all 3 us exposed.
// SYNC: exposed_seconds = {{3\.000000e-06|3\.0000000+[0-9]E-6}} : f64
// SYNC-SAME: step_seconds = 1.319200e-05 : f64
// BAD: error: {{.*}}bad-machine.json: device.memory_bandwidth: expected a number > 0
// MISSING: error: cannot read the hardware description {{.*}}missing.json
// NOFILE: error: zero-timeline-report needs hardware=FILE.json
module {
  func.func @step(%a: memref<1024xf32>, %b: memref<1024xf32>, %s: memref<500xf32>, %g: memref<1000xf32>, %m: memref<10x10xf32>, %n: memref<10x10xf32>, %o: memref<10x10xf32>) attributes {zero.entry, zero.world_size = 2 : i64} {
    %r = zero.all_gather_start %s into %g {world_size = 2 : i64} : memref<500xf32>, memref<1000xf32>
    linalg.matmul ins(%m, %n : memref<10x10xf32>, memref<10x10xf32>) outs(%o : memref<10x10xf32>)
    zero.wait %r
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>) {
    ^bb0(%x: f32, %y: f32):
      %s2 = arith.addf %x, %x : f32
      linalg.yield %s2 : f32
    }
    return
  }
}

// -----

// A loop runs its body once per iteration; exp costs 1/1e8 s per element
// (the machine's transcendental rate) and the mulf 1/1e9 s: 16 elements
// give 0.176 us of compute against 128 B (0.128 us) of memory traffic, so
// 3 iterations take 0.528 us, all bound by arithmetic.
// CHECK-LABEL: module attributes
// CHECK-SAME: zero.timeline = {loop = {allocations = 0 : i64, bound_seconds = {compute = {{5\.280000e-07|5\.2800000+[0-9]E-7}} : f64}, bytes_sent = 0 : i64, collectives = 0 : i64, communication_seconds = 0.000000e+00 : f64, compute_ops = 3 : i64, compute_seconds = {{5\.280000e-07|5\.2800000+[0-9]E-7}} : f64
module {
  func.func @loop(%a: memref<16xf32>, %b: memref<16xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %i = %c0 to %c3 step %c1 {
      linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a : memref<16xf32>) outs(%b : memref<16xf32>) {
      ^bb0(%x: f32, %y: f32):
        %e = math.exp %x : f32
        %m = arith.mulf %e, %x : f32
        linalg.yield %m : f32
      }
    }
    return
  }
}

// -----

// The recomputation is the compute of ops whose location carries its mark
// (zero-rematerialize's copies; the mark survives lowering in the
// location): here the first of two identical loops, 1024 FLOP against
// 8192 B, 8.192 us of the step's 16.384 us.
// CHECK-LABEL: module attributes
// CHECK-SAME: zero.timeline = {recompute = {
// CHECK-SAME: compute_ops = 2 : i64, compute_seconds = 1.638400e-05 : f64
// CHECK-SAME: recompute_flops = 1.024000e+03 : f64, recompute_ops = 1 : i64, recompute_seconds = 8.192000e-06 : f64
module {
  func.func @recompute(%a: memref<1024xf32>, %b: memref<1024xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %x : f32
      linalg.yield %s : f32
    } loc(fused<"zero.recompute">["/l0/add"])
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%b : memref<1024xf32>) outs(%a : memref<1024xf32>) {
    ^bb0(%x: f32, %y: f32):
      %s = arith.addf %x, %x : f32
      linalg.yield %s : f32
    } loc("/l0/add_grad")
    return
  }
}

// -----

// On a CPU a bf16 GEMM runs at the f32 peak (the runtime widens its
// operands), and an f64 GEMM at fp64, or at the f32 peak on a description
// without fp64, as the unit machine: both 2000 FLOP at fp32 (2 us), the
// f64 one against its 2400 B (2.4 us); the MFU against fp32.
// CHECK-LABEL: module attributes
// CHECK-SAME: compute_seconds = 4.400000e-06 : f64
// CHECK-SAME: matmul_flops = {fp32 = 4.000000e+03 : f64}
// CHECK-SAME: mfu_peak = "fp32"
// TF32: zero.timeline = {types = {
// TF32-SAME: matmul_flops = {tf32 = 4.000000e+03 : f64}
module {
  func.func @types(%a: memref<10x10xbf16>, %b: memref<10x10xbf16>, %c: memref<10x10xf32>, %x: memref<10x10xf64>, %y: memref<10x10xf64>, %z: memref<10x10xf64>) attributes {zero.entry} {
    linalg.matmul ins(%a, %b : memref<10x10xbf16>, memref<10x10xbf16>) outs(%c : memref<10x10xf32>)
    linalg.matmul ins(%x, %y : memref<10x10xf64>, memref<10x10xf64>) outs(%z : memref<10x10xf64>)
    return
  }
}

// -----

// A rounded matmul is a GEMM (at the f32 peak on a CPU) writing 2-byte
// C: 100 x 100 x 1 is 20000 FLOP (20 us) against 200 + 200 + 20000 B
// (20.4 us); with an f32 C it would move 40400 B.
// CHECK-LABEL: module attributes
// CHECK-SAME: zero.timeline = {rounded = {
// CHECK-SAME: compute_seconds = 2.040000e-05 : f64
// CHECK-SAME: flops = 2.000000e+04 : f64
// CHECK-SAME: matmul_flops = {fp32 = 2.000000e+04 : f64}
module {
  func.func @rounded(%a: memref<100x1xbf16>, %b: memref<1x100xbf16>, %c: memref<100x100xbf16>) attributes {zero.entry} {
    zero.rounded_matmul %a, %b into %c
      maps [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
            affine_map<(m, n, k) -> (m, n)>]
      : memref<100x1xbf16>, memref<1x100xbf16>, memref<100x100xbf16>
    return
  }
}
