// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=96}))' | FileCheck %s --check-prefix=ALL
// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=64}))' | FileCheck %s --check-prefix=B64
// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=64}))' --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// What the activations are: one buffer per op, its views (%r2) part of
// it; the weight's transpose and its view, and the view of the input, are
// no activations (stage 3 remakes weight views from a fresh gather, and
// the input lives the whole step). Three buffers of 32 bytes: /l0/relu
// (read through itself and its view), /l1/tanh and /l2/tanh. At 64 bytes
// the relu is recomputed with its view, from the matmul, which the
// backward does not read but the copy needs; the copy remakes the
// weight's transpose from the weight rather than holding the forward's,
// which would keep a materialized transpose alive into the backward (the
// forward's matmul then reads the weight as stored, with every policy).

// ALL-LABEL: func.func @views
// ALL-SAME: activation_bytes_after = 96 : i64, activation_bytes_before = 96 : i64
// ALL-SAME: saved = ["/l0/relu", "/l1/tanh", "/l2/tanh"]
// ALL-SAME: method = "keep-all"
// ALL-SAME: nodes = [{bytes = 0 : i64, {{.*}} name = "/l0/matmul"
// ALL-SAME: {bytes = 32 : i64, {{.*}} name = "/l0/relu"
// ALL-SAME: {bytes = 32 : i64, {{.*}} name = "/l1/tanh"
// ALL-SAME: {bytes = 32 : i64, {{.*}} name = "/l2/tanh", producers = [2]}]
// ALL-NOT: zero.recompute

// B64-LABEL: func.func @views
// B64-SAME: activation_bytes_after = 64 : i64, activation_bytes_before = 96 : i64
// B64-SAME: saved = ["/l1/tanh", "/l2/tanh"]
// B64-SAME: method = "milp"
// B64: %[[X3:.*]] = tosa.reshape %arg0
// B64: %[[G1:.*]] = tosa.sub %arg2, %{{.*}} {zero.backward}
// B64-NEXT: %[[G2:.*]] = tosa.sub %[[G1]], %{{.*}} {zero.backward}
// B64-NEXT: %[[IN:.*]]:2 = zero.remat_barrier %[[X3]], %arg1 {zero.backward}
// B64-NEXT: %[[T:.*]] = tosa.transpose %[[IN]]#1 {{.*}}zero.recompute
// B64-NEXT: %[[WT:.*]] = tosa.reshape %[[T]], {{.*}}zero.recompute
// B64-NEXT: %[[M:.*]] = tosa.matmul %[[IN]]#0, %[[WT]], {{.*}} {zero.backward, zero.recompute}
// B64-NEXT: %[[R:.*]] = tosa.clamp %[[M]] {{.*}}zero.recompute
// B64-NEXT: %[[R2:.*]] = tosa.reshape %[[R]], %{{.*}} {zero.backward, zero.recompute}
// B64-NEXT: %[[G3:.*]] = tosa.sub %[[G2]], %[[R2]] {zero.backward}
// B64-NEXT: tosa.sub %[[G3]], %[[R]] {zero.backward}
// The copies' locations carry the recomputation's mark, which lowering
// keeps (the timeline counts the recompute by it).
// LOC: tosa.clamp {{.*}}zero.recompute = unit{{.*}} loc(#[[L:.*]])
// LOC: #[[L]] = loc(fused<"zero.recompute">[
func.func @views(%x: tensor<2x4xf32> {zero.role = #zero.role<input>}, %w: tensor<4x4xf32> {zero.role = #zero.role<parameter>}, %dy: tensor<1x2x4xf32>) -> (tensor<1x4x4xf32>, tensor<1x2x4xf32>) {
  %s3 = tosa.const_shape {values = dense<[1, 2, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %w3s = tosa.const_shape {values = dense<[1, 4, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %wt = tosa.transpose %w {perms = array<i32: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32> loc("/l0/transpose")
  %wt3 = tosa.reshape %wt, %w3s : (tensor<4x4xf32>, !tosa.shape<3>) -> tensor<1x4x4xf32> loc("/l0/wview")
  %x3 = tosa.reshape %x, %s3 : (tensor<2x4xf32>, !tosa.shape<3>) -> tensor<1x2x4xf32> loc("/l0/xview")
  %m = tosa.matmul %x3, %wt3, %zp, %zp : (tensor<1x2x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32> loc("/l0/matmul")
  %r = tosa.clamp %m {max_val = 0x7F800000 : f32, min_val = 0.000000e+00 : f32} : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("/l0/relu")
  %r2 = tosa.reshape %r, %s3 : (tensor<1x2x4xf32>, !tosa.shape<3>) -> tensor<1x2x4xf32> loc("/l0/rview")
  %t = tosa.tanh %r2 : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("/l1/tanh")
  %u = tosa.tanh %t : (tensor<1x2x4xf32>) -> tensor<1x2x4xf32> loc("/l2/tanh")
  %g1 = tosa.sub %dy, %u {zero.backward} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %g2 = tosa.sub %g1, %t {zero.backward} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %g3 = tosa.sub %g2, %r2 {zero.backward} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %g4 = tosa.sub %g3, %r {zero.backward} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %g5 = tosa.matmul %g4, %wt3, %zp, %zp {zero.backward} : (tensor<1x2x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %g6 = tosa.sub %g5, %x3 {zero.backward} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  return %wt3, %g6 : tensor<1x4x4xf32>, tensor<1x2x4xf32>
}
