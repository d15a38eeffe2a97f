// RUN: not zero-opt %s --zero-gpu-row-groups=min-threads=-1 2>&1 | FileCheck %s

// CHECK: error: zero-gpu-row-groups: min-threads -1 must be at least 0
func.func @f() {
  return
}
