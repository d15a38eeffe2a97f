// RUN: zero-opt %s --split-input-file --verify-diagnostics --convert-zero-to-runtime | FileCheck %s

// A start becomes zero_rt_comm_start(kind, dtype, send, recv, count, 0) on
// the buffers' byte addresses; its i64 handle is what the wait completes.
// CHECK-DAG: func.func private @zero_rt_comm_start(i32, i32, i64, i64, i64, i64) -> i64
// CHECK-DAG: func.func private @zero_rt_comm_wait(i64)
// CHECK-LABEL: func.func @gather
// CHECK-DAG: %[[KIND:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[COUNT:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[SP:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK-DAG: %[[RP:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[H:.*]] = call @zero_rt_comm_start(%[[KIND]], %[[F32]], %{{.*}}, %{{.*}}, %[[COUNT]], %{{.*}}) : (i32, i32, i64, i64, i64, i64) -> i64
// CHECK-NEXT: linalg.copy
// CHECK-NEXT: call @zero_rt_comm_wait(%[[H]]) : (i64) -> ()
// CHECK-NOT: zero.
func.func @gather(%s: memref<3xf32>, %g: memref<6xf32>, %x: memref<4xf32>) {
  %r = zero.all_gather_start %s into %g {world_size = 2 : i64} : memref<3xf32>, memref<6xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%x : memref<4xf32>)
  zero.wait %r
  return
}

// -----

// Reduce-scatter counts what each rank receives; f64 is dtype 1. A
// collective nobody split into start and wait runs both at once.
// CHECK-LABEL: func.func @scatter_f64
// CHECK-DAG: %[[KIND:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[F64:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[COUNT:.*]] = arith.constant 2 : i64
// CHECK: %[[H:.*]] = call @zero_rt_comm_start(%[[KIND]], %[[F64]], %{{.*}}, %{{.*}}, %[[COUNT]], %{{.*}})
// CHECK-NEXT: call @zero_rt_comm_wait(%[[H]])
// CHECK: %[[H2:.*]] = call @zero_rt_comm_start
// CHECK-NEXT: call @zero_rt_comm_wait(%[[H2]])
func.func @scatter_f64(%g: memref<4xf64>, %s: memref<2xf64>) {
  %r = zero.reduce_scatter_start %g into %s {world_size = 2 : i64} : memref<4xf64>, memref<2xf64>
  zero.wait %r
  zero.all_reduce %g into %g {world_size = 2 : i64} : memref<4xf64>, memref<4xf64>
  return
}

// -----

// The rank is the runtime's.
// CHECK: func.func private @zero_rt_rank() -> i64
// CHECK-LABEL: func.func @rank
// CHECK: %[[R:.*]] = call @zero_rt_rank() : () -> i64
// CHECK-NEXT: arith.index_cast %[[R]] : i64 to index
func.func @rank() -> index {
  %r = zero.rank
  return %r : index
}

// -----

// Bucket copies are copies between views: the member as rows, the
// staging buffer as rows of which the member takes its columns.
// CHECK-LABEL: func.func @bucket
// CHECK: %[[M:.*]] = memref.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
// CHECK-NEXT: %[[S:.*]] = memref.expand_shape %arg1 {{\[\[}}0, 1]] output_shape [2, 3] : memref<6xf32> into memref<2x3xf32>
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[S]][0, 1] [2, 2] [1, 1]
// CHECK-NEXT: memref.copy %[[M]], %[[V]]
// CHECK: %[[V2:.*]] = memref.subview %arg1[4] [2] [1]
// CHECK-NEXT: memref.copy %[[V2]], %{{.*}} : memref<2xf32, strided<[1], offset: 4>> to memref<2xf32>
func.func @bucket(%m: memref<4xf32>, %stage: memref<6xf32>, %w: memref<1x2xf32>) {
  zero.bucket_pack %m into %stage[1] rows 2 : memref<4xf32>, memref<6xf32>
  zero.bucket_unpack %stage[4] rows 1 into %w : memref<6xf32>, memref<1x2xf32>
  return
}

// -----

// A scalar member (the loss beside the global norm's sums in one
// all-reduce) is a row of one element.
// CHECK-LABEL: func.func @bucket_scalar
// CHECK: %[[M:.*]] = memref.expand_shape %arg0 [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK-NEXT: %[[V:.*]] = memref.subview %arg1[2] [1] [1]
// CHECK-NEXT: memref.copy %[[M]], %[[V]]
// CHECK: %[[R:.*]] = memref.expand_shape %arg2 [] output_shape [1] : memref<f32> into memref<1xf32>
// CHECK: memref.copy %{{.*}}, %[[R]]
func.func @bucket_scalar(%loss: memref<f32>, %stage: memref<3xf32>, %out: memref<f32>) {
  zero.bucket_pack %loss into %stage[2] rows 1 : memref<f32>, memref<3xf32>
  zero.bucket_unpack %stage[2] rows 1 into %out : memref<3xf32>, memref<f32>
  return
}

// -----

// 16-bit floats travel with their own codes (ZERO_RT_BF16 = 3, F16 = 2).
// CHECK-LABEL: func.func @bf16
// CHECK: %[[T:.*]] = arith.constant 3 : i32
// CHECK: call @zero_rt_comm_start(%{{.*}}, %[[T]],
// CHECK-LABEL: func.func @f16
// CHECK: %[[T:.*]] = arith.constant 2 : i32
// CHECK: call @zero_rt_comm_start(%{{.*}}, %[[T]],
func.func @bf16(%g: memref<4xbf16>) {
  %r = zero.all_reduce_start %g into %g {world_size = 2 : i64} : memref<4xbf16>, memref<4xbf16>
  zero.wait %r
  return
}
func.func @f16(%g: memref<4xf16>) {
  %r = zero.all_reduce_start %g into %g {world_size = 2 : i64} : memref<4xf16>, memref<4xf16>
  zero.wait %r
  return
}

// -----

// Other element types have no code.
func.func @f8(%g: memref<4xf8E4M3FN>) {
  // expected-error @+1 {{the runtime's collectives carry f32, f64, bf16 or f16 data, not 'f8E4M3FN'}}
  %r = zero.all_reduce_start %g into %g {world_size = 2 : i64} : memref<4xf8E4M3FN>, memref<4xf8E4M3FN>
  zero.wait %r
  return
}
