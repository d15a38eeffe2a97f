// RUN: zero-opt %s --split-input-file --zero-bucket-collectives="reduce-bucket-size=256 allgather-bucket-size=256" | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-bucket-collectives="reduce-bucket-size=5 allgather-bucket-size=5" | FileCheck %s --check-prefix=SMALL

// Two reduce-scatters on 2 ranks (4 and 2 elements per rank) become one of
// 6: each input is packed, where it was ready, as 2 rows into a 2 x 6
// staging buffer (rank r's row holds both r-th shards), the collective runs
// where the last input was, and each result is unpacked before its use.
// CHECK-LABEL: func.func @two
// CHECK: %[[IN:.*]] = memref.alloc() : memref<12xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<6xf32>
// CHECK-NEXT: zero.bucket_pack %arg0 into %[[IN]][0] rows 2 : memref<8xf32>, memref<12xf32>
// CHECK-NEXT: linalg.copy ins(%arg4
// CHECK-NEXT: zero.bucket_pack %arg2 into %[[IN]][4] rows 2 : memref<4xf32>, memref<12xf32>
// CHECK-NEXT: zero.reduce_scatter %[[IN]] into %[[OUT]] {world_size = 2 : i64} : memref<12xf32>, memref<6xf32>
// CHECK-NEXT: zero.bucket_unpack %[[OUT]][0] rows 1 into %arg1
// CHECK-NEXT: linalg.copy ins(%arg1
// CHECK-NEXT: zero.bucket_unpack %[[OUT]][4] rows 1 into %arg3
// CHECK-NEXT: return
// With 5 elements a bucket holds only one of them: nothing changes.
// SMALL-LABEL: func.func @two
// SMALL-NEXT: zero.reduce_scatter %arg0 into %arg1
// SMALL-NEXT: linalg.copy
// SMALL-NEXT: zero.reduce_scatter %arg2 into %arg3
func.func @two(%g1: memref<8xf32>, %s1: memref<4xf32>, %g2: memref<4xf32>, %s2: memref<2xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  zero.reduce_scatter %g1 into %s1 {world_size = 2 : i64} : memref<8xf32>, memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
  zero.reduce_scatter %g2 into %s2 {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
  linalg.copy ins(%s1 : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}

// -----

// The first result is copied into a buffer the second collective does not
// touch: the copy waits for the bucket.
// CHECK-LABEL: func.func @read_between
// CHECK: zero.reduce_scatter
// CHECK-NEXT: zero.bucket_unpack %{{.*}}[0] rows 1 into %arg1
// CHECK-NEXT: linalg.copy ins(%arg1 : memref<4xf32>) outs(%arg4 : memref<4xf32>)
// CHECK-NEXT: zero.bucket_unpack %{{.*}}[4] rows 1 into %arg3
// CHECK-NEXT: return
func.func @read_between(%g1: memref<8xf32>, %s1: memref<4xf32>, %g2: memref<4xf32>, %s2: memref<2xf32>, %y: memref<4xf32>) {
  zero.reduce_scatter %g1 into %s1 {world_size = 2 : i64} : memref<8xf32>, memref<4xf32>
  linalg.copy ins(%s1 : memref<4xf32>) outs(%y : memref<4xf32>)
  zero.reduce_scatter %g2 into %s2 {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
  return
}

// -----

// The first result is copied into what the second collective sends: the
// bucket closes with one member, and nothing changes.
// CHECK-LABEL: func.func @feeds_next
// CHECK-NEXT: zero.reduce_scatter %arg0 into %arg1
// CHECK-NEXT: linalg.copy
// CHECK-NEXT: zero.reduce_scatter %arg2 into %arg3
func.func @feeds_next(%g1: memref<8xf32>, %s1: memref<4xf32>, %g2: memref<4xf32>, %s2: memref<2xf32>) {
  zero.reduce_scatter %g1 into %s1 {world_size = 2 : i64} : memref<8xf32>, memref<4xf32>
  linalg.copy ins(%s1 : memref<4xf32>) outs(%g2 : memref<4xf32>)
  zero.reduce_scatter %g2 into %s2 {world_size = 2 : i64} : memref<4xf32>, memref<2xf32>
  return
}

// -----

// Each reduced 16-bit gradient is averaged (times 1/N, rounded) right after
// its all-reduce: the averages wait for the bucket, in order, each after
// its result is unpacked; the 1/N both read is only read in between.
// CHECK-LABEL: func.func @averages
// CHECK: zero.bucket_pack %arg0
// CHECK-NEXT: zero.bucket_pack %arg2
// CHECK-NEXT: zero.all_reduce %[[S:.*]] into %[[S]]
// CHECK-NEXT: zero.bucket_unpack %[[S]][0] rows 1 into %arg1
// CHECK-NEXT: linalg.generic {{.*}} ins(%arg1, %arg4 : memref<4xbf16>, memref<bf16>) outs(%arg5
// CHECK-NEXT: ^bb
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: zero.bucket_unpack %[[S]][4] rows 1 into %arg3
// CHECK-NEXT: linalg.generic {{.*}} ins(%arg3, %arg4 : memref<2xbf16>, memref<bf16>) outs(%arg6
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
func.func @averages(%g1: memref<4xbf16>, %r1: memref<4xbf16>, %g2: memref<2xbf16>, %r2: memref<2xbf16>, %inv: memref<bf16>, %a1: memref<4xbf16>, %a2: memref<2xbf16>) {
  zero.all_reduce %g1 into %r1 {world_size = 2 : i64} : memref<4xbf16>, memref<4xbf16>
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]} ins(%r1, %inv : memref<4xbf16>, memref<bf16>) outs(%a1 : memref<4xbf16>) {
  ^bb0(%x: bf16, %s: bf16, %o: bf16):
    %m = arith.mulf %x, %s : bf16
    linalg.yield %m : bf16
  }
  zero.all_reduce %g2 into %r2 {world_size = 2 : i64} : memref<2xbf16>, memref<2xbf16>
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]} ins(%r2, %inv : memref<2xbf16>, memref<bf16>) outs(%a2 : memref<2xbf16>) {
  ^bb0(%x: bf16, %s: bf16, %o: bf16):
    %m = arith.mulf %x, %s : bf16
    linalg.yield %m : bf16
  }
  return
}

// -----

// What an average reads is overwritten before the next collective: it
// cannot wait, and the bucket closes.
// CHECK-LABEL: func.func @source_overwritten
// CHECK-NEXT: zero.all_reduce %arg0 into %arg1
// CHECK-NEXT: linalg.generic
// CHECK: linalg.fill
// CHECK-NEXT: zero.all_reduce %arg2 into %arg3
#id2 = affine_map<(d0) -> (d0)>
func.func @source_overwritten(%g1: memref<4xf32>, %r1: memref<4xf32>, %g2: memref<4xf32>, %r2: memref<4xf32>, %x: memref<4xf32>, %a1: memref<4xf32>) {
  zero.all_reduce %g1 into %r1 {world_size = 2 : i64} : memref<4xf32>, memref<4xf32>
  linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel"]} ins(%r1, %x : memref<4xf32>, memref<4xf32>) outs(%a1 : memref<4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    linalg.yield %m : f32
  }
  %c = arith.constant 0.0 : f32
  linalg.fill ins(%c : f32) outs(%x : memref<4xf32>)
  zero.all_reduce %g2 into %r2 {world_size = 2 : i64} : memref<4xf32>, memref<4xf32>
  return
}

// -----

// A product of a gathered parameter keeps its place: the next gather
// stays its own (prefetching decides how far gathers run ahead).
// CHECK-LABEL: func.func @gathered_compute
// CHECK-NEXT: zero.all_gather %arg0 into %arg1
// CHECK-NEXT: linalg.generic
// CHECK: zero.all_gather %arg2 into %arg3
#id3 = affine_map<(d0) -> (d0)>
func.func @gathered_compute(%p1: memref<2xf32>, %f1: memref<4xf32>, %p2: memref<2xf32>, %f2: memref<4xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  zero.all_gather %p1 into %f1 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel"]} ins(%f1, %x : memref<4xf32>, memref<4xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    linalg.yield %m : f32
  }
  zero.all_gather %p2 into %f2 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  return
}

// -----

// Gathers of updated shards (below stage 3), each written back to its
// replica by a copy: the copies wait for the bucket. The gathered staging
// buffer is 2 rows of 3; each replica takes its columns. (The step's
// compute comes first: these gathers do not open the block.)
// CHECK-LABEL: func.func @gathers
// CHECK: %[[IN:.*]] = memref.alloc() : memref<3xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<6xf32>
// CHECK-NEXT: zero.bucket_pack %arg0 into %[[IN]][0] rows 1
// CHECK-NEXT: zero.bucket_pack %arg2 into %[[IN]][2] rows 1
// CHECK-NEXT: zero.all_gather %[[IN]] into %[[OUT]] {world_size = 2 : i64} : memref<3xf32>, memref<6xf32>
// CHECK-NEXT: zero.bucket_unpack %[[OUT]][0] rows 2 into %arg1
// CHECK-NEXT: memref.copy %arg1, %arg4
// CHECK-NEXT: zero.bucket_unpack %[[OUT]][2] rows 2 into %arg3
// CHECK-NEXT: memref.copy %arg3, %arg5
// CHECK-NOT: zero.all_gather
func.func @gathers(%p1: memref<2xf32>, %f1: memref<4xf32>, %p2: memref<1xf32>, %f2: memref<2xf32>, %r1: memref<4xf32>, %r2: memref<2xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  linalg.copy ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
  zero.all_gather %p1 into %f1 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  memref.copy %f1, %r1 : memref<4xf32> to memref<4xf32>
  zero.all_gather %p2 into %f2 {world_size = 2 : i64} : memref<1xf32>, memref<2xf32>
  memref.copy %f2, %r2 : memref<2xf32> to memref<2xf32>
  return
}

// -----

// f64 all-reduces share a bucket of f64 (the limit counts elements; the
// bucket's bytes are that times 8). A bucket holds one element type: an
// f32 all-reduce closes it.
// CHECK-LABEL: func.func @element_types
// CHECK: %[[S:.*]] = memref.alloc() : memref<7xf64>
// CHECK-NEXT: zero.bucket_pack %arg0 into %[[S]][0] rows 1 : memref<3xf64>, memref<7xf64>
// CHECK-NEXT: zero.bucket_pack %arg1 into %[[S]][3] rows 1 : memref<4xf64>, memref<7xf64>
// CHECK-NEXT: zero.all_reduce %[[S]] into %[[S]] {world_size = 2 : i64} : memref<7xf64>, memref<7xf64>
// CHECK-NEXT: zero.all_reduce %arg2 into %arg2 {{.*}} : memref<5xf32>, memref<5xf32>
// CHECK-NEXT: zero.bucket_unpack %[[S]][0] rows 1 into %arg0
// CHECK-NEXT: zero.all_reduce %arg0 into %arg0 {{.*}} : memref<3xf64>, memref<3xf64>
// CHECK-NEXT: zero.bucket_unpack %[[S]][3] rows 1 into %arg1
func.func @element_types(%a: memref<3xf64>, %b: memref<4xf64>, %c: memref<5xf32>) {
  zero.all_reduce %a into %a {world_size = 2 : i64} : memref<3xf64>, memref<3xf64>
  zero.all_reduce %b into %b {world_size = 2 : i64} : memref<4xf64>, memref<4xf64>
  zero.all_reduce %c into %c {world_size = 2 : i64} : memref<5xf32>, memref<5xf32>
  zero.all_reduce %a into %a {world_size = 2 : i64} : memref<3xf64>, memref<3xf64>
  return
}

// -----

// Gathers that open the block, with nothing before them but the roundings
// of their inputs (a step's parameters gathered from their masters ahead
// of the forward): their buckets run one after another and the first is
// waited for at once, so the k-th bucket holds at most 2^k times the first
// gather's elements: [4], [4 + 4], then the rest within 16. The first
// stays a gather of its own.
// CHECK-LABEL: func.func @leading_gathers
// CHECK: linalg.copy ins(%arg0 : memref<2xf32>) outs(%[[I1:.*]] : memref<2xf32>)
// CHECK-NEXT: zero.all_gather %[[I1]] into %arg2 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
// CHECK: zero.all_gather %{{.*}} into %{{.*}} {world_size = 2 : i64} : memref<4xf32>, memref<8xf32>
// CHECK: zero.all_gather %{{.*}} into %{{.*}} {world_size = 2 : i64} : memref<6xf32>, memref<12xf32>
// CHECK-NOT: zero.all_gather
// CHECK: linalg.copy ins(%arg2 : memref<4xf32>) outs(%arg8 : memref<4xf32>)
func.func @leading_gathers(%m1: memref<2xf32>, %m2: memref<2xf32>, %f1: memref<4xf32>, %f2: memref<4xf32>, %f3: memref<4xf32>, %f4: memref<4xf32>, %f5: memref<4xf32>, %m3: memref<2xf32>, %y: memref<4xf32>, %f6: memref<4xf32>) {
  %i1 = memref.alloc() : memref<2xf32>
  linalg.copy ins(%m1 : memref<2xf32>) outs(%i1 : memref<2xf32>)
  zero.all_gather %i1 into %f1 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  %i2 = memref.alloc() : memref<2xf32>
  linalg.copy ins(%m2 : memref<2xf32>) outs(%i2 : memref<2xf32>)
  zero.all_gather %i2 into %f2 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  %i3 = memref.alloc() : memref<2xf32>
  linalg.copy ins(%m3 : memref<2xf32>) outs(%i3 : memref<2xf32>)
  zero.all_gather %i3 into %f3 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  zero.all_gather %m1 into %f4 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  zero.all_gather %m2 into %f5 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  zero.all_gather %m3 into %f6 {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  linalg.copy ins(%f1 : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}
