// RUN: zero-opt %s --zero-gpu-outline-kernels -split-input-file -verify-diagnostics

// A forall that zero-gpu-map-kernels did not make is refused.
func.func private @unmapped(%a: memref<8xf32>) attributes {zero.kernel = "linalg.generic"} {
  // expected-error @below {{is not a block forall holding normalized thread foralls (run zero-gpu-map-kernels)}}
  scf.forall (%i) in (8) {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %a[%i] : memref<8xf32>
  }
  return
}

// -----

// A loop around a block's threads is not a launch: refused.
func.func private @loop(%a: memref<8xf32>) attributes {zero.kernel = "linalg.generic"} {
  // expected-error @below {{is not a block forall holding normalized thread foralls (run zero-gpu-map-kernels)}}
  scf.forall (%b) in (1) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %c2 step %c1 {
      scf.forall (%t) in (8) {
        %x = memref.load %a[%t] : memref<8xf32>
        memref.store %x, %a[%t] : memref<8xf32>
      } {mapping = [#gpu.thread<x>]}
    }
  } {mapping = [#gpu.block<x>]}
  return
}
