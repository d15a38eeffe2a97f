// RUN: zero-opt %s --zero-gpu-arena -split-input-file -verify-diagnostics
// RUN: not zero-opt %s --zero-gpu-arena=alignment=48 -split-input-file 2>&1 | FileCheck %s --check-prefix=ALIGN

// ALIGN: alignment 48 is not a power of two

func.func @dynamic(%n: index) attributes {zero.entry} {
  // expected-error @below {{needs a static identity-layout buffer, not 'memref<?xf32>'}}
  %a = memref.alloc(%n) : memref<?xf32>
  memref.dealloc %a : memref<?xf32>
  return
}

// -----

func.func private @use(memref<4xf32>)
func.func @escapes(%n: index) attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @below {{is allocated inside a loop or conditional and not freed in it}}
    %a = memref.alloc() : memref<4xf32>
    func.call @use(%a) : (memref<4xf32>) -> ()
  }
  return
}

// -----

func.func @foreign(%arg0: memref<4xf32>) attributes {zero.entry} {
  // expected-error @below {{deallocates a buffer the step did not allocate}}
  memref.dealloc %arg0 : memref<4xf32>
  return
}
