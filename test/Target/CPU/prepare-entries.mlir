// RUN: zero-opt %s -split-input-file --zero-cpu-prepare-entries | FileCheck %s

// A step becomes private; results 0 and 2 update arguments in place
// (zero.updates), so zero.inplace_results = [0, 2]. Its C ABI entry takes one
// buffer per argument (3) plus one out-parameter per result that is not
// updated in place (result 1, the loss): 3 + 1 = 4. The entry passes
// disjoint buffers (zero.disjoint_arguments).
// CHECK-LABEL: func.func private @step(
// CHECK-SAME: -> (tensor<4xf32> {zero.updates = 0 : i64}, tensor<f32>, tensor<2xf32> {zero.updates = 2 : i64})
// CHECK-SAME: attributes {zero.abi_buffers = 4 : i64, zero.disjoint_arguments, zero.entry, zero.inplace_results = array<i64: 0, 2>}
func.func @step(%w: tensor<4xf32>, %x: tensor<4xf32>, %m: tensor<2xf32>)
    -> (tensor<4xf32> {zero.updates = 0 : i64}, tensor<f32>,
        tensor<2xf32> {zero.updates = 2 : i64}) attributes {zero.entry} {
  %l = tensor.empty() : tensor<f32>
  return %w, %l, %m : tensor<4xf32>, tensor<f32>, tensor<2xf32>
}

// -----

// Without results: nothing is in place and the entry takes only the
// arguments' buffers (2).
// CHECK-LABEL: func.func private @no_results(
// CHECK-SAME: attributes {zero.abi_buffers = 2 : i64, zero.disjoint_arguments, zero.entry, zero.inplace_results = array<i64>}
func.func @no_results(%a: tensor<4xf32>, %b: tensor<f32>) attributes {zero.entry} {
  return
}

// -----

// No argument and two plain results: both need out-parameters, 0 + 2 = 2.
// CHECK-LABEL: func.func private @outputs_only(
// CHECK-SAME: attributes {zero.abi_buffers = 2 : i64, zero.disjoint_arguments, zero.entry, zero.inplace_results = array<i64>}
func.func @outputs_only() -> (tensor<f32>, tensor<3xf32>) attributes {zero.entry} {
  %a = tensor.empty() : tensor<f32>
  %b = tensor.empty() : tensor<3xf32>
  return %a, %b : tensor<f32>, tensor<3xf32>
}

// -----

// Functions that are not steps are left alone: a public helper keeps its
// visibility and gets no attributes, and an external declaration marked
// zero.entry (it has no body to bufferize) gets none either.
// CHECK-LABEL: func.func @helper(%{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-LABEL: func.func private @declared(tensor<4xf32>) -> (tensor<4xf32> {zero.updates = 0 : i64}) attributes {zero.entry}{{$}}
func.func @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func private @declared(tensor<4xf32>) -> (tensor<4xf32> {zero.updates = 0 : i64}) attributes {zero.entry}
