// RUN: zero-opt %s --verify-diagnostics -o /dev/null

// expected-error @+2 {{expected ::mlir::zero::Role to be one of: input, parameter, gradient, optimizer_state, master_weight, output}}
// expected-error @+1 {{failed to parse Zero_RoleAttr parameter 'value'}}
func.func private @bad(%w: tensor<4xf32> {zero.role = #zero.role<weights>})
