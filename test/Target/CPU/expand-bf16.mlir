// RUN: zero-opt %s -split-input-file --zero-cpu-expand-bf16 | FileCheck %s

// bf16 conversions become integer arithmetic: extf a shift of the bits into
// the top half, truncf a round to nearest even on them; f16 and f64
// conversions stay (LLVM has them on every x86-64, through libgcc).
// CHECK-LABEL: func.func @convert
// CHECK-NOT: arith.extf {{.*}} : bf16
// CHECK: arith.shli
// CHECK: arith.bitcast {{.*}} : i32 to f32
// CHECK-NOT: arith.truncf {{.*}} to bf16
// CHECK: arith.bitcast {{.*}} : f32 to i32
// CHECK: arith.trunci {{.*}} : i32 to i16
// CHECK: arith.bitcast {{.*}} : i16 to bf16
// CHECK: arith.extf {{.*}} : f16 to f32
// CHECK: arith.truncf {{.*}} : f64 to f32
func.func @convert(%a: bf16, %b: f32, %c: f16, %d: f64) -> (f32, bf16, f32, f32) {
  %0 = arith.extf %a : bf16 to f32
  %1 = arith.truncf %b : f32 to bf16
  %2 = arith.extf %c : f16 to f32
  %3 = arith.truncf %d : f64 to f32
  return %0, %1, %2, %3 : f32, bf16, f32, f32
}

// -----

// Vectors too.
// CHECK-LABEL: func.func @vector
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast {{.*}} : vector<8xi16> to vector<8xbf16>
func.func @vector(%v: vector<8xf32>) -> vector<8xbf16> {
  %0 = arith.truncf %v : vector<8xf32> to vector<8xbf16>
  return %0 : vector<8xbf16>
}
