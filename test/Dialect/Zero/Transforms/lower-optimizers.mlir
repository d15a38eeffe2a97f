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

// -----

// fp16 loss scaling: the widened gradient is multiplied by grad_scale, and
// where grad_scale is not finite every output keeps its old value (the
// parameter copy, the master and both moments).
// CHECK-LABEL: func.func @adam_grad_scale
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<8xf16>, %[[G:[a-z0-9]+]]: tensor<8xf16>, %[[M:[a-z0-9]+]]: tensor<8xf32>, %[[V:[a-z0-9]+]]: tensor<8xf32>, %[[W:[a-z0-9]+]]: tensor<8xf32>, %{{.*}}: tensor<f64>, %{{.*}}: tensor<f64>, %[[GS:[a-z0-9]+]]: tensor<f32>
// CHECK: %[[S:.*]] = tensor.extract %[[GS]][] : tensor<f32>
// CHECK: %[[A:.*]] = math.absf %[[S]] : f32
// CHECK: %[[KEEP:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : f32
// CHECK: linalg.generic {{.*}} ins(%[[G]] : tensor<8xf16>) outs(%[[W]], %[[M]], %[[V]], %[[P]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf16>)
// CHECK-NEXT: ^bb0(%[[GI:.*]]: f16, %[[WI:.*]]: f32, %[[MI:.*]]: f32, %[[VI:.*]]: f32, %[[PI:.*]]: f16):
// CHECK: %[[GW:.*]] = arith.extf %[[GI]] : f16 to f32
// CHECK: %[[GU:.*]] = arith.mulf %[[GW]], %[[S]] : f32
// CHECK: %[[PN:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[W2:.*]] = arith.select %[[KEEP]], %{{.*}}, %[[WI]] : f32
// CHECK: %[[M2:.*]] = arith.select %[[KEEP]], %{{.*}}, %[[MI]] : f32
// CHECK: %[[V2:.*]] = arith.select %[[KEEP]], %{{.*}}, %[[VI]] : f32
// CHECK: %[[P2:.*]] = arith.select %[[KEEP]], %[[PN]], %[[PI]] : f16
// CHECK: linalg.yield %[[W2]], %[[M2]], %[[V2]], %[[P2]]
func.func @adam_grad_scale(%p: tensor<8xf16>, %g: tensor<8xf16>, %m: tensor<8xf32>, %v: tensor<8xf32>, %w: tensor<8xf32>, %lr: tensor<f64>, %t: tensor<f64>, %gs: tensor<f32>) -> (tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %a, %b, %c, %d = zero.adam %p, %g, %m, %v, %lr, %t master %w grad_scale %gs {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01, decoupled} : (tensor<8xf16>, tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f64>, tensor<f64>, tensor<f32>) -> (tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %a, %b, %c, %d : tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// The 16-bit copy unread (a parameter gathered from its master's shards at
// the next step): the kernel writes the master and the moments only, and
// an overflowed step still keeps them.
// CHECK-LABEL: func.func @adam_copy_unread
// CHECK-SAME: %[[P:[a-z0-9]+]]: tensor<8xf16>, %[[G:[a-z0-9]+]]: tensor<8xf16>, %[[M:[a-z0-9]+]]: tensor<8xf32>, %[[V:[a-z0-9]+]]: tensor<8xf32>, %[[W:[a-z0-9]+]]: tensor<8xf32>
// CHECK: %[[R:.*]]:3 = linalg.generic {{.*}} ins(%[[G]] : tensor<8xf16>) outs(%[[W]], %[[M]], %[[V]] : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT: arith.truncf
// CHECK: %[[W2:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: linalg.yield %[[W2]], %{{.*}}, %{{.*}} : f32, f32, f32
// CHECK: return %[[R]]#1, %[[R]]#2, %[[R]]#0
func.func @adam_copy_unread(%p: tensor<8xf16>, %g: tensor<8xf16>, %m: tensor<8xf32>, %v: tensor<8xf32>, %w: tensor<8xf32>, %lr: tensor<f64>, %t: tensor<f64>, %gs: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %a, %b, %c, %d = zero.adam %p, %g, %m, %v, %lr, %t master %w grad_scale %gs {beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01, decoupled} : (tensor<8xf16>, tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<f64>, tensor<f64>, tensor<f32>) -> (tensor<8xf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return %b, %c, %d : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
