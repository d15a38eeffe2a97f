// RUN: zero-opt %s -split-input-file --zero-cpu-drop-inplace-results | FileCheck %s

// Results 0, 2 and 3 are listed in zero.inplace_results and are their own
// arguments after bufferization: directly (0), through an expand_shape (2)
// and through a collapse_shape then a cast (3). All three are dropped; the
// loss (result 1, not in place) stays, with its attribute.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %{{.*}}: memref<4xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<2x2xf32>)
// CHECK-SAME: -> (memref<f32> {zero.role = #zero.role<loss>})
// The list is consumed, so running the pass again changes nothing.
// CHECK-SAME: attributes {zero.entry} {
// CHECK: %[[L:.*]] = memref.alloc() : memref<f32>
// CHECK: return %[[L]] : memref<f32>
func.func @step(%w: memref<4xf32>, %m: memref<8xf32>, %v: memref<2x2xf32>)
    -> (memref<4xf32> {zero.updates = 0 : i64},
        memref<f32> {zero.role = #zero.role<loss>},
        memref<2x4xf32> {zero.updates = 1 : i64},
        memref<?xf32> {zero.updates = 2 : i64})
    attributes {zero.entry, zero.inplace_results = array<i64: 0, 2, 3>} {
  %l = memref.alloc() : memref<f32>
  %e = memref.expand_shape %m [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %c = memref.collapse_shape %v [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  %d = memref.cast %c : memref<4xf32> to memref<?xf32>
  return %w, %l, %e, %d : memref<4xf32>, memref<f32>, memref<2x4xf32>, memref<?xf32>
}

// -----

// Listed results that are not a whole view of an argument stay: a fresh
// buffer (bufferization could not update in place) and a subview (only part
// of the argument's buffer).
// CHECK-LABEL: func.func @not_in_place(
// CHECK-SAME: -> (memref<4xf32> {zero.updates = 0 : i64}, memref<2xf32, strided<[1]>> {zero.updates = 1 : i64})
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: %[[S:.*]] = memref.subview
// CHECK: return %[[A]], %[[S]]
func.func @not_in_place(%w: memref<4xf32>, %m: memref<4xf32>)
    -> (memref<4xf32> {zero.updates = 0 : i64},
        memref<2xf32, strided<[1]>> {zero.updates = 1 : i64})
    attributes {zero.entry, zero.inplace_results = array<i64: 0, 1>} {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %w, %a : memref<4xf32> to memref<4xf32>
  %s = memref.subview %m[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  return %a, %s : memref<4xf32>, memref<2xf32, strided<[1]>>
}

// -----

// Only listed results are dropped: result 0 returns an argument too but is
// not in zero.inplace_results, so it stays; result 1 is dropped.
// CHECK-LABEL: func.func @listed_only(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4xf32>, %{{.*}}: memref<4xf32>) -> memref<4xf32>
// CHECK: return %[[A]] : memref<4xf32>
func.func @listed_only(%a: memref<4xf32>, %b: memref<4xf32>)
    -> (memref<4xf32>, memref<4xf32> {zero.updates = 1 : i64})
    attributes {zero.entry, zero.inplace_results = array<i64: 1>} {
  return %a, %b : memref<4xf32>, memref<4xf32>
}

// -----

// Functions that are not steps, and steps without zero.inplace_results,
// are left alone.
// CHECK-LABEL: func.func @helper(
// CHECK-SAME: -> (memref<4xf32> {zero.updates = 0 : i64})
// CHECK: return %{{.*}} : memref<4xf32>
// CHECK-LABEL: func.func @unprepared(
// CHECK-SAME: -> (memref<4xf32> {zero.updates = 0 : i64})
// CHECK: return %{{.*}} : memref<4xf32>
func.func @helper(%a: memref<4xf32>) -> (memref<4xf32> {zero.updates = 0 : i64})
    attributes {zero.inplace_results = array<i64: 0>} {
  return %a : memref<4xf32>
}
func.func @unprepared(%a: memref<4xf32>) -> (memref<4xf32> {zero.updates = 0 : i64})
    attributes {zero.entry} {
  return %a : memref<4xf32>
}

// -----

// A listed result that hands back another argument than the one it updates
// stays: dropping it would lose the update of argument 0.
// CHECK-LABEL: func.func @other_argument(
// CHECK-SAME: %{{.*}}: memref<4xf32>, %[[B:.*]]: memref<4xf32>) -> (memref<4xf32> {zero.updates = 0 : i64})
// CHECK: return %[[B]] : memref<4xf32>
func.func @other_argument(%a: memref<4xf32>, %b: memref<4xf32>)
    -> (memref<4xf32> {zero.updates = 0 : i64})
    attributes {zero.entry, zero.inplace_results = array<i64: 0>} {
  return %b : memref<4xf32>
}

// -----

// Every return counts: result 0 is its argument on both paths and is
// dropped from both returns; result 1 is a fresh buffer on one path, so it
// stays on both.
// CHECK-LABEL: func.func @two_returns(
// CHECK-SAME: %{{.*}}: i1, %{{.*}}: memref<4xf32>, %[[B:.*]]: memref<4xf32>) -> (memref<4xf32> {zero.updates = 2 : i64})
// CHECK: return %[[B]] : memref<4xf32>
// CHECK: %[[N:.*]] = memref.alloc
// CHECK: return %[[N]] : memref<4xf32>
func.func @two_returns(%c: i1, %a: memref<4xf32>, %b: memref<4xf32>)
    -> (memref<4xf32> {zero.updates = 1 : i64},
        memref<4xf32> {zero.updates = 2 : i64})
    attributes {zero.entry, zero.inplace_results = array<i64: 0, 1>} {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  return %a, %b : memref<4xf32>, memref<4xf32>
^bb2:
  %n = memref.alloc() : memref<4xf32>
  return %a, %n : memref<4xf32>, memref<4xf32>
}
