// RUN: zero-opt %s -split-input-file --zero-gpu-guard-loads | FileCheck %s

// A causal softmax's masked score: the score's load moves under the mask
// (the other side yields a zero); its widening and scaling stay after the
// guard, which holds nothing that waits for the load, and the select
// picks. The mask's load stays, and so does the store of the select.
// CHECK-LABEL: func.func @masked_score
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: %[[M:.*]] = memref.load %arg0[%[[I]]] : memref<64xi1>
// CHECK-NEXT: %[[G:.*]] = scf.if %[[M]] -> (bf16) {
// CHECK-NEXT: %[[S:.*]] = memref.load %arg1[%[[I]]] : memref<64xbf16>
// CHECK-NEXT: scf.yield %[[S]] : bf16
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : bf16
// CHECK-NEXT: scf.yield %[[Z]] : bf16
// CHECK-NEXT: }
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[G]]
// CHECK-NEXT: %[[X:.*]] = arith.mulf %[[W]], %{{.*}} : f32
// CHECK-NEXT: %[[V:.*]] = arith.select %[[M]], %[[X]], %{{.*}} : f32
// CHECK-NEXT: memref.store %[[V]], %arg2[%[[I]]]
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

// The false side's load moves into the else region.
// CHECK-LABEL: func.func @false_side
// CHECK: %[[M:.*]] = memref.load %arg0
// CHECK-NEXT: %[[G:.*]] = scf.if %[[M]] -> (f32) {
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[Z]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[L:.*]] = memref.load %arg1
// CHECK-NEXT: scf.yield %[[L]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: arith.select %[[M]], %{{.*}}, %[[G]] : f32
func.func @false_side(%mask: memref<64xi1>, %g: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    %m = memref.load %mask[%i] : memref<64xi1>
    %x = memref.load %g[%i] : memref<64xf32>
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

// An op that may not run on a placeholder (an integer division by the
// loaded value) keeps the side's work under the guard, which yields the
// side's value.
// CHECK-LABEL: func.func @division
// CHECK: %[[M:.*]] = memref.load %arg0
// CHECK-NEXT: %[[G:.*]] = scf.if %[[M]] -> (i32) {
// CHECK-NEXT: %[[L:.*]] = memref.load %arg1
// CHECK-NEXT: %[[Q:.*]] = arith.divsi %{{.*}}, %[[L]] : i32
// CHECK-NEXT: scf.yield %[[Q]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT: arith.constant 0 : i32
// CHECK: arith.select %[[M]], %[[G]], %{{.*}} : i32
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
