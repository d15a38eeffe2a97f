// RUN: zero-opt %s --zero-apply-noalias --split-input-file --verify-diagnostics

// expected-error@+1 {{zero.noalias_params names parameter 1, which is not a pointer}}
llvm.func @kernel(%p: !llvm.ptr, %n: i64) attributes {zero.noalias_params = array<i64: 1>} {
  llvm.return
}

// -----

// expected-error@+1 {{zero.noalias_params names parameter 5, which is not a pointer}}
llvm.func @kernel(%p: !llvm.ptr) attributes {zero.noalias_params = array<i64: 5>} {
  llvm.return
}
