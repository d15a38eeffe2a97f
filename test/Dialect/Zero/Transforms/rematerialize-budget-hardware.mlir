// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=128}))' | FileCheck %s --check-prefix=FLOPS
// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=128 hardware=%S/../../../Target/CPU/Inputs/slow-math.json}))' | FileCheck %s --check-prefix=SLOWMATH

// The recompute's cost depends on the machine. Three values of 64 bytes
// the backward reads in reverse; at 128 bytes one of /matmul (2,048 FLOPs)
// and /tanh (16) is recomputed. Counted in FLOPs the tanh is cheaper; on a
// machine whose tanh runs at 1e3 per second and matmuls at 1e12 FLOP/s,
// the matmul is.

// FLOPS-LABEL: func.func @machine
// FLOPS-SAME: saved = ["/matmul", "/neg"]
// FLOPS-SAME: cost = 1.600000e+01 : f64, cost_unit = "flops"
// FLOPS: tosa.tanh {{.*}}zero.recompute

// SLOWMATH-LABEL: func.func @machine
// SLOWMATH-SAME: saved = ["/tanh", "/neg"]
// SLOWMATH-SAME: cost_unit = "seconds"
// SLOWMATH: tosa.matmul {{.*}}zero.recompute
func.func @machine(%x: tensor<4x64xf32> {zero.role = #zero.role<input>}, %w: tensor<64x4xf32> {zero.role = #zero.role<parameter>}, %y: tensor<1x4x4xf32>, %z: tensor<1x4x4xf32>, %dy: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %xs = tosa.const_shape {values = dense<[1, 4, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %ws = tosa.const_shape {values = dense<[1, 64, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %x3 = tosa.reshape %x, %xs : (tensor<4x64xf32>, !tosa.shape<3>) -> tensor<1x4x64xf32>
  %w3 = tosa.reshape %w, %ws : (tensor<64x4xf32>, !tosa.shape<3>) -> tensor<1x64x4xf32>
  %m1 = tosa.matmul %x3, %w3, %zp, %zp : (tensor<1x4x64xf32>, tensor<1x64x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32> loc("/matmul")
  %m2 = tosa.tanh %y : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32> loc("/tanh")
  %q = tosa.negate %z, %zp, %zp : (tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32> loc("/neg")
  %g1 = tosa.sub %dy, %q {zero.backward} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %g2 = tosa.sub %g1, %m2 {zero.backward} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %g3 = tosa.sub %g2, %m1 {zero.backward} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  return %g3 : tensor<1x4x4xf32>
}
