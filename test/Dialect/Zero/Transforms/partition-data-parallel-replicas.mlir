// zero-partition-data-parallel lowers the replica ops of a training step
// (a function with a loss result): replica_sum to an all-reduce,
// replica_count to N, and the loss to its mean over the ranks. In a function
// that is not a step, and on one rank, they are the identity and 1.
// RUN: zero-opt %s --split-input-file --zero-partition-data-parallel="world-size=4" | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-partition-data-parallel="world-size=1" | FileCheck %s --check-prefix=ONE

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: attributes {zero.stage = 0 : i64, zero.world_size = 4 : i64}
// CHECK: %[[N:.*]] = "tosa.const"() <{values = dense<4.000000e+00> : tensor<1x1xf32>}>
// CHECK: %[[S:.*]] = zero.all_reduce %[[G:.*]] into %{{.*}} {world_size = 4 : i64} : tensor<3x2xf32>
// CHECK: %[[R:.*]] = tosa.reciprocal %[[N]]
// CHECK: %[[M:.*]] = tosa.mul %[[S]], %[[R]]
// CHECK: %[[L:.*]] = zero.all_reduce %{{.*}} into %{{.*}} {world_size = 4 : i64} : tensor<f32>
// CHECK: %[[LM:.*]] = tosa.mul %[[L]], %{{.*}}
// CHECK: return %[[LM]], %[[M]]
// ONE-LABEL: func.func @train_step(
// ONE-SAME: attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64}
// ONE: "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}>
// ONE-NOT: zero.all_reduce
// ONE-NOT: zero.replica
func.func @train_step(%l: tensor<f32>, %g: tensor<3x2xf32>)
    -> (tensor<f32> {zero.name = "loss", zero.role = #zero.role<loss>},
        tensor<3x2xf32>) {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %n = zero.replica_count : tensor<1x1xf32>
  %sum = zero.replica_sum %g : tensor<3x2xf32>
  %r = tosa.reciprocal %n : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %m = tosa.mul %sum, %r, %s : (tensor<3x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<3x2xf32>
  return %l, %m : tensor<f32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @forward(
// CHECK-NOT: zero.world_size
// CHECK: "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}>
// CHECK-NOT: zero.all_reduce
// CHECK: return %arg0
func.func @forward(%g: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<1x1xf32>) {
  %n = zero.replica_count : tensor<1x1xf32>
  %sum = zero.replica_sum %g : tensor<3x2xf32>
  return %sum, %n : tensor<3x2xf32>, tensor<1x1xf32>
}
