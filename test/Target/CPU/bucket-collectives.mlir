// RUN: zero-opt %s --split-input-file --zero-cpu-bucket-collectives | FileCheck %s

// Two reduce-scatters on 2 ranks (4 and 2 elements per rank) become one of
// 6: each input is packed, where it was ready, as 2 rows into a 2 x 6
// staging buffer (rank r's row holds both r-th shards), the collective runs
// where the last input was, and each result is unpacked before its use.
// CHECK-LABEL: func.func @two
// CHECK: %[[IN:.*]] = memref.alloc() : memref<12xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<6xf32>
// CHECK: %[[A:.*]] = memref.expand_shape %arg0 {{.*}} into memref<2x4xf32>
// CHECK: %[[S1:.*]] = memref.subview %{{.*}}[0, 0] [2, 4] [1, 1]
// CHECK: memref.copy %[[A]], %[[S1]]
// CHECK: linalg.copy ins(%arg4
// CHECK: %[[B:.*]] = memref.expand_shape %arg2 {{.*}} into memref<2x2xf32>
// CHECK: %[[S2:.*]] = memref.subview %{{.*}}[0, 4] [2, 2] [1, 1]
// CHECK: memref.copy %[[B]], %[[S2]]
// CHECK-NEXT: zero.reduce_scatter %[[IN]] into %[[OUT]] {world_size = 2 : i64} : memref<12xf32>, memref<6xf32>
// CHECK: memref.subview %[[OUT]][0] [4] [1]
// CHECK: memref.copy {{.*}}, %arg1
// CHECK-NEXT: linalg.copy ins(%arg1
// CHECK: memref.subview %[[OUT]][4] [2] [1]
// CHECK: memref.copy {{.*}}, %arg3
// CHECK-NEXT: return
// CHECK-NOT: zero.reduce_scatter
func.func @two(%g1: memref<8xf32>, %s1: memref<4xf32>, %g2: memref<4xf32>, %s2: memref<2xf32>, %x: memref<4xf32>, %y: memref<4xf32>) attributes {zero.reduce_bucket_bytes = 1024 : i64} {
  zero.reduce_scatter %g1 into %s1 {world_size = 2 : i64} : memref<8xf32>, memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
  zero.reduce_scatter %g2 into %s2 {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
  linalg.copy ins(%s1 : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}

// -----

// A bucket of 5 elements per rank holds only one of them: nothing changes.
// CHECK-LABEL: func.func @small_bucket
// CHECK-NEXT: zero.reduce_scatter %arg0 into %arg1
// CHECK-NEXT: zero.reduce_scatter %arg2 into %arg3
func.func @small_bucket(%g1: memref<8xf32>, %s1: memref<4xf32>, %g2: memref<4xf32>, %s2: memref<2xf32>) attributes {zero.reduce_bucket_bytes = 20 : i64} {
  zero.reduce_scatter %g1 into %s1 {world_size = 2 : i64} : memref<8xf32>, memref<4xf32>
  zero.reduce_scatter %g2 into %s2 {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
  return
}

// -----

// The first result is read before the second collective: the bucket
// closes with one member, and nothing changes.
// CHECK-LABEL: func.func @read_between
// CHECK-NEXT: zero.reduce_scatter %arg0 into %arg1
// CHECK-NEXT: linalg.copy
// CHECK-NEXT: zero.reduce_scatter %arg2 into %arg3
func.func @read_between(%g1: memref<8xf32>, %s1: memref<4xf32>, %g2: memref<4xf32>, %s2: memref<2xf32>, %y: memref<4xf32>) attributes {zero.reduce_bucket_bytes = 1024 : i64} {
  zero.reduce_scatter %g1 into %s1 {world_size = 2 : i64} : memref<8xf32>, memref<4xf32>
  linalg.copy ins(%s1 : memref<4xf32>) outs(%y : memref<4xf32>)
  zero.reduce_scatter %g2 into %s2 {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
  return
}

// -----

// Gathers of updated shards (below stage 3), each written back to its
// replica by a copy: the copies wait for the bucket. The gathered staging
// buffer is 2 rows of 3; each replica takes its columns.
// CHECK-LABEL: func.func @gathers
// CHECK: %[[IN:.*]] = memref.alloc() : memref<3xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<6xf32>
// CHECK: memref.subview %[[IN]][0] [2] [1]
// CHECK: memref.subview %[[IN]][2] [1] [1]
// CHECK: zero.all_gather %[[IN]] into %[[OUT]] {world_size = 2 : i64} : memref<3xf32>, memref<6xf32>
// CHECK-NEXT: %[[R1:.*]] = memref.expand_shape %[[OUT]] {{.*}} into memref<2x3xf32>
// CHECK-NEXT: memref.subview %[[R1]][0, 0] [2, 2] [1, 1]
// CHECK: memref.copy
// CHECK-NEXT: memref.copy %arg1, %arg4
// CHECK: memref.subview %{{.*}}[0, 2] [2, 1] [1, 1]
// CHECK: memref.copy
// CHECK-NEXT: memref.copy %arg3, %arg5
// CHECK-NOT: zero.all_gather
func.func @gathers(%p1: memref<2xf32>, %f1: memref<4xf32>, %p2: memref<1xf32>, %f2: memref<2xf32>, %r1: memref<4xf32>, %r2: memref<2xf32>) attributes {zero.allgather_bucket_bytes = 1024 : i64} {
  zero.all_gather %p1 into %f1 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  memref.copy %f1, %r1 : memref<4xf32> to memref<4xf32>
  zero.all_gather %p2 into %f2 {world_size = 2 : i64} : memref<1xf32>, memref<2xf32>
  memref.copy %f2, %r2 : memref<2xf32> to memref<2xf32>
  return
}
