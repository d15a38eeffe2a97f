// RUN: not zero-opt %s --zero-gpu-batch-loads=batch=0 2>&1 | FileCheck %s

// CHECK: error: zero-gpu-batch-loads: batch 0 must be at least 1
func.func @f() {
  return
}
