// RUN: zero-opt %s -split-input-file --zero-gpu-guard-loads | FileCheck %s

// A causal softmax's masked score: where the mask is false the score's
// load reads the first element instead (one address for all those
// threads, which the cache serves), with no branch; the widening, the
// scaling and the select run on what it loads. The mask's load stays, and
// so does the store of the select.
// CHECK-LABEL: func.func @masked_score
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: %[[M:.*]] = memref.load %arg0[%[[I]]] : memref<64xi1>
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[J:.*]] = arith.select %[[M]], %[[I]], %[[C0]] : index
// CHECK-NEXT: %[[S:.*]] = memref.load %arg1[%[[J]]] : memref<64xbf16>
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[S]]
// CHECK-NEXT: %[[X:.*]] = arith.mulf %[[W]], %{{.*}} : f32
// CHECK-NEXT: %[[V:.*]] = arith.select %[[M]], %[[X]], %{{.*}} : f32
// CHECK-NEXT: memref.store %[[V]], %arg2[%[[I]]]
// CHECK-NOT: scf.if
func.func @masked_score(%mask: memref<64xi1>, %s: memref<64xbf16>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %scale = arith.constant 0.125 : f32
  %ninf = arith.constant 0xFF800000 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %m = memref.load %mask[%i] : memref<64xi1>
    %x = memref.load %s[%i] : memref<64xbf16>
    %w = arith.extf %x : bf16 to f32
    %y = arith.mulf %w, %scale : f32
    %v = arith.select %m, %y, %ninf : f32
    memref.store %v, %out[%i] : memref<64xf32>
  }
  return
}

// -----

// The false side's load reads the first element where the mask is true;
// a load before the mask's moves after it, to the select.
// CHECK-LABEL: func.func @false_side
// CHECK: %[[M:.*]] = memref.load %arg0[%[[I:.*]]]
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[J:.*]] = arith.select %[[M]], %[[C0]], %[[I]] : index
// CHECK-NEXT: %[[L:.*]] = memref.load %arg1[%[[J]]]
// CHECK-NEXT: arith.select %[[M]], %{{.*}}, %[[L]] : f32
func.func @false_side(%mask: memref<64xi1>, %g: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %x = memref.load %g[%i] : memref<64xf32>
    %m = memref.load %mask[%i] : memref<64xi1>
    %v = arith.select %m, %zero, %x : f32
    memref.store %v, %out[%i] : memref<64xf32>
  }
  return
}

// -----

// Left alone: a load whose value another op uses too, a load with a store
// between it and the select (it could read what the store writes), and a
// select whose sides load nothing.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: scf.if
// CHECK-COUNT-3: arith.select
// CHECK-NOT: scf.if
func.func @kept(%mask: memref<64xi1>, %s: memref<64xf32>, %out: memref<64xf32>, %sum: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %ninf = arith.constant 0xFF800000 : f32
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %m = memref.load %mask[%i] : memref<64xi1>
    %x = memref.load %s[%i] : memref<64xf32>
    %v = arith.select %m, %x, %ninf : f32
    memref.store %x, %sum[%i] : memref<64xf32>
    memref.store %v, %out[%i] : memref<64xf32>
    %y = memref.load %s[%i] : memref<64xf32>
    memref.store %two, %out[%i] : memref<64xf32>
    %u = arith.select %m, %y, %ninf : f32
    memref.store %u, %sum[%i] : memref<64xf32>
    %w = arith.select %m, %two, %ninf : f32
    memref.store %w, %out[%i] : memref<64xf32>
  }
  return
}

// -----

// An op that may not run on any loaded value (an integer division by it)
// keeps the side under a branch: an scf.if on the mask yields the side's
// value in the select's place.
// CHECK-LABEL: func.func @division
// CHECK: %[[M:.*]] = memref.load %arg0
// CHECK-NEXT: %[[G:.*]] = scf.if %[[M]] -> (i32) {
// CHECK-NEXT: %[[L:.*]] = memref.load %arg1
// CHECK-NEXT: %[[Q:.*]] = arith.divsi %{{.*}}, %[[L]] : i32
// CHECK-NEXT: scf.yield %[[Q]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %{{.*}} : i32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[G]], %arg2
// CHECK-NOT: arith.select
func.func @division(%mask: memref<64xi1>, %d: memref<64xi32>, %out: memref<64xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %k = arith.constant 1024 : i32
  %none = arith.constant -1 : i32
  scf.for %i = %c0 to %c64 step %c1 {
    %m = memref.load %mask[%i] : memref<64xi1>
    %x = memref.load %d[%i] : memref<64xi32>
    %q = arith.divsi %k, %x : i32
    %v = arith.select %m, %q, %none : i32
    memref.store %v, %out[%i] : memref<64xi32>
  }
  return
}
