// RUN: zero-opt %s --split-input-file --zero-unpack-in-place | FileCheck %s

// A gathered parameter, unpacked into a buffer of its own and copied whole
// (through a reshape) into the parameter: the unpack writes the parameter,
// where the copy was, and the buffer, the reshape and the copy are gone.
// CHECK-LABEL: func.func @param
// CHECK-NOT: memref.alloc
// CHECK: zero.all_gather
// CHECK-NEXT: linalg.copy ins(%arg3 : memref<4xf32>) outs(%arg4 : memref<4xf32>)
// CHECK-NEXT: zero.bucket_unpack %arg1[0] rows 2 into %arg2 : memref<1024xf32>, memref<32x16xf32>
// CHECK-NEXT: return
func.func @param(%in: memref<512xf32>, %stage: memref<1024xf32>, %p: memref<32x16xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  zero.all_gather %in into %stage {world_size = 2 : i64} : memref<512xf32>, memref<1024xf32>
  %t = memref.alloc() : memref<512xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<1024xf32>, memref<512xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
  %e = memref.expand_shape %t [[0, 1]] output_shape [32, 16] : memref<512xf32> into memref<32x16xf32>
  memref.copy %e, %p : memref<32x16xf32> to memref<32x16xf32>
  return
}

// -----

// A `linalg.copy` of the whole buffer, after another member's unpack from
// the same staging buffer (which only reads it).
// CHECK-LABEL: func.func @linalg_copy
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: zero.bucket_unpack %arg0[4] rows 2 into %[[T]]
// CHECK-NEXT: zero.bucket_unpack %arg0[0] rows 2 into %arg1 : memref<16xf32>, memref<8xf32>
// CHECK-NEXT: return %[[T]]
func.func @linalg_copy(%stage: memref<16xf32>, %p: memref<8xf32>) -> memref<8xf32> {
  %t = memref.alloc() : memref<8xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<16xf32>, memref<8xf32>
  %u = memref.alloc() : memref<8xf32>
  zero.bucket_unpack %stage[4] rows 2 into %u : memref<16xf32>, memref<8xf32>
  linalg.copy ins(%t : memref<8xf32>) outs(%p : memref<8xf32>)
  return %u : memref<8xf32>
}

// -----

// A padded parameter: the copy reads only the first 10 of 12 gathered
// elements. Nothing changes.
// CHECK-LABEL: func.func @padded
// CHECK: zero.bucket_unpack %arg0[0] rows 2 into %[[T:.*]] :
// CHECK: memref.copy
func.func @padded(%stage: memref<12xf32>, %p: memref<10xf32>) {
  %t = memref.alloc() : memref<12xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<12xf32>, memref<12xf32>
  %s = memref.subview %t[0] [10] [1] : memref<12xf32> to memref<10xf32, strided<[1]>>
  memref.copy %s, %p : memref<10xf32, strided<[1]>> to memref<10xf32>
  return
}

// -----

// The target is read between the unpack and the copy: it must still hold
// its old values there. Nothing changes.
// CHECK-LABEL: func.func @target_read_between
// CHECK: zero.bucket_unpack %arg0[0] rows 2 into %[[T:.*]] :
// CHECK-NEXT: linalg.copy ins(%arg1
// CHECK-NEXT: memref.copy %[[T]], %arg1
func.func @target_read_between(%stage: memref<16xf32>, %p: memref<8xf32>, %y: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<16xf32>, memref<8xf32>
  linalg.copy ins(%p : memref<8xf32>) outs(%y : memref<8xf32>)
  memref.copy %t, %p : memref<8xf32> to memref<8xf32>
  return
}

// -----

// The staging buffer is written between them. Nothing changes.
// CHECK-LABEL: func.func @staging_written_between
// CHECK: zero.bucket_unpack %arg0[0] rows 2 into %[[T:.*]] :
// CHECK-NEXT: linalg.copy
// CHECK-NEXT: memref.copy %[[T]], %arg1
func.func @staging_written_between(%stage: memref<16xf32>, %p: memref<8xf32>, %x: memref<16xf32>) {
  %t = memref.alloc() : memref<8xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<16xf32>, memref<8xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%stage : memref<16xf32>)
  memref.copy %t, %p : memref<8xf32> to memref<8xf32>
  return
}

// -----

// The unpacked buffer has another reader, or is copied twice, or the
// target is strided: nothing changes.
// CHECK-LABEL: func.func @other_reader
// CHECK: memref.copy
// CHECK-LABEL: func.func @two_copies
// CHECK: memref.copy
// CHECK: memref.copy
// CHECK-LABEL: func.func @strided_target
// CHECK: zero.bucket_unpack %arg0[0] rows 2 into %[[T:.*]] :
// CHECK: memref.copy %[[T]], %{{.*}} : memref<8xf32> to memref<8xf32, strided<[2]>>
func.func @other_reader(%stage: memref<16xf32>, %p: memref<8xf32>, %y: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<16xf32>, memref<8xf32>
  memref.copy %t, %p : memref<8xf32> to memref<8xf32>
  linalg.copy ins(%t : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}
func.func @two_copies(%stage: memref<16xf32>, %p: memref<8xf32>, %q: memref<8xf32>) {
  %t = memref.alloc() : memref<8xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<16xf32>, memref<8xf32>
  memref.copy %t, %p : memref<8xf32> to memref<8xf32>
  memref.copy %t, %q : memref<8xf32> to memref<8xf32>
  return
}
func.func @strided_target(%stage: memref<16xf32>, %p: memref<16xf32>) {
  %t = memref.alloc() : memref<8xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<16xf32>, memref<8xf32>
  %s = memref.subview %p[0] [8] [2] : memref<16xf32> to memref<8xf32, strided<[2]>>
  memref.copy %t, %s : memref<8xf32> to memref<8xf32, strided<[2]>>
  return
}

// -----

// A copy that converts (f32 to f16): the unpack cannot write the target.
// CHECK-LABEL: func.func @converting_copy
// CHECK: zero.bucket_unpack %arg0[0] rows 2 into %[[T:.*]] :
// CHECK-NEXT: linalg.copy ins(%[[T]] : memref<8xf32>) outs(%arg1 : memref<8xf16>)
func.func @converting_copy(%stage: memref<16xf32>, %p: memref<8xf16>) {
  %t = memref.alloc() : memref<8xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<16xf32>, memref<8xf32>
  linalg.copy ins(%t : memref<8xf32>) outs(%p : memref<8xf16>)
  return
}

// -----

// The in-place unpacks of one bucket move together, in their order, to
// just before the first op that touches one of their targets (here the
// second member's), past work that touches neither the targets nor the
// staging buffer: the bucket is waited for where the step first needs it.
// CHECK-LABEL: func.func @sink_to_first_use
// CHECK: zero.all_gather
// CHECK-NEXT: linalg.copy ins(%arg4 : memref<4xf32>) outs(%arg5 : memref<4xf32>)
// CHECK-NEXT: zero.bucket_unpack %arg1[0] rows 2 into %arg2 : memref<8xf32>, memref<4xf32>
// CHECK-NEXT: zero.bucket_unpack %arg1[2] rows 2 into %arg3 : memref<8xf32>, memref<4xf32>
// CHECK-NEXT: linalg.copy ins(%arg3 : memref<4xf32>) outs(%arg5 : memref<4xf32>)
// CHECK-NEXT: linalg.copy ins(%arg2 : memref<4xf32>) outs(%arg5 : memref<4xf32>)
func.func @sink_to_first_use(%in: memref<4xf32>, %stage: memref<8xf32>, %p: memref<4xf32>, %q: memref<4xf32>, %x: memref<4xf32>, %y: memref<4xf32>) {
  zero.all_gather %in into %stage {world_size = 2 : i64} : memref<4xf32>, memref<8xf32>
  %t = memref.alloc() : memref<4xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<8xf32>, memref<4xf32>
  %u = memref.alloc() : memref<4xf32>
  zero.bucket_unpack %stage[2] rows 2 into %u : memref<8xf32>, memref<4xf32>
  memref.copy %t, %p : memref<4xf32> to memref<4xf32>
  memref.copy %u, %q : memref<4xf32> to memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
  linalg.copy ins(%q : memref<4xf32>) outs(%y : memref<4xf32>)
  linalg.copy ins(%p : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}

// -----

// An op writing the staging buffer stops the unpack there.
// CHECK-LABEL: func.func @sink_stops_at_staging_write
// CHECK: zero.bucket_unpack %arg1[0] rows 2 into %arg2
// CHECK-NEXT: zero.all_gather %arg0 into %arg1
// CHECK-NEXT: linalg.copy ins(%arg2 : memref<4xf32>) outs(%arg3 : memref<4xf32>)
func.func @sink_stops_at_staging_write(%in: memref<4xf32>, %stage: memref<8xf32>, %p: memref<4xf32>, %y: memref<4xf32>) {
  zero.all_gather %in into %stage {world_size = 2 : i64} : memref<4xf32>, memref<8xf32>
  %t = memref.alloc() : memref<4xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<8xf32>, memref<4xf32>
  memref.copy %t, %p : memref<4xf32> to memref<4xf32>
  zero.all_gather %in into %stage {world_size = 2 : i64} : memref<4xf32>, memref<8xf32>
  linalg.copy ins(%p : memref<4xf32>) outs(%y : memref<4xf32>)
  return
}

// -----

// Targets the step does not touch again: the unpacks stay where their
// copies were, to run while later buckets travel.
// CHECK-LABEL: func.func @unused_after
// CHECK: zero.all_gather %arg0 into %arg1
// CHECK-NEXT: zero.bucket_unpack %arg1[0] rows 2 into %arg2
// CHECK-NEXT: zero.all_gather %arg0 into %arg3
// CHECK-NEXT: return
func.func @unused_after(%in: memref<4xf32>, %stage: memref<8xf32>, %p: memref<4xf32>, %stage2: memref<8xf32>) {
  zero.all_gather %in into %stage {world_size = 2 : i64} : memref<4xf32>, memref<8xf32>
  %t = memref.alloc() : memref<4xf32>
  zero.bucket_unpack %stage[0] rows 2 into %t : memref<8xf32>, memref<4xf32>
  memref.copy %t, %p : memref<4xf32> to memref<4xf32>
  zero.all_gather %in into %stage2 {world_size = 2 : i64} : memref<4xf32>, memref<8xf32>
  return
}
