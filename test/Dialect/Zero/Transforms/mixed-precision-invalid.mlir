// RUN: zero-opt %s --verify-diagnostics --zero-mixed-precision=precision=fp8

// An unknown precision is one error.
// expected-error @+1 {{unknown precision 'fp8' (expected bf16 or fp16)}}
func.func @any(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
