// RUN: zero-opt %s -split-input-file --arith-emulate-unsupported-floats="source-types=bf16,f16 target-type=f32" --zero-keep-16bit-rounding --canonicalize | FileCheck %s
// RUN: zero-opt %s -split-input-file --arith-emulate-unsupported-floats="source-types=bf16,f16 target-type=f32" --canonicalize | FileCheck %s --check-prefix=FOLDED

// Two emulated bf16 ops in one body: each rounds to bf16, as two ops with
// the value stored between them would. Without the pass, the fold of
// extf(truncf(x)) leaves one rounding.
// CHECK-LABEL: func.func @bf16_chain
// CHECK: %[[M:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[R]] : bf16 to f32
// CHECK-NEXT: arith.addf %[[W]]
// CHECK-NOT: contract
// FOLDED-LABEL: func.func @bf16_chain
// FOLDED: %[[M:.*]] = arith.mulf
// FOLDED-NEXT: arith.addf %[[M]]
func.func @bf16_chain(%x: bf16, %y: bf16) -> bf16 {
  %t = arith.mulf %x, %y : bf16
  %u = arith.addf %t, %y : bf16
  return %u : bf16
}

// -----

// f16 too.
// CHECK-LABEL: func.func @f16_chain
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NEXT: arith.extf
// CHECK-NEXT: arith.subf
// FOLDED-LABEL: func.func @f16_chain
// FOLDED: %[[M:.*]] = arith.mulf
// FOLDED-NEXT: arith.subf %[[M]]
func.func @f16_chain(%x: f16, %y: f16) -> f16 {
  %t = arith.mulf %x, %y : f16
  %u = arith.subf %t, %x : f16
  return %u : f16
}

// -----

// Only `contract` goes: the other flags stay, and conversions between
// wider types keep theirs.
// CHECK-LABEL: func.func @flags
// CHECK: arith.extf %{{.*}} fastmath<nnan> : bf16 to f32
// CHECK: arith.truncf %{{.*}} fastmath<contract> : f64 to f32
func.func @flags(%x: bf16, %d: f64) -> (f32, f32) {
  %w = arith.extf %x fastmath<nnan,contract> : bf16 to f32
  %n = arith.truncf %d fastmath<contract> : f64 to f32
  return %w, %n : f32, f32
}
