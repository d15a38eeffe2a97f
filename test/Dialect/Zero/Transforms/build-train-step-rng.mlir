// The counter of random draws (zero.role<rng>): the training step fills it
// with (step, zero.micro_batch_index j), which data parallelism on N ranks
// lowers to j * N + rank, and one rank to j.
// RUN: zero-opt %s --zero-build-train-step="accumulation=2" | FileCheck %s
// RUN: zero-opt %s --zero-build-train-step="accumulation=2" --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=3" | FileCheck %s --check-prefix=DDP
// RUN: zero-opt %s --zero-build-train-step="accumulation=2" --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=1" | FileCheck %s --check-prefix=ONE

func.func @main(%x: tensor<4x2xf32> {zero.name = "x", zero.role = #zero.role<input>},
                %w: tensor<1x2xf32> {zero.name = "w", zero.role = #zero.role<parameter>},
                %rng: tensor<2xi64> {zero.name = "rng", zero.role = #zero.role<rng>})
    -> (tensor<f32> {zero.name = "loss"})
    attributes {zero.entry} {
  %c1 = arith.constant 1 : index
  %mb = tensor.extract %rng[%c1] : tensor<2xi64>
  %f = arith.sitofp %mb : i64 to f32
  %t = tensor.from_elements %f : tensor<1x1xf32>
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %xw = tosa.mul %x, %w, %s : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %y = tosa.mul %xw, %t, %s : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %r0 = tosa.reduce_sum %y {axis = 0 : i32} : (tensor<4x2xf32>) -> tensor<1x2xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 1 : i32} : (tensor<1x2xf32>) -> tensor<1x1xf32>
  %sh0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %l = tosa.reshape %r1, %sh0 : (tensor<1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %l : tensor<f32>
}

// The counter is not an argument of the step: it is computed per
// micro-batch from the step number.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: zero.role<rng>
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<f64> {zero.name = "step", zero.role = #zero.role<hyperparameter>})
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// CHECK: %[[S:.*]] = tensor.extract %[[STEP]][] : tensor<f64>
// CHECK: %[[MB:.*]] = zero.micro_batch_index %[[J]]
// CHECK: %[[S64:.*]] = arith.fptosi %[[S]] : f64 to i64
// CHECK: %[[MB64:.*]] = arith.index_cast %[[MB]] : index to i64
// CHECK: %[[CTR:.*]] = tensor.from_elements %[[S64]], %[[MB64]] : tensor<2xi64>
// CHECK: func.call @main_grad(%{{.*}}, %{{.*}}, %[[CTR]])

// DDP-LABEL: func.func @train_step(
// DDP-NOT: zero.micro_batch_index
// DDP: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// DDP: %[[N:.*]] = arith.constant 3 : index
// DDP: %[[JN:.*]] = arith.muli %[[J]], %[[N]] : index
// DDP: %[[R:.*]] = zero.rank
// DDP: %[[G:.*]] = arith.addi %[[JN]], %[[R]] : index
// DDP: arith.index_cast %[[G]] : index to i64

// ONE-LABEL: func.func @train_step(
// ONE-NOT: zero.micro_batch_index
// ONE-NOT: zero.rank
// ONE: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// ONE: arith.index_cast %[[J]] : index to i64
