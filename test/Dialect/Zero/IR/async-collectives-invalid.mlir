// RUN: zero-opt %s --split-input-file --verify-diagnostics

func.func @gather_sizes(%s: memref<2xf32>, %g: memref<5xf32>) {
  // expected-error @+1 {{expects 1-D operands whose sizes differ by the world size}}
  %r = zero.all_gather_start %s into %g {world_size = 2 : i64} : memref<2xf32>, memref<5xf32>
  return
}

// -----

func.func @types(%s: memref<4xf32>, %g: memref<4xf64>) {
  // expected-error @+1 {{input and destination element types differ}}
  %r = zero.all_reduce_start %s into %g {world_size = 2 : i64} : memref<4xf32>, memref<4xf64>
  return
}

// -----

func.func @bucket_columns(%m: memref<4xf32>, %stage: memref<8xf32>) {
  // expected-error @+1 {{member columns [3, 5) exceed the staging rows of 4}}
  zero.bucket_pack %m into %stage[3] rows 2 : memref<4xf32>, memref<8xf32>
  return
}

// -----

func.func @bucket_rows(%m: memref<3xf32>, %stage: memref<8xf32>) {
  // expected-error @+1 {{expects member (3) and staging (8) sizes divisible by rows = 2}}
  zero.bucket_unpack %stage[0] rows 2 into %m : memref<8xf32>, memref<3xf32>
  return
}
