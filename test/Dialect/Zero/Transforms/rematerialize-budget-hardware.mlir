// RUN: zero-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=128}))' | FileCheck %s --check-prefix=FLOPS
// RUN: zero-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=128 hardware=%S/../../../Target/CPU/Inputs/slow-math.json}))' | FileCheck %s --check-prefix=SLOWMATH

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

// -----

// A GEMM costs what it costs on the target: the same bf16 matmul runs at
// the f32 peak on a CPU (its runtime widens the operands) and on tensor
// cores on a GPU; f32 ones (and the widened ones) at matmul-precision.
// On a machine whose fp32 matmuls run at 1e3 FLOP/s and bf16 and tf32
// ones at 1e12, the tanh (16 evaluations at 1e9) is recomputed on a CPU,
// the matmul on a GPU or with matmul-precision=tf32.
// RUN: zero-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=128 hardware=%S/../../../Target/CPU/Inputs/tensor-cores.json}))' | FileCheck %s --check-prefix=CPU16
// RUN: zero-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=128 hardware=%S/../../../Target/CPU/Inputs/tensor-cores.json gpu=true}))' | FileCheck %s --check-prefix=GPU16
// RUN: zero-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=128 hardware=%S/../../../Target/CPU/Inputs/tensor-cores.json matmul-precision=tf32}))' | FileCheck %s --check-prefix=TF32
// RUN: not zero-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=budget budget=128 hardware=%S/../../../Target/CPU/Inputs/tensor-cores.json matmul-precision=fp8}))' 2>&1 | FileCheck %s --check-prefix=NOPEAK

// CPU16-LABEL: func.func @bf16
// CPU16-SAME: saved = ["/matmul", "/neg"]
// CPU16: tosa.tanh {{.*}}zero.recompute
// GPU16-LABEL: func.func @bf16
// GPU16-SAME: saved = ["/tanh", "/neg"]
// GPU16: tosa.matmul {{.*}}zero.recompute
// TF32-LABEL: func.func @machine
// TF32-SAME: saved = ["/tanh", "/neg"]
// TF32-LABEL: func.func @bf16
// TF32-SAME: saved = ["/tanh", "/neg"]
// NOPEAK: error: zero-rematerialize: tensor cores gives no peak_flops for fp8 (matmul-precision)
func.func @bf16(%x: tensor<4x64xbf16> {zero.role = #zero.role<input>}, %w: tensor<64x4xbf16> {zero.role = #zero.role<parameter>}, %y: tensor<1x4x4xf32>, %z: tensor<1x4x4xf32>, %dy: tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  %xs = tosa.const_shape {values = dense<[1, 4, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %ws = tosa.const_shape {values = dense<[1, 64, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %zp16 = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %x3 = tosa.reshape %x, %xs : (tensor<4x64xbf16>, !tosa.shape<3>) -> tensor<1x4x64xbf16>
  %w3 = tosa.reshape %w, %ws : (tensor<64x4xbf16>, !tosa.shape<3>) -> tensor<1x64x4xbf16>
  %m1 = tosa.matmul %x3, %w3, %zp16, %zp16 : (tensor<1x4x64xbf16>, tensor<1x64x4xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<1x4x4xf32> loc("/matmul")
  %m2 = tosa.tanh %y : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32> loc("/tanh")
  %q = tosa.negate %z, %zp, %zp : (tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32> loc("/neg")
  %g1 = tosa.sub %dy, %q {zero.backward} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %g2 = tosa.sub %g1, %m2 {zero.backward} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %g3 = tosa.sub %g2, %m1 {zero.backward} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  return %g3 : tensor<1x4x4xf32>
}
