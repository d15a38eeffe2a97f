// RUN: zero-opt %s --split-input-file --verify-diagnostics

// A launch group holds linalg ops on buffers only: a load would run in
// every thread of the launch.
func.func @load(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  zero.launch_group {
    // expected-error @+1 {{in a launch group: expected a linalg op on buffers, a copy or a bucket copy}}
    %x = memref.load %a[%c0] : memref<4xf32>
  }
  return
}

// -----

func.func @tensors(%a: tensor<4xf32>) {
  %z = arith.constant 0.0 : f32
  zero.launch_group {
    // expected-error @+1 {{in a launch group: expected a linalg op on buffers, a copy or a bucket copy}}
    %f = linalg.fill ins(%z : f32) outs(%a : tensor<4xf32>) -> tensor<4xf32>
  }
  return
}
