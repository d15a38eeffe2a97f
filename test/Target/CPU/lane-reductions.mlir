// RUN: zero-opt %s --zero-cpu-lane-reductions=lanes=4 --split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-cpu-lane-reductions=lanes=3 --split-input-file | FileCheck %s --check-prefix=THREE

// A row sum of 10 in lanes of 4: rows outermost; the lanes one vector from
// -0, two rounds of 4 consecutive elements in a loop (one vector load;
// element 4r + l into lane l); the last two elements into lanes 0 and 1;
// halves folded onto halves (lanes 0+2 and 1+3, then the two); the
// output's value folded in last, in the body's operand order.
// CHECK-LABEL: func.func @row_sum_of_squares
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %[[C3]]
// CHECK: %[[INIT:.*]] = arith.constant dense<-0.000000e+00> : vector<4xf32>
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[C2]] step %{{.*}} iter_args(%[[L:.*]] = %[[INIT]]) -> (vector<4xf32>)
// CHECK: %[[BASE:.*]] = arith.muli %[[K]], %{{.*}} : index
// CHECK: %[[X:.*]] = vector.load %{{.*}}[%[[ROW]], %[[BASE]]] : memref<3x10xf32>, vector<4xf32>
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : vector<4xf32>
// CHECK: %[[N:.*]] = arith.addf %[[SQ]], %[[L]] : vector<4xf32>
// CHECK: scf.yield %[[N]]
// CHECK: %[[C8:.*]] = arith.constant 8 : index
// CHECK: %[[L0:.*]] = vector.extract %[[R]][0]
// CHECK: memref.load %{{.*}}[%[[ROW]], %[[C8]]]
// CHECK: %[[T0:.*]] = arith.addf %{{.*}}, %[[L0]] : f32
// CHECK: %[[V0:.*]] = vector.insert %[[T0]], %[[R]] [0]
// CHECK: %[[C9:.*]] = arith.constant 9 : index
// CHECK: %[[L1:.*]] = vector.extract %[[V0]][1]
// CHECK: memref.load %{{.*}}[%[[ROW]], %[[C9]]]
// CHECK: %[[T1:.*]] = arith.addf %{{.*}}, %[[L1]] : f32
// CHECK: %[[V1:.*]] = vector.insert %[[T1]], %[[V0]] [1]
// CHECK: %[[LO:.*]] = vector.shuffle %[[V1]], %[[V1]] [0, 1]
// CHECK: %[[HI:.*]] = vector.shuffle %[[V1]], %[[V1]] [2, 3]
// CHECK: %[[H:.*]] = arith.addf %[[LO]], %[[HI]] : vector<2xf32>
// CHECK: %[[Q0:.*]] = vector.shuffle %[[H]], %[[H]] [0]
// CHECK: %[[Q1:.*]] = vector.shuffle %[[H]], %[[H]] [1]
// CHECK: %[[Q:.*]] = arith.addf %[[Q0]], %[[Q1]] : vector<1xf32>
// CHECK: %[[S:.*]] = vector.extract %[[Q]][0]
// CHECK: %[[OLD:.*]] = memref.load %{{.*}}[%[[ROW]]]
// CHECK: %[[NEW:.*]] = arith.addf %[[S]], %[[OLD]] : f32
// CHECK: memref.store %[[NEW]], %{{.*}}[%[[ROW]]]
// CHECK-NOT: linalg.generic

// Three lanes: three rounds, element 9 into lane 0, and an odd count
// folded as scalars, the last lane a level later: (0+1)+2.
// THREE-LABEL: func.func @row_sum_of_squares
// THREE: scf.for {{.*}} -> (vector<3xf32>)
// THREE: %[[C9:.*]] = arith.constant 9 : index
// THREE: %[[L0:.*]] = vector.extract %{{.*}}[0]
// THREE: memref.load %{{.*}}[%{{.*}}, %[[C9]]]
// THREE: %[[V:.*]] = vector.insert %{{.*}}, %{{.*}} [0]
// THREE-NOT: vector.shuffle
// THREE: %[[A:.*]] = vector.extract %[[V]][0]
// THREE: %[[B:.*]] = vector.extract %[[V]][1]
// THREE: %[[C:.*]] = vector.extract %[[V]][2]
// THREE: %[[AB:.*]] = arith.addf %[[A]], %[[B]] : f32
// THREE: %[[ABC:.*]] = arith.addf %[[AB]], %[[C]] : f32
// THREE: memref.load
// THREE: arith.addf %[[ABC]], %{{.*}} : f32
func.func @row_sum_of_squares(%a: memref<3x10xf32>, %c: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<3x10xf32>) outs(%c : memref<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// linalg.reduce with a max: lanes from -inf, flags kept on every combine;
// the reduced dimension is not the last in memory (a unit one follows,
// indexed 0), so the lanes are loaded one by one; the other reduced loop
// (d0) goes around the lanes' rounds.
// CHECK-LABEL: func.func @max_over_two
// CHECK: arith.constant dense<0xFF800000> : vector<4xf32>
// CHECK: scf.for {{.*}} iter_args(
// CHECK: scf.for {{.*}} iter_args(
// CHECK-COUNT-4: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %c0] : memref<2x5x8x1xf32>
// CHECK: vector.from_elements
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan> : vector<4xf32>
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan> : vector<2xf32>
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<nnan> : f32
// CHECK-NOT: linalg.reduce
func.func @max_over_two(%a: memref<2x5x8x1xf32>, %c: memref<5x1xf32>) {
  linalg.reduce ins(%a : memref<2x5x8x1xf32>) outs(%c : memref<5x1xf32>) dimensions = [0, 2]
    (%x: f32, %acc: f32) {
      %m = arith.maximumf %x, %acc fastmath<nnan> : f32
      linalg.yield %m : f32
    }
  return
}

// -----

// Two outputs (a sum and a sum of squares) share the load; linalg.index
// becomes the lanes' indices.
// CHECK-LABEL: func.func @two_outputs_and_index
// CHECK: %{{.*}}:2 = scf.for %[[K:[a-z0-9_]+]] = {{.*}} -> (vector<4xf32>, vector<4xf32>)
// CHECK: %[[BASE:.*]] = arith.muli %[[K]]
// CHECK: vector.load
// CHECK: %[[STEP:.*]] = arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
// CHECK: %[[B:.*]] = vector.broadcast %[[BASE]] : index to vector<4xindex>
// CHECK: arith.addi %[[B]], %[[STEP]] : vector<4xindex>
// CHECK: arith.index_cast %{{.*}} : vector<4xindex> to vector<4xi32>
// CHECK-NOT: linalg.index
func.func @two_outputs_and_index(%a: memref<16xf32>, %s: memref<f32>, %q: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> ()>, affine_map<(j) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<16xf32>) outs(%s, %q : memref<f32>, memref<f32>) {
  ^bb0(%x: f32, %as: f32, %aq: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %xf = arith.mulf %x, %f : f32
    %sq = arith.mulf %x, %x : f32
    %s1 = arith.addf %as, %xf : f32
    %q1 = arith.addf %sq, %aq : f32
    linalg.yield %s1, %q1 : f32, f32
  }
  return
}

// -----

// A body in bf16 has no vector form here: the same lanes, as scalars
// (element 4r + l into lane l).
// CHECK-LABEL: func.func @bf16_lanes
// CHECK: %{{.*}}:4 = scf.for {{.*}} -> (bf16, bf16, bf16, bf16)
// CHECK: %[[B:.*]] = arith.muli
// CHECK: %[[I1:.*]] = arith.addi %[[B]], %c1
// CHECK: memref.load %{{.*}}[%[[I1]]] : memref<8xbf16>
// CHECK-NOT: vector.
func.func @bf16_lanes(%a: memref<8xbf16>, %c: memref<bf16>) {
  linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<8xbf16>) outs(%c : memref<bf16>) {
  ^bb0(%x: bf16, %acc: bf16):
    %s = arith.addf %x, %acc : bf16
    linalg.yield %s : bf16
  }
  return
}

// -----

// Left in loop order: a reduction shorter than two rounds of lanes; the
// batch sum of a bias gradient (the innermost loop is parallel and
// vectorizes as it is); an accumulator read twice; an integer sum.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT: scf.for
func.func @left_alone(%a: memref<4x7xf32>, %r: memref<4xf32>, %c: memref<7xf32>, %i: memref<4x16xi32>, %ri: memref<4xi32>, %b: memref<4x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<4x7xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%a : memref<4x7xf32>) outs(%c : memref<7xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%b : memref<4x16xf32>) outs(%r : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %x, %acc : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%i : memref<4x16xi32>) outs(%ri : memref<4xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.addi %x, %acc : i32
    linalg.yield %s : i32
  }
  return
}
