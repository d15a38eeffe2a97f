// RUN: zero-opt %s --zero-build-train-step | FileCheck %s --check-prefix=ADAMW
// RUN: zero-opt %s --zero-build-train-step="optimizer=sgd momentum=0.9 nesterov=true accumulation=2 clip=0.5" | FileCheck %s --check-prefix=SGD
// RUN: zero-opt %s --zero-build-train-step="optimizer=adagrad initial-accumulator=0.1" | FileCheck %s --check-prefix=ADAGRAD
// RUN: not zero-opt %s --zero-build-train-step="optimizer=lion" 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: not zero-opt %s --zero-build-train-step="loss=logits" 2>&1 | FileCheck %s --check-prefix=BADLOSS

func.func @main(%x: tensor<4x3xf32> {zero.name = "x", zero.role = #zero.role<input>},
                %w: tensor<3x2xf32> {zero.name = "w", zero.role = #zero.role<parameter>},
                %m: tensor<1x2xf32> {zero.name = "mask"})
    -> (tensor<f32> {zero.name = "loss"}, tensor<4x2xf32> {zero.name = "logits"})
    attributes {zero.entry} {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %sh1 = tosa.const_shape {values = dense<[1, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sh2 = tosa.const_shape {values = dense<[1, 3, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %sh3 = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %sh0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %x3 = tosa.reshape %x, %sh1 : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
  %w3 = tosa.reshape %w, %sh2 : (tensor<3x2xf32>, !tosa.shape<3>) -> tensor<1x3x2xf32>
  %y3 = tosa.matmul %x3, %w3, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %y = tosa.reshape %y3, %sh3 : (tensor<1x4x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  %ym = tosa.mul %y, %m, %s : (tensor<4x2xf32>, tensor<1x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %r0 = tosa.reduce_sum %ym {axis = 0 : i32} : (tensor<4x2xf32>) -> tensor<1x2xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 1 : i32} : (tensor<1x2xf32>) -> tensor<1x1xf32>
  %l = tosa.reshape %r1, %sh0 : (tensor<1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %l, %y : tensor<f32>, tensor<4x2xf32>
}

// The gradient function differentiates the loss with respect to the
// parameters only. Arguments without a role (the mask) are treated as
// inputs, which come first in the step.
// ADAMW: func.func private @main_grad(
// ADAMW: %[[G:.*]] = zero.gradient %{{.*}} wrt %arg1 : tensor<f32>, (tensor<3x2xf32>) -> tensor<3x2xf32>
// ADAMW: func.func @train_step(
// ADAMW-SAME: %[[X:[a-z0-9]+]]: tensor<4x3xf32> {zero.name = "x", zero.role = #zero.role<input>}
// ADAMW-SAME: %[[MASK:[a-z0-9]+]]: tensor<1x2xf32> {zero.name = "mask", zero.role = #zero.role<input>}
// ADAMW-SAME: %[[W:[a-z0-9]+]]: tensor<3x2xf32> {zero.name = "w", zero.role = #zero.role<parameter>}
// ADAMW-SAME: %[[M:[a-z0-9]+]]: tensor<3x2xf32> {zero.init = 0.000000e+00 : f64, zero.name = "w/exp_avg", zero.role = #zero.role<optimizer_state>, zero.state_of = "w"}
// ADAMW-SAME: %[[V:[a-z0-9]+]]: tensor<3x2xf32> {zero.init = 0.000000e+00 : f64, zero.name = "w/exp_avg_sq", zero.role = #zero.role<optimizer_state>, zero.state_of = "w"}
// ADAMW-SAME: %[[LR:[a-z0-9]+]]: tensor<f64> {zero.name = "lr", zero.role = #zero.role<hyperparameter>}
// ADAMW-SAME: %[[STEP:[a-z0-9]+]]: tensor<f64> {zero.name = "step", zero.role = #zero.role<hyperparameter>}
// ADAMW-SAME: -> (tensor<f32> {zero.name = "loss", zero.role = #zero.role<loss>}, tensor<f32> {zero.name = "grad_norm", zero.role = #zero.role<metric>}, tensor<3x2xf32> {zero.updates = 2 : i64}, tensor<3x2xf32> {zero.updates = 3 : i64}, tensor<3x2xf32> {zero.updates = 4 : i64})
// ADAMW-SAME: attributes {zero.entry}
// ADAMW: %[[R:.*]]:2 = call @main_grad(%[[X]], %[[W]], %[[MASK]])
// ADAMW: %[[NORM:.*]], %[[GC:.*]] = zero.clip_grad_norm %[[R]]#1 {max_norm = 0.000000e+00 : f64} : (tensor<3x2xf32>) -> (tensor<f32>, tensor<3x2xf32>)
// ADAMW: %[[P:.*]], %[[M1:.*]], %[[V1:.*]] = zero.adam %[[W]], %[[GC]], %[[M]], %[[V]], %[[LR]], %[[STEP]] {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, decoupled, eps = 1.000000e-08 : f64, weight_decay = 0.000000e+00 : f64} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<f64>, tensor<f64>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>)
// ADAMW: return %{{.*}}, %[[NORM]], %[[P]], %[[M1]], %[[V1]]

// Two micro-batches of 4 rows each: inputs double their batch dimension,
// gradients accumulate in the loop and are averaged; clipping scales them.
// SGD: func.func @train_step(%[[X:[a-z0-9]+]]: tensor<8x3xf32>
// SGD-SAME: %{{[a-z0-9]+}}: tensor<2x2xf32> {zero.name = "mask"
// SGD-SAME: {{.*}}zero.name = "w/momentum_buffer"
// SGD: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(
// SGD: tensor.extract_slice %[[X]][%{{.*}}, 0] [4, 3] [1, 1]
// SGD: call @main_grad
// SGD: linalg.add
// SGD: bufferization.materialize_in_destination
// SGD: zero.clip_grad_norm %{{.*}} {max_norm = 5.000000e-01 : f64}
// SGD: zero.sgd %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, states %{{.*}} {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov, weight_decay = 0.000000e+00 : f64}

// ADAGRAD: zero.init = 1.000000e-01 : f64, zero.name = "w/sum"
// ADAGRAD: zero.adagrad

// BADOPT: for the --optimizer option: Cannot find option named 'lion'!
// BADLOSS: error: --loss names 'logits', which is not a floating-point scalar ('tensor<4x2xf32>')
