// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-verify-collectives | FileCheck %s

// A condition on the all-reduced loss is the same on every rank.
// CHECK-LABEL: func.func @uniform
func.func @uniform(%x: tensor<4xf32> {zero.role = #zero.role<input>}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %s = zero.all_reduce %x into %e {world_size = 2 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %c0 = arith.constant 0 : index
  %v = tensor.extract %s[%c0] : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %c = arith.cmpf ogt, %v, %zero : f32
  %r = scf.if %c -> tensor<4xf32> {
    %e2 = tensor.empty() : tensor<4xf32>
    %t = zero.all_reduce %s into %e2 {world_size = 2 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  } else {
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Only rank 0 would reach the all-reduce: the others would wait forever.
func.func @rank_condition(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = zero.rank
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{rank-dependent value defined here}}
  %c = arith.cmpi eq, %r, %c0 : index
  %y = scf.if %c -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    // expected-error @+1 {{'zero.all_reduce' may run on some ranks and not others: the condition of the enclosing 'scf.if' depends on the rank or on the rank's own data}}
    %t = zero.all_reduce %x into %e {world_size = 2 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// A loop whose trip count comes from the rank's own batch: ranks would
// issue different numbers of gathers.
func.func @data_trip_count(%n: tensor<1xi64> {zero.role = #zero.role<input>},
                           %w: tensor<2xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = tensor.extract %n[%c0] : tensor<1xi64>
  // expected-note @+1 {{rank-dependent value defined here}}
  %ub = arith.index_cast %v : i64 to index
  %init = tensor.empty() : tensor<4xf32>
  %r = scf.for %i = %c0 to %ub step %c1 iter_args(%a = %init) -> tensor<4xf32> {
    // expected-error @+1 {{the trip count of the enclosing 'scf.for' depends on the rank}}
    %g = zero.all_gather %w into %a {world_size = 2 : i64} : tensor<2xf32>, tensor<4xf32> -> tensor<4xf32>
    scf.yield %g : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A shard differs between ranks; deciding on it is deciding per rank.
func.func @shard_condition(%w: tensor<2xf32> {zero.shard = {numel = 4 : i64, shape = array<i64: 4>, shard = 2 : i64}}) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %w[%c0] : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  // expected-note @+1 {{rank-dependent value defined here}}
  %c = arith.cmpf ogt, %v, %zero : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = scf.if %c -> tensor<4xf32> {
    // expected-error @+1 {{may run on some ranks and not others}}
    %g = zero.all_gather %w into %e {world_size = 2 : i64} : tensor<2xf32>, tensor<4xf32> -> tensor<4xf32>
    scf.yield %g : tensor<4xf32>
  } else {
    scf.yield %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// After the schedule, a started collective is communication too: under a
// condition on the rank, rank 0 alone would start it. Its wait is the same
// divergence and is not reported again.
func.func @started_under_rank(%s: memref<2xf32>, %g: memref<4xf32>) {
  %r = zero.rank
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{rank-dependent value defined here}}
  %c = arith.cmpi eq, %r, %c0 : index
  scf.if %c {
    // expected-error @+1 {{'zero.all_gather_start' may run on some ranks and not others: the condition of the enclosing 'scf.if'}}
    %q = zero.all_gather_start %s into %g {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
    zero.wait %q
  }
  return
}

// -----

// A wait that only some ranks reach leaves the others' collective without
// its partner's completion.
func.func @wait_under_rank(%s: memref<2xf32>, %g: memref<4xf32>) {
  %q = zero.all_gather_start %s into %g {world_size = 2 : i64} : memref<2xf32>, memref<4xf32>
  %r = zero.rank
  %c0 = arith.constant 0 : index
  // expected-note @+1 {{rank-dependent value defined here}}
  %c = arith.cmpi eq, %r, %c0 : index
  scf.if %c {
    // expected-error @+1 {{'zero.wait' may run on some ranks and not others}}
    zero.wait %q
  }
  return
}

// -----

// Started and completed on every rank, and again under a condition that
// no rank-dependent value feeds: accepted.
// CHECK-LABEL: func.func @started_uniform
func.func @started_uniform(%x: memref<4xf32>, %y: memref<4xf32>) {
  %q = zero.all_reduce_start %x into %y {world_size = 2 : i64} : memref<4xf32>, memref<4xf32>
  zero.wait %q
  %c0 = arith.constant 0 : index
  %v = memref.load %y[%c0] : memref<4xf32>
  %zero = arith.constant 0.0 : f32
  %c = arith.cmpf ogt, %v, %zero : f32
  scf.if %c {
    %q2 = zero.all_reduce_start %x into %y {world_size = 2 : i64} : memref<4xf32>, memref<4xf32>
    zero.wait %q2
  }
  return
}
