// RUN: zero-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(zero-classify-buffers))" --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s

// A stage-2 step on 2 ranks: forward, backward with the gradient scattered
// when complete, then the update of the parameter shard.

#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: zero.resident_gradients = 16 : i64
func.func @train_step(%x: tensor<4x8xf32> {zero.role = #zero.role<input>},
                      %w: tensor<8xf32> {zero.role = #zero.role<parameter>},
                      %m: tensor<4xf32> {zero.role = #zero.role<optimizer_state>})
    -> (tensor<f32>, tensor<8xf32>, tensor<4xf32>) attributes {zero.entry} {
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s1 = tosa.const_shape {values = dense<[1, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  // CHECK: tosa.reshape %arg1{{.*}}loc(fused<#zero.buffer<parameters, forward>>
  %wr = tosa.reshape %w, %s1 : (tensor<8xf32>, !tosa.shape<2>) -> tensor<1x8xf32>
  // CHECK: tosa.mul %arg0{{.*}}loc(fused<#zero.buffer<activations, forward>>
  %y = tosa.mul %x, %wr, %z : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  // CHECK: tosa.reduce_sum{{.*}}axis = 0{{.*}}loc(fused<#zero.buffer<activations, forward>>
  %l0 = tosa.reduce_sum %y {axis = 0 : i32} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  // CHECK: tosa.reduce_sum{{.*}}axis = 1{{.*}}loc(fused<#zero.buffer<activations, forward>>
  %l1 = tosa.reduce_sum %l0 {axis = 1 : i32} : (tensor<1x8xf32>) -> tensor<1x1xf32>
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %loss = tosa.reshape %l1, %s0 : (tensor<1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  // The gradient of w is the column sum of x.
  // CHECK: tosa.reduce_sum %arg0{{.*}}zero.backward{{.*}}loc(fused<#zero.buffer<gradients, backward>>
  %g0 = tosa.reduce_sum %x {axis = 0 : i32, zero.backward} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %s8 = tosa.const_shape {values = dense<8> : tensor<1xindex>} : () -> !tosa.shape<1>
  // CHECK: tosa.reshape{{.*}}zero.backward{{.*}}loc(fused<#zero.buffer<gradients, backward>>
  %g = tosa.reshape %g0, %s8 {zero.backward} : (tensor<1x8xf32>, !tosa.shape<1>) -> tensor<8xf32>
  // CHECK: tensor.empty(){{.*}}loc(fused<#zero.buffer<gradients, backward>>
  %e = tensor.empty() : tensor<4xf32>
  // CHECK: zero.reduce_scatter{{.*}}loc(fused<#zero.buffer<gradients, backward>>
  %gs = zero.reduce_scatter %g into %e {world_size = 2 : i64, zero.backward, zero.grad_scatter} : tensor<8xf32>, tensor<4xf32> -> tensor<4xf32>
  %b0 = tosa.const_shape {values = dense<0> : tensor<1xindex>} : () -> !tosa.shape<1>
  %b4 = tosa.const_shape {values = dense<4> : tensor<1xindex>} : () -> !tosa.shape<1>
  // CHECK: tosa.slice %arg1{{.*}}loc(fused<#zero.buffer<parameters, optimizer>>
  %ws = tosa.slice %w, %b0, %b4 : (tensor<8xf32>, !tosa.shape<1>, !tosa.shape<1>) -> tensor<4xf32>
  // CHECK: } -> {{.*}}loc(fused<#zero.buffer<parameters, optimizer>>
  %u:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%gs : tensor<4xf32>) outs(%ws, %m : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.addf %a, %c : f32
    %q = arith.subf %b, %r : f32
    linalg.yield %q, %r : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  // CHECK: tensor.empty(){{.*}}loc(fused<#zero.buffer<parameters, optimizer>>
  %e8 = tensor.empty() : tensor<8xf32>
  // CHECK: zero.all_gather{{.*}}loc(fused<#zero.buffer<parameters, optimizer>>
  %wn = zero.all_gather %u#0 into %e8 {world_size = 2 : i64} : tensor<4xf32>, tensor<8xf32> -> tensor<8xf32>
  // CHECK: tensor.empty(){{.*}}loc(fused<#zero.buffer<buffers, optimizer>>
  %el = tensor.empty() : tensor<f32>
  // CHECK: zero.all_reduce{{.*}}loc(fused<#zero.buffer<buffers, optimizer>>
  %lr = zero.all_reduce %loss into %el {world_size = 2 : i64} : tensor<f32>, tensor<f32> -> tensor<f32>
  return %lr, %wn, %u#1 : tensor<f32>, tensor<8xf32>, tensor<4xf32>
}

// -----

// Accumulation: the loop carries the gradient; stages 0 and 1 hand the full
// gradient to the optimizer step, so it counts whole.

// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: zero.resident_gradients = 32 : i64
func.func @accumulate(%x: tensor<8xf32> {zero.role = #zero.role<input>},
                      %w: tensor<8xf32> {zero.role = #zero.role<parameter>})
    -> tensor<8xf32> attributes {zero.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %init = "tosa.const"() <{values = dense<0.0> : tensor<8xf32>}> : () -> tensor<8xf32>
  // CHECK: scf.for
  %acc = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %init) -> tensor<8xf32> {
    // CHECK: tosa.mul{{.*}}loc(fused<#zero.buffer<activations, forward>>
    %y = tosa.mul %x, %w, %z : (tensor<8xf32>, tensor<8xf32>, tensor<1xi8>) -> tensor<8xf32>
    // CHECK: tosa.exp{{.*}}loc(fused<#zero.buffer<gradients, backward>>
    %g = tosa.exp %y {zero.backward} : (tensor<8xf32>) -> tensor<8xf32>
    // CHECK: tosa.add{{.*}}loc(fused<#zero.buffer<gradients, backward>>
    %s = tosa.add %a, %g : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    scf.yield %s : tensor<8xf32>
  // CHECK: } loc(fused<#zero.buffer<gradients, forward>>
  }
  // CHECK: } -> {{.*}}loc(fused<#zero.buffer<parameters, optimizer>>
  %wn = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%acc : tensor<8xf32>) outs(%w : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %r = arith.subf %b, %a : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %wn : tensor<8xf32>
}
