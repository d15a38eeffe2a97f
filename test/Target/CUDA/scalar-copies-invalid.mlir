// RUN: zero-opt %s --zero-gpu-scalar-copies -split-input-file -verify-diagnostics

func.func private @use(f32)
func.func @reads(%arg0: memref<4xf32>) attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  // expected-error @below {{the step reads an element of device memory on the host}}
  %v = memref.load %arg0[%c0] : memref<4xf32>
  func.call @use(%v) : (f32) -> ()
  return
}

// -----

func.func @writes(%arg0: memref<4xf32>, %arg1: memref<f64> {zero.role = #zero.role<hyperparameter>}) attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  %v = memref.load %arg1[] : memref<f64>
  %f = arith.truncf %v : f64 to f32
  // expected-error @below {{the step writes a value computed on the host into device memory}}
  memref.store %f, %arg0[%c0] : memref<4xf32>
  return
}

// -----

func.func private @k(memref<4xf32>)
func.func @between(%arg0: memref<4xf32>, %arg1: memref<4xf32>) attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  %v = memref.load %arg0[%c0] : memref<4xf32>
  func.call @k(%arg0) : (memref<4xf32>) -> ()
  // expected-error @below {{'func.call' comes between its load and its store}}
  memref.store %v, %arg1[%c0] : memref<4xf32>
  return
}

// -----

func.func private @use(f32)
func.func @escapes(%arg0: memref<4xf32>) attributes {zero.entry} {
  %f = memref.alloc() : memref<f32>
  // expected-error @below {{uses it outside compute ops}}
  %s = memref.load %f[] : memref<f32>
  %a = math.absf %s : f32
  func.call @use(%a) : (f32) -> ()
  memref.dealloc %f : memref<f32>
  return
}

// -----

// A host-resident buffer a compute op writes (or reads other than as a
// 0-d input) cannot be passed by value.
#id = affine_map<(d0) -> (d0)>
func.func @writes_host(%x: memref<4xf32>, %h: memref<4xf32> {zero.role = #zero.role<hyperparameter>}) attributes {zero.entry} {
  // expected-error @below {{a compute op uses the host-resident buffer 'memref<4xf32>' as operand 1, which a GPU kernel cannot access}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<4xf32>) outs(%h : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
