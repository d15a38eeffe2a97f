// RUN: zero-opt %s --pass-pipeline="builtin.module(func.func(zero-gpu-pad-gemm-dims{min-extent=0}))" -verify-diagnostics

// expected-error @below {{min-extent is 0; give a dimension length of at least 1}}
func.func @f() {
  return
}
