// RUN: zero-opt %s --zero-cpu-lane-reductions=lanes=0 -verify-diagnostics

// expected-error @below {{lanes is 0; give at least 1 accumulator per output (the default is 16)}}
func.func @row_sum(%a: memref<3x40xf32>, %c: memref<3xf32>) {
  linalg.reduce ins(%a : memref<3x40xf32>) outs(%c : memref<3xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}
