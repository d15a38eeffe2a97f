// RUN: zero-opt %s --split-input-file --zero-lower-optimizers | FileCheck %s

// AdamW as one elementwise kernel writing the parameter and both moments
// into their own tensors (so bufferization updates them in place); the
// bias corrections are computed once, in f64, from the step count.
// CHECK-LABEL: func.func @adamw
// CHECK-SAME: (%[[P:.*]]: tensor<8xf32>, %[[G:.*]]: tensor<8xf32>, %[[M:.*]]: tensor<8xf32>, %[[V:.*]]: tensor<8xf32>, %[[LR:.*]]: tensor<f64>, %[[T:.*]]: tensor<f64>)
// CHECK-DAG: %[[T0:.*]] = tensor.extract %[[T]][] : tensor<f64>
// CHECK-DAG: math.powf %{{.*}}, %[[T0]] : f64
// CHECK: %[[R:.*]]:3 = linalg.generic
// CHECK-SAME: ins(%[[G]] : tensor<8xf32>) outs(%[[P]], %[[M]], %[[V]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: arith.mulf
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: linalg.yield
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @adamw(%p: tensor<8xf32>, %g: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %lr: tensor<f64>, %t: tensor<f64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %a, %b, %c = zero.adam %p, %g, %m, %v, %lr, %t {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01, decoupled} : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f64>, tensor<f64>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %a, %b, %c : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// SGD with momentum: at step 1 the buffer becomes the gradient itself.
// CHECK-LABEL: func.func @sgd
// CHECK: %[[FIRST:.*]] = arith.cmpf ole, %{{.*}}, %{{.*}} : f64
// CHECK: linalg.generic
// CHECK: arith.select %[[FIRST]]
func.func @sgd(%p: tensor<2x3xf32>, %g: tensor<2x3xf32>, %b: tensor<2x3xf32>, %lr: tensor<f64>, %t: tensor<f64>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %a, %nb = zero.sgd %p, %g, %lr, %t, states %b {momentum = 0.9, dampening = 0.0, weight_decay = 0.0} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f64>, tensor<f64>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %a, %nb : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @adagrad
// CHECK: linalg.generic
// CHECK-SAME: outs(%arg0, %arg2 : tensor<4xf32>, tensor<4xf32>)
func.func @adagrad(%p: tensor<4xf32>, %g: tensor<4xf32>, %s: tensor<4xf32>, %lr: tensor<f64>, %t: tensor<f64>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a, %b = zero.adagrad %p, %g, %s, %lr, %t {lr_decay = 0.0, eps = 1.0e-10, weight_decay = 0.0} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f64>, tensor<f64>) -> (tensor<4xf32>, tensor<4xf32>)
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}
