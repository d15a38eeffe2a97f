// RUN: zero-opt %s --pass-pipeline="builtin.module(func.func(zero-gpu-skip-masked-terms{max-fill=-50}))" -verify-diagnostics

// expected-error @below {{max-fill is -50; give -104 or less (exp of a larger value is not zero in f32)}}
func.func @f() {
  return
}
