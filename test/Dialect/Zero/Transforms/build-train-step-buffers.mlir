// Buffers (BatchNorm running statistics) in the training step: passed to
// the forward, never differentiated or given optimizer state, written back
// in place; carried across micro-batches. A sum over replicas becomes an
// all-reduce on N ranks (a known constant is multiplied instead) and
// disappears on one.
// RUN: zero-opt %s --zero-build-train-step | FileCheck %s
// RUN: zero-opt %s --zero-build-train-step="accumulation=2" | FileCheck %s --check-prefix=ACC
// RUN: zero-opt %s --zero-build-train-step --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=2" | FileCheck %s --check-prefix=DDP
// RUN: zero-opt %s --zero-build-train-step --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=1" | FileCheck %s --check-prefix=ONE

func.func @main(%x: tensor<4x2xf32> {zero.name = "x", zero.role = #zero.role<input>},
                %w: tensor<1x2xf32> {zero.name = "w", zero.role = #zero.role<parameter>},
                %rm: tensor<1x2xf32> {zero.name = "rm", zero.reason = "running statistic", zero.role = #zero.role<buffer>})
    -> (tensor<f32> {zero.name = "loss"},
        tensor<1x2xf32> {zero.name = "rm", zero.role = #zero.role<buffer>, zero.updates = 2 : i64})
    attributes {zero.entry} {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %xw = tosa.mul %x, %w, %s : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %sum = tosa.reduce_sum %xw {axis = 0 : i32} : (tensor<4x2xf32>) -> tensor<1x2xf32>
  %tot = zero.replica_sum %sum : tensor<1x2xf32>
  %c = "tosa.const"() <{values = dense<4.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %n = zero.replica_sum %c : tensor<1x1xf32>
  %inv = tosa.reciprocal %n : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %mean = tosa.mul %tot, %inv, %s : (tensor<1x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x2xf32>
  %d = tosa.sub %xw, %mean : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
  %sq = tosa.mul %d, %d, %s : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %r0 = tosa.reduce_sum %sq {axis = 0 : i32} : (tensor<4x2xf32>) -> tensor<1x2xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 1 : i32} : (tensor<1x2xf32>) -> tensor<1x1xf32>
  %sh0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %l = tosa.reshape %r1, %sh0 : (tensor<1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  %upd = tosa.add %rm, %mean : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %wr = bufferization.materialize_in_destination %upd in %rm : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  return %l, %wr : tensor<f32>, tensor<1x2xf32>
}

// The gradient function returns the updated buffer as a value.
// CHECK-LABEL: func.func private @main_grad(
// CHECK: %[[UPD:.*]] = tosa.add %arg2, %{{.*}}
// CHECK-NOT: bufferization.materialize_in_destination
// CHECK: %[[G:.*]] = zero.gradient %{{.*}} wrt %arg1
// CHECK: return %{{.*}}, %[[G]], %[[UPD]] : tensor<f32>, tensor<1x2xf32>, tensor<1x2xf32>
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x2xf32> {zero.name = "x", zero.role = #zero.role<input>}
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<1x2xf32> {zero.name = "w", zero.role = #zero.role<parameter>}
// CHECK-NOT: rm/exp_avg
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<f64> {zero.name = "step", zero.role = #zero.role<hyperparameter>}
// CHECK-SAME: %[[RM:[a-z0-9]+]]: tensor<1x2xf32> {zero.name = "rm", zero.reason = "running statistic", zero.role = #zero.role<buffer>}
// CHECK-SAME: tensor<1x2xf32> {zero.updates = 6 : i64})
// CHECK: %[[R:.*]]:3 = call @main_grad(%[[X]], %[[W]], %[[RM]])
// CHECK: zero.clip_grad_norm %[[R]]#1 {{.*}}: (tensor<1x2xf32>)
// CHECK: %[[WR:.*]] = bufferization.materialize_in_destination %[[R]]#2 in %[[RM]]
// CHECK: return {{.*}}, %[[WR]] :

// Micro-batch j reads the statistics micro-batch j - 1 wrote.
// ACC-LABEL: func.func @train_step(
// ACC-SAME: %[[RM:[a-z0-9]+]]: tensor<1x2xf32> {zero.name = "rm"
// ACC: %[[LOOP:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[CUR:.*]] = %[[RM]])
// ACC: %[[R:.*]]:3 = func.call @main_grad(%{{.*}}, %{{.*}}, %[[CUR]])
// ACC: scf.yield %{{.*}}, %{{.*}}, %[[R]]#2
// ACC: bufferization.materialize_in_destination %[[LOOP]]#2 in %[[RM]]

// The forward's sum and its adjoint's are all-reduces of the 1x2
// statistics (before the gradient's own); the constant count is doubled
// without communication.
// DDP-LABEL: func.func @train_step(
// DDP-NOT: zero.replica_sum
// DDP: %[[C4:.*]] = "tosa.const"() <{values = dense<4.000000e+00> : tensor<1x1xf32>}>
// DDP: zero.all_reduce %{{.*}} into %{{.*}} {world_size = 2 : i64} : tensor<1x2xf32>, tensor<1x2xf32>
// DDP: %[[TWO:.*]] = "tosa.const"() <{values = dense<2.000000e+00> : tensor<1x1xf32>}>
// DDP: tosa.mul %[[C4]], %[[TWO]]
// DDP: zero.all_reduce %{{.*}} into %{{.*}} {world_size = 2 : i64} : tensor<1x2xf32>, tensor<1x2xf32>
// DDP: zero.all_reduce %{{.*}} into %{{.*}} {world_size = 2 : i64} : tensor<1x2xf32>, tensor<1x2xf32>
// DDP: zero.all_reduce %{{.*}} into %{{.*}} {world_size = 2 : i64} : tensor<f32>, tensor<f32>
// DDP-NOT: zero.all_reduce
// DDP: return

// ONE-LABEL: func.func @train_step(
// ONE-NOT: zero.replica_sum
// ONE-NOT: zero.all_reduce
// ONE: return
