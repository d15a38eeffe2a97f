// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=64}))' | FileCheck %s --check-prefix=ALL
// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=48}))' | FileCheck %s --check-prefix=B48
// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=32}))' | FileCheck %s --check-prefix=B32
// RUN: not zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=1}))' 2>&1 | FileCheck %s --check-prefix=NONE-FITS
// RUN: not zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget}))' 2>&1 | FileCheck %s --check-prefix=NO-BUDGET

// Four values of 16 bytes the backward reads, in reverse. Keeping all of
// them peaks at 64 bytes. At 48 the cheapest cut recomputes %a0 (one add)
// right before its reader; at 32, the least peak, %b0 and %a0 too (the
// add and the tanh), through one barrier, as a copy that %g3 and %g4 read.

// ALL-LABEL: func.func @chain
// ALL-SAME: activation_bytes_after = 64 : i64, activation_bytes_before = 64 : i64
// ALL-SAME: keep_all_peak = 64 : i64, least_peak = 32 : i64, method = "keep-all"
// ALL-NOT: zero.recompute

// B48-LABEL: func.func @chain
// B48-SAME: activation_bytes_after = 48 : i64
// B48-SAME: saved = ["/l0/tanh", "/l1/add", "/l1/tanh"]
// B48-SAME: cost = 4.000000e+00 : f64, cost_unit = "flops"
// B48-SAME: method = "milp"
// B48-SAME: optimal = true, peak = 48 : i64
// B48: %[[B0:.*]] = tosa.tanh
// B48: %[[G3:.*]] = tosa.sub %{{.*}}, %[[B0]] {zero.backward}
// B48-NEXT: %[[IN:.*]]:2 = zero.remat_barrier %arg0, %arg1 {zero.backward}
// B48-NEXT: %[[RA0:.*]] = tosa.add %[[IN]]#0, %[[IN]]#1 {zero.backward, zero.recompute}
// B48-NEXT: tosa.sub %[[G3]], %[[RA0]] {zero.backward}

// B32-LABEL: func.func @chain
// B32-SAME: activation_bytes_after = 32 : i64
// B32-SAME: saved = ["/l1/add", "/l1/tanh"]
// B32-SAME: cost = 8.000000e+00 : f64
// B32-SAME: peak = 32 : i64
// B32: %[[G1:.*]] = tosa.sub %arg2, %{{.*}} {zero.backward}
// B32-NEXT: %[[G2:.*]] = tosa.sub %[[G1]], %{{.*}} {zero.backward}
// B32-NEXT: %[[IN:.*]]:2 = zero.remat_barrier %arg0, %arg1 {zero.backward}
// B32-NEXT: %[[RA0:.*]] = tosa.add %[[IN]]#0, %[[IN]]#1 {zero.backward, zero.recompute}
// B32-NEXT: %[[RB0:.*]] = tosa.tanh %[[RA0]] {zero.backward, zero.recompute}
// B32-NEXT: %[[G3:.*]] = tosa.sub %[[G2]], %[[RB0]] {zero.backward}
// B32-NEXT: tosa.sub %[[G3]], %[[RA0]] {zero.backward}

// NONE-FITS: error: zero-rematerialize: no choice of recomputed activations fits 1 bytes; the least peak of any choice is 32
// NO-BUDGET: error: zero-rematerialize: policy budget needs budget=BYTES
func.func @chain(%x: tensor<4xf32>, %w: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
  %a0 = tosa.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("/l0/add")
  %b0 = tosa.tanh %a0 : (tensor<4xf32>) -> tensor<4xf32> loc("/l0/tanh")
  %a1 = tosa.add %b0, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("/l1/add")
  %b1 = tosa.tanh %a1 : (tensor<4xf32>) -> tensor<4xf32> loc("/l1/tanh")
  %g1 = tosa.sub %dy, %b1 {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g2 = tosa.sub %g1, %a1 {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g3 = tosa.sub %g2, %b0 {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g4 = tosa.sub %g3, %a0 {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g4 : tensor<4xf32>
}
