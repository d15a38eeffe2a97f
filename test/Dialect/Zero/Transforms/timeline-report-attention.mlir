// RUN: zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu-attention.json gpu=true" | FileCheck %s
// RUN: not zero-opt %s -split-input-file -zero-timeline-report="hardware=%S/../../../Target/CPU/Inputs/unit-gpu-attention-bad.json gpu=true" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: device.attention_efficiency: above 1; expected the share of the 16-bit peak (0, 1]

// The fused attention kernels on the unit GPU: bf16 products at 1e10 x
// attention_efficiency 0.5 = 5 GFLOP/s, exp at 1e8/s, 1 GB/s.
// Causal over 2 pairs of 128 queries and keys of depth 64: the key blocks
// up to each of the 2 query blocks' diagonal, 3 of 4, so 24576 scores.
// Forward: 2 products, 2 x 2 x 24576 x 64 = 6291456 FLOP (1.2582912 ms)
// and 24576 exponentials (0.24576 ms): 1.5040512 ms against q, k, v, out
// (4 x 32768 B) and lse (1024 B): 132096 B, 0.132096 ms. Compute bound.
// CHECK-LABEL: module attributes
// CHECK-SAME: bound_seconds = {compute = {{1\.504051e-03|0\.0015040[0-9]*}} : f64}
// CHECK-SAME: compute_ops = 1 : i64
// CHECK-SAME: flops = {{6\.291456e\+06|0x4158000000000000}} : f64
// CHECK-SAME: matmul_flops = {bf16 = {{6\.291456e\+06|0x4158000000000000}} : f64}
// CHECK-SAME: step_seconds = {{1\.504051e-03|0\.0015040[0-9]*}} : f64
module {
  func.func @step(%q: memref<2x128x64xbf16>, %k: memref<2x128x64xbf16>, %v: memref<2x128x64xbf16>, %o: memref<2x128x64xbf16>, %l: memref<2x128xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    zero.attention %q, %k, %v into %o, %l scale 0.125 causal : memref<2x128x64xbf16>, memref<2x128x64xbf16>, memref<2x128x64xbf16>, memref<2x128x64xbf16>, memref<2x128xf32>
    return
  }
}

// -----

// The gradient, not causal, 64 queries and 128 keys: 2 x 64 x 128 =
// 16384 scores; 7 products (the probabilities and their gradients on the
// key side and on the query side): 7 x 2 x 16384 x 64 = 14680064 FLOP
// (2.9360128 ms) and 2 x 16384 exponentials (0.32768 ms): 3.2636928 ms.
// CHECK-LABEL: module attributes
// CHECK-SAME: flops = {{1\.468006e\+07|0x416C000000000000}} : f64
// CHECK-SAME: step_seconds = {{3\.263693e-03|0\.0032636[0-9]*}} : f64
module {
  func.func @step(%q: memref<2x64x64xbf16>, %k: memref<2x128x64xbf16>, %l: memref<2x64xf32>) attributes {zero.entry, zero.world_size = 1 : i64} {
    zero.attention_grad %q, %k, %k, %q, %l, %l into %q, %k, %k scale 0.125 : memref<2x64x64xbf16>, memref<2x128x64xbf16>, memref<2x128x64xbf16>, memref<2x64x64xbf16>, memref<2x64xf32>, memref<2x64xf32>, memref<2x64x64xbf16>, memref<2x128x64xbf16>, memref<2x128x64xbf16>
    return
  }
}

// -----

// The forward above with a dropout: a Philox draw of 142 integer ops per
// score computed, at the loop rate (the fp32 peak, 1e9/s): 24576 x 142 =
// 3489792 ops, 3.489792 ms more: 4.9938432 ms. The FLOPs are the
// products'.
// CHECK-LABEL: module attributes
// CHECK-SAME: flops = {{6\.291456e\+06|0x4158000000000000}} : f64
// CHECK-SAME: step_seconds = {{4\.993843e-03|0\.0049938[0-9]*}} : f64
module {
  func.func @step(%q: memref<2x128x64xbf16>, %k: memref<2x128x64xbf16>, %v: memref<2x128x64xbf16>, %o: memref<2x128x64xbf16>, %l: memref<2x128xf32>, %step: i64, %mb: i64) attributes {zero.entry, zero.world_size = 1 : i64} {
    zero.attention %q, %k, %v into %o, %l scale 0.125 causal dropout <seed = 0, stream = 0, keep = 15099494> scaled 1.109375 rng(%step, %mb) : memref<2x128x64xbf16>, memref<2x128x64xbf16>, memref<2x128x64xbf16>, memref<2x128x64xbf16>, memref<2x128xf32>
    return
  }
}

// -----

// The gradient above with a dropout: a draw per score on each side,
// 2 x 16384 x 142 ops, 4.653056 ms more: 7.9167488 ms.
// CHECK-LABEL: module attributes
// CHECK-SAME: step_seconds = {{7\.916749e-03|0\.0079167[0-9]*}} : f64
module {
  func.func @step(%q: memref<2x64x64xbf16>, %k: memref<2x128x64xbf16>, %l: memref<2x64xf32>, %step: i64, %mb: i64) attributes {zero.entry, zero.world_size = 1 : i64} {
    zero.attention_grad %q, %k, %k, %q, %l, %l into %q, %k, %k scale 0.125 dropout <seed = 0, stream = 0, keep = 15099494> scaled 1.109375 rng(%step, %mb) : memref<2x64x64xbf16>, memref<2x128x64xbf16>, memref<2x128x64xbf16>, memref<2x64x64xbf16>, memref<2x64xf32>, memref<2x64xf32>, memref<2x64x64xbf16>, memref<2x128x64xbf16>, memref<2x128x64xbf16>
    return
  }
}
