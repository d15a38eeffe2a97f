// RUN: zero-opt %s --split-input-file --verify-diagnostics

func.func @betas(%p: tensor<4xf32>, %lr: tensor<f64>) {
  // expected-error @+1 {{expects betas in [0, 1)}}
  %a, %b, %c = zero.adam %p, %p, %p, %p, %lr, %lr {beta1 = 1.0, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f64>, tensor<f64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @buffer(%p: tensor<4xf32>, %lr: tensor<f64>) {
  // expected-error @+1 {{takes a momentum buffer iff momentum is nonzero}}
  %a = zero.sgd %p, %p, %lr, %lr {momentum = 0.9, dampening = 0.0, weight_decay = 0.0} : (tensor<4xf32>, tensor<4xf32>, tensor<f64>, tensor<f64>) -> tensor<4xf32>
  return
}

// -----

func.func @nesterov(%p: tensor<4xf32>, %lr: tensor<f64>) {
  // expected-error @+1 {{nesterov needs momentum and zero dampening}}
  %a, %b = zero.sgd %p, %p, %lr, %lr, states %p {momentum = 0.9, dampening = 0.5, weight_decay = 0.0, nesterov} : (tensor<4xf32>, tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @gradient(%x: tensor<4xf32>) {
  // expected-error @+1 {{expects a floating-point scalar y}}
  %g = zero.gradient %x wrt %x : tensor<4xf32>, (tensor<4xf32>) -> tensor<4xf32>
  return
}
