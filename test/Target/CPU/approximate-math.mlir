// RUN: zero-opt %s --zero-cpu-approximate-math | FileCheck %s

// f32 exp, tanh and erf become arithmetic (their error against libm is
// measured by test/e2e/math_accuracy.py); log and f64 keep libm.
// CHECK-LABEL: func.func @f32_and_f64
// CHECK-NOT: math.exp %arg0
// CHECK-NOT: math.tanh %arg0
// CHECK-NOT: math.erf %arg0
// CHECK: math.log %arg0 : f32
// CHECK: math.exp %arg1 : f64
// CHECK: math.tanh %arg1 : f64
func.func @f32_and_f64(%x: f32, %y: f64) -> (f32, f32, f32, f32, f64, f64) {
  %a = math.exp %x : f32
  %b = math.log %x : f32
  %c = math.tanh %x : f32
  %d = math.erf %x : f32
  %e = math.exp %y : f64
  %f = math.tanh %y : f64
  return %a, %b, %c, %d, %e, %f : f32, f32, f32, f32, f64, f64
}
