// RUN: zero-opt %s | zero-opt | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK-SAME: {zero.name = "w", zero.role = #zero.role<parameter>}
// CHECK-SAME: {zero.role = #zero.role<optimizer_state>}
// CHECK-SAME: -> (tensor<f32> {zero.role = #zero.role<output>})
func.func @step(%w: tensor<4xf32> {zero.name = "w", zero.role = #zero.role<parameter>},
                %m: tensor<4xf32> {zero.role = #zero.role<optimizer_state>})
    -> (tensor<f32> {zero.role = #zero.role<output>}) {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c : tensor<f32>
}

