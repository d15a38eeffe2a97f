// RUN: zero-opt %s --zero-gpu-scalar-copies -split-input-file | FileCheck %s

// The global norm's packing: each element the host would move between
// device buffers becomes a copy between 0-d views (a kernel once formed);
// the source's free moves after the copy. Host-resident hyperparameters
// are still loaded on the host.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[LR:.*]] = memref.load %arg1[] : memref<f64>
// CHECK: %[[DST:.*]] = memref.alloc() : memref<2xf32>
// CHECK: %[[S0:.*]] = memref.subview %arg0[%c0] [1] [1] : memref<1xf32> to memref<f32, strided<[], offset: ?>>
// CHECK: %[[D0:.*]] = memref.subview %[[DST]][%c0] [1] [1] : memref<2xf32> to memref<f32, strided<[], offset: ?>>
// CHECK: memref.copy %[[S0]], %[[D0]]
// CHECK: %[[S1:.*]] = memref.subview %[[SRC:.*]][%c0] [1] [1] : memref<1xf32> to memref<f32, strided<[], offset: ?>>
// CHECK: %[[D1:.*]] = memref.subview %[[DST]][%c1] [1] [1]
// CHECK: memref.copy %[[S1]], %[[D1]]
// CHECK-NEXT: memref.dealloc %[[SRC]]
// CHECK-NOT: memref.load
// CHECK: call @use(%[[DST]], %[[LR]])
func.func private @use(memref<2xf32>, f64)
func.func @train_step(%arg0: memref<1xf32>, %arg1: memref<f64> {zero.role = #zero.role<hyperparameter>}) attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %lr = memref.load %arg1[] : memref<f64>
  %src = memref.alloc() : memref<1xf32>
  %a = memref.load %arg0[%c0] : memref<1xf32>
  %b = memref.load %src[%c0] : memref<1xf32>
  memref.dealloc %src : memref<1xf32>
  %dst = memref.alloc() : memref<2xf32>
  memref.store %a, %dst[%c0] : memref<2xf32>
  memref.store %b, %dst[%c1] : memref<2xf32>
  func.call @use(%dst, %lr) : (memref<2xf32>, f64) -> ()
  return
}

// -----

// Loads and stores inside a loop of pure compute belong to a kernel.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
func.func @loop(%arg0: memref<4xf32>, %arg1: memref<4xf32>) attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %arg0[%i] : memref<4xf32>
    memref.store %v, %arg1[%i] : memref<4xf32>
  }
  return
}

// -----

// A scalar the step computes on the device (fp16's overflow flag and
// unscale factor) is read by the compute ops that use it: a 0-d input
// broadcast to every iteration, the scalar ops recomputed in their bodies;
// its buffer is freed after the last of them.
// CHECK: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @unscale
// CHECK-NOT: memref.load
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]], #{{.*}}], iterator_types = ["parallel"]} ins(%arg0, %[[F:.*]] : memref<4xf32>, memref<f32>) outs(%arg1 : memref<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[S:.*]]: f32, %[[OUT:.*]]: f32):
// CHECK-NEXT: %[[ABS:.*]] = math.absf %[[S]]
// CHECK-NEXT: %[[OK:.*]] = arith.cmpf olt, %[[ABS]], %cst
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[IN]], %[[S]]
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[OK]], %[[M]], %[[OUT]]
// CHECK: linalg.generic {{.*}} ins(%[[F]] : memref<f32>) outs(%arg2 : memref<2xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
// CHECK: memref.dealloc %[[F]]
// CHECK-NEXT: return
#map = affine_map<(d0) -> (d0)>
func.func @unscale(%arg0: memref<4xf32>, %arg1: memref<4xf32>, %arg2: memref<2xf32>) attributes {zero.entry} {
  %inf = arith.constant 0x7F800000 : f32
  %f = memref.alloc() : memref<f32>
  %s = memref.load %f[] : memref<f32>
  memref.dealloc %f : memref<f32>
  %a = math.absf %s : f32
  %ok = arith.cmpf olt, %a, %inf : f32
  linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg0 : memref<4xf32>) outs(%arg1 : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %s : f32
    %r = arith.select %ok, %m, %out : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]} outs(%arg2 : memref<2xf32>) {
  ^bb0(%out: f32):
    linalg.yield %s : f32
  }
  return
}

// -----

// A compute op reading a host-resident scalar (the fp16 loss scale) gets
// its value, loaded by the host, as a kernel argument would be: a kernel
// cannot read host memory. Inside a loop of pure compute (one kernel), the
// load goes before the loop.
// CHECK-LABEL: func.func @scaled
// CHECK: %[[S:.*]] = memref.load %arg1[] : memref<f64>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel"]} ins(%arg0 : memref<4xf32>) outs(%arg2 : memref<4xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: arith.truncf %[[S]] : f64 to f32
// CHECK: %[[T:.*]] = memref.load %arg1[] : memref<f64>
// CHECK-NEXT: scf.for
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0 : memref<4xf32>)
// CHECK: arith.truncf %[[T]] : f64 to f32
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
func.func @scaled(%x: memref<4xf32>, %scale: memref<f64> {zero.role = #zero.role<hyperparameter>}, %y: memref<4xf32>) attributes {zero.entry} {
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]} ins(%x, %scale : memref<4xf32>, memref<f64>) outs(%y : memref<4xf32>) {
  ^bb0(%a: f32, %s: f64, %o: f32):
    %f = arith.truncf %s : f64 to f32
    %m = arith.mulf %a, %f : f32
    linalg.yield %m : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]} ins(%x, %scale : memref<4xf32>, memref<f64>) outs(%y : memref<4xf32>) {
    ^bb0(%a: f32, %s: f64, %o: f32):
      %f = arith.truncf %s : f64 to f32
      %m = arith.addf %a, %f : f32
      linalg.yield %m : f32
    }
  }
  return
}
