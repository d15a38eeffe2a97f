// RUN: zero-opt %s --zero-gpu-outline-kernels -split-input-file -verify-diagnostics

// A forall that zero-gpu-map-kernels did not make is refused.
func.func private @unmapped(%a: memref<8xf32>) attributes {zero.kernel = "linalg.generic"} {
  // expected-error @below {{is not a block forall holding one normalized thread forall (run zero-gpu-map-kernels)}}
  scf.forall (%i) in (8) {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %a[%i] : memref<8xf32>
  }
  return
}

// -----

// Two thread foralls in one block forall are two launches' worth: refused.
func.func private @two(%a: memref<8xf32>) attributes {zero.kernel = "linalg.generic"} {
  // expected-error @below {{is not a block forall holding one normalized thread forall (run zero-gpu-map-kernels)}}
  scf.forall (%b) in (1) {
    scf.forall (%t) in (8) {
      %x = memref.load %a[%t] : memref<8xf32>
      memref.store %x, %a[%t] : memref<8xf32>
    } {mapping = [#gpu.thread<x>]}
    scf.forall (%t) in (8) {
      %x = memref.load %a[%t] : memref<8xf32>
      memref.store %x, %a[%t] : memref<8xf32>
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}
