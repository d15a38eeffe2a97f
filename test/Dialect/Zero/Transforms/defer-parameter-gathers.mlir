// RUN: zero-opt %s --split-input-file --zero-defer-parameter-gathers | FileCheck %s

// A bf16 parameter whose update writes the copy of its sharded master: the
// gather moves to the start, from the master's shards rounded, into the
// parameter, which the step then reads; the update's copy is left unread
// and the step returns the parameter as it used it.
// CHECK-LABEL: func.func @deferred
// CHECK-NEXT: %[[R:.*]] = tosa.cast %arg2 : (tensor<2xf32>) -> tensor<2xbf16>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4xbf16>
// CHECK-NEXT: %[[G:.*]] = zero.all_gather %[[R]] into %[[E]] {world_size = 2 : i64, zero.param_gather}
// CHECK-NEXT: %[[P:.*]] = bufferization.materialize_in_destination %[[G]] in %arg1
// CHECK-NEXT: %[[Y:.*]] = tosa.add %arg0, %[[P]]
// CHECK: tensor.extract_slice %[[P]]
// CHECK: %{{.*}}, %[[M:.*]] = zero.sgd
// CHECK-NOT: zero.all_gather
// CHECK-NOT: materialize_in_destination
// CHECK: return %[[Y]], %[[P]], %[[M]]
func.func @deferred(%x: tensor<4xbf16>, %p: tensor<4xbf16>, %m: tensor<2xf32>, %lr: tensor<f64>, %step: tensor<f64>) -> (tensor<4xbf16>, tensor<4xbf16>, tensor<2xf32>) attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  %y = tosa.add %x, %p : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %r = zero.rank
  %c2 = arith.constant 2 : index
  %off = arith.muli %r, %c2 : index
  %ps = tensor.extract_slice %p[%off] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %gs = tensor.extract_slice %y[%off] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %np, %nm = zero.sgd %ps, %gs, %lr, %step, states %m {dampening = 0.0 : f64, master, momentum = 0.0 : f64, weight_decay = 0.0 : f64} : (tensor<2xbf16>, tensor<2xbf16>, tensor<f64>, tensor<f64>, tensor<2xf32>) -> (tensor<2xbf16>, tensor<2xf32>)
  %e = tensor.empty() : tensor<4xbf16>
  %gp = zero.all_gather %np into %e {world_size = 2 : i64, zero.param_gather} : tensor<2xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %w = bufferization.materialize_in_destination %gp in %p : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %y, %w, %nm : tensor<4xbf16>, tensor<4xbf16>, tensor<2xf32>
}

// -----

// Gathered in the order the step first reads the parameters (%q first),
// at stage 2 as at stage 1.
// CHECK-LABEL: func.func @first_use_order
// CHECK-NEXT: tosa.cast %arg4
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: zero.all_gather
// CHECK-NEXT: %[[Q:.*]] = bufferization.materialize_in_destination %{{.*}} in %arg2
// CHECK-NEXT: tosa.cast %arg3
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: zero.all_gather
// CHECK-NEXT: %[[P:.*]] = bufferization.materialize_in_destination %{{.*}} in %arg1
// CHECK-NEXT: tosa.add %arg0, %[[Q]]
// CHECK-COUNT-2: zero.sgd
// CHECK-NOT: zero.all_gather
// CHECK: return
func.func @first_use_order(%x: tensor<4xbf16>, %p: tensor<4xbf16>, %q: tensor<4xbf16>, %m: tensor<2xf32>, %n: tensor<2xf32>, %lr: tensor<f64>, %step: tensor<f64>) -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<2xf32>, tensor<2xf32>) attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  %y = tosa.add %x, %q : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %y2 = tosa.add %y, %p : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %r = zero.rank
  %c2 = arith.constant 2 : index
  %off = arith.muli %r, %c2 : index
  %ps = tensor.extract_slice %p[%off] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %qs = tensor.extract_slice %q[%off] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %gs = tensor.extract_slice %y2[%off] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %np, %nm = zero.sgd %ps, %gs, %lr, %step, states %m {dampening = 0.0 : f64, master, momentum = 0.0 : f64, weight_decay = 0.0 : f64} : (tensor<2xbf16>, tensor<2xbf16>, tensor<f64>, tensor<f64>, tensor<2xf32>) -> (tensor<2xbf16>, tensor<2xf32>)
  %nq, %nn = zero.sgd %qs, %gs, %lr, %step, states %n {dampening = 0.0 : f64, master, momentum = 0.0 : f64, weight_decay = 0.0 : f64} : (tensor<2xbf16>, tensor<2xbf16>, tensor<f64>, tensor<f64>, tensor<2xf32>) -> (tensor<2xbf16>, tensor<2xf32>)
  %e = tensor.empty() : tensor<4xbf16>
  %gp = zero.all_gather %np into %e {world_size = 2 : i64, zero.param_gather} : tensor<2xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %e2 = tensor.empty() : tensor<4xbf16>
  %gq = zero.all_gather %nq into %e2 {world_size = 2 : i64, zero.param_gather} : tensor<2xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %w = bufferization.materialize_in_destination %gp in %p : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %v = bufferization.materialize_in_destination %gq in %q : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %y2, %w, %v, %nm, %nn : tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<2xf32>, tensor<2xf32>
}

// -----

// fp32 (no master weight): the parameter has no other copy to gather from;
// its gather stays after the update.
// CHECK-LABEL: func.func @no_master
// CHECK: zero.sgd
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: zero.all_gather
// CHECK-NEXT: bufferization.materialize_in_destination
func.func @no_master(%x: tensor<4xf32>, %p: tensor<4xf32>, %buf: tensor<2xf32>, %lr: tensor<f64>, %step: tensor<f64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  %y = tosa.add %x, %p : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = zero.rank
  %c2 = arith.constant 2 : index
  %off = arith.muli %r, %c2 : index
  %ps = tensor.extract_slice %p[%off] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %gs = tensor.extract_slice %y[%off] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %np, %nb = zero.sgd %ps, %gs, %lr, %step, states %buf {dampening = 0.0 : f64, momentum = 0.9 : f64, weight_decay = 0.0 : f64} : (tensor<2xf32>, tensor<2xf32>, tensor<f64>, tensor<f64>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  %e = tensor.empty() : tensor<4xf32>
  %gp = zero.all_gather %np into %e {world_size = 2 : i64, zero.param_gather} : tensor<2xf32>, tensor<4xf32> -> tensor<4xf32>
  %w = bufferization.materialize_in_destination %gp in %p : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y, %w, %nb : tensor<4xf32>, tensor<4xf32>, tensor<2xf32>
}

// -----

// Stage 3 (sharded parameters: their gathers are the partition's).
// CHECK-LABEL: func.func @stage3
// CHECK: zero.sgd
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: zero.all_gather
func.func @stage3(%x: tensor<4xbf16>, %p: tensor<4xbf16>, %m: tensor<2xf32>, %lr: tensor<f64>, %step: tensor<f64>) -> (tensor<4xbf16>, tensor<4xbf16>, tensor<2xf32>) attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  %y = tosa.add %x, %p : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %r = zero.rank
  %c2 = arith.constant 2 : index
  %off = arith.muli %r, %c2 : index
  %ps = tensor.extract_slice %p[%off] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %gs = tensor.extract_slice %y[%off] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %np, %nm = zero.sgd %ps, %gs, %lr, %step, states %m {dampening = 0.0 : f64, master, momentum = 0.0 : f64, weight_decay = 0.0 : f64} : (tensor<2xbf16>, tensor<2xbf16>, tensor<f64>, tensor<f64>, tensor<2xf32>) -> (tensor<2xbf16>, tensor<2xf32>)
  %e = tensor.empty() : tensor<4xbf16>
  %gp = zero.all_gather %np into %e {world_size = 2 : i64, zero.param_gather} : tensor<2xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %w = bufferization.materialize_in_destination %gp in %p : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %y, %w, %nm : tensor<4xbf16>, tensor<4xbf16>, tensor<2xf32>
}

// -----

// The updated parameter read after its gather within the step: kept.
// CHECK-LABEL: func.func @read_after_update
// CHECK: zero.sgd
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: zero.all_gather
func.func @read_after_update(%x: tensor<4xbf16>, %p: tensor<4xbf16>, %m: tensor<2xf32>, %lr: tensor<f64>, %step: tensor<f64>) -> (tensor<4xbf16>, tensor<4xbf16>, tensor<2xf32>) attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  %y = tosa.add %x, %p : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %r = zero.rank
  %c2 = arith.constant 2 : index
  %off = arith.muli %r, %c2 : index
  %ps = tensor.extract_slice %p[%off] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %gs = tensor.extract_slice %y[%off] [2] [1] : tensor<4xbf16> to tensor<2xbf16>
  %np, %nm = zero.sgd %ps, %gs, %lr, %step, states %m {dampening = 0.0 : f64, master, momentum = 0.0 : f64, weight_decay = 0.0 : f64} : (tensor<2xbf16>, tensor<2xbf16>, tensor<f64>, tensor<f64>, tensor<2xf32>) -> (tensor<2xbf16>, tensor<2xf32>)
  %e = tensor.empty() : tensor<4xbf16>
  %gp = zero.all_gather %np into %e {world_size = 2 : i64, zero.param_gather} : tensor<2xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  %w = bufferization.materialize_in_destination %gp in %p : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %z = tosa.add %gp, %gp : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %z, %w, %nm : tensor<4xbf16>, tensor<4xbf16>, tensor<2xf32>
}
