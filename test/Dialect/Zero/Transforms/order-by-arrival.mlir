// RUN: zero-opt %s --split-input-file --zero-order-by-arrival | FileCheck %s

// The step's updates in the order their gradients are ready: p2's first,
// then p1's (an embedding, whose gradient the backward completes last). A
// value computed from arguments alone joins its first user there.
// CHECK-LABEL: func.func @parameter_order
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[P1:.*]]: tensor<4xf32>, %[[P2:.*]]: tensor<4xf32>, %[[LR:.*]]: tensor<4xf32>)
// CHECK: %[[G2:.*]] = tosa.exp %[[X]]
// CHECK: %[[G1:.*]] = tosa.exp %[[G2]]
// CHECK-NEXT: %[[S:.*]] = tosa.add %[[LR]], %[[LR]]
// CHECK-NEXT: %[[D2:.*]] = tosa.sub %[[G2]], %[[S]]
// CHECK-NEXT: %[[U2:.*]] = tosa.sub %[[P2]], %[[D2]]
// CHECK-NEXT: %[[D1:.*]] = tosa.sub %[[G1]], %[[S]]
// CHECK-NEXT: %[[U1:.*]] = tosa.sub %[[P1]], %[[D1]]
// CHECK-NEXT: return %[[U1]], %[[U2]]
func.func @parameter_order(%x: tensor<4xf32>, %p1: tensor<4xf32>, %p2: tensor<4xf32>, %lr: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %g2 = tosa.exp %x {zero.backward} : (tensor<4xf32>) -> tensor<4xf32>
  %g1 = tosa.exp %g2 {zero.backward} : (tensor<4xf32>) -> tensor<4xf32>
  %s = tosa.add %lr, %lr : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d1 = tosa.sub %g1, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u1 = tosa.sub %p1, %d1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d2 = tosa.sub %g2, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u2 = tosa.sub %p2, %d2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %u1, %u2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Collectives of the step itself (stage 0's all-reduces) start first, in
// the order their gradients are ready, each with its destination; what
// reads their results follows, in the order the collectives complete.
// CHECK-LABEL: func.func @collectives_first
// CHECK: %[[G2:.*]] = tosa.exp
// CHECK: %[[G1:.*]] = tosa.exp %[[G2]]
// CHECK-NEXT: %[[E2:.*]] = tensor.empty()
// CHECK-NEXT: %[[R2:.*]] = zero.all_reduce %[[G2]] into %[[E2]]
// CHECK-NEXT: %[[E1:.*]] = tensor.empty()
// CHECK-NEXT: %[[R1:.*]] = zero.all_reduce %[[G1]] into %[[E1]]
// CHECK-NEXT: %[[U2:.*]] = tosa.sub %{{.*}}, %[[R2]]
// CHECK-NEXT: %[[U1:.*]] = tosa.sub %{{.*}}, %[[R1]]
// CHECK-NEXT: return %[[U1]], %[[U2]]
func.func @collectives_first(%x: tensor<4xf32>, %p1: tensor<4xf32>, %p2: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %g2 = tosa.exp %x {zero.backward} : (tensor<4xf32>) -> tensor<4xf32>
  %g1 = tosa.exp %g2 {zero.backward} : (tensor<4xf32>) -> tensor<4xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %r1 = zero.all_reduce %g1 into %e1 {world_size = 2 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %u1 = tosa.sub %p1, %r1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %r2 = zero.all_reduce %g2 into %e2 {world_size = 2 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %u2 = tosa.sub %p2, %r2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %u1, %u2 : tensor<4xf32>, tensor<4xf32>
}

// -----

// The ops that touch an argument the step writes (here through a view)
// keep their order: the write with the early gradient stays after the
// read with the late one, and an independent op still moves ahead.
// CHECK-LABEL: func.func @argument_order
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[S:.*]]: tensor<2x2xf32>, %[[P:.*]]: tensor<4xf32>)
// CHECK: %[[G2:.*]] = tosa.exp %[[X]]
// CHECK: %[[G1:.*]] = tosa.exp %[[G2]]
// CHECK-NEXT: %[[U:.*]] = tosa.sub %[[P]], %[[G2]]
// CHECK-NEXT: tosa.const_shape
// CHECK-NEXT: %[[V:.*]] = tosa.reshape %[[S]]
// CHECK-NEXT: %[[A:.*]] = tosa.add %[[V]], %[[G1]]
// CHECK-NEXT: tosa.const_shape
// CHECK-NEXT: %[[F:.*]] = tosa.reshape %[[G2]]
// CHECK-NEXT: %[[W:.*]] = bufferization.materialize_in_destination %[[F]] in %[[S]]
// CHECK-NEXT: return %[[A]], %[[W]], %[[U]]
func.func @argument_order(%x: tensor<4xf32>, %s: tensor<2x2xf32>, %p: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>) {
  %g2 = tosa.exp %x {zero.backward} : (tensor<4xf32>) -> tensor<4xf32>
  %g1 = tosa.exp %g2 {zero.backward} : (tensor<4xf32>) -> tensor<4xf32>
  %shape = tosa.const_shape {values = dense<4> : tensor<1xindex>} : () -> !tosa.shape<1>
  %v = tosa.reshape %s, %shape : (tensor<2x2xf32>, !tosa.shape<1>) -> tensor<4xf32>
  %a = tosa.add %v, %g1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %shape2 = tosa.const_shape {values = dense<2> : tensor<2xindex>} : () -> !tosa.shape<2>
  %f = tosa.reshape %g2, %shape2 : (tensor<4xf32>, !tosa.shape<2>) -> tensor<2x2xf32>
  %w = bufferization.materialize_in_destination %f in %s : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %u = tosa.sub %p, %g2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a, %w, %u : tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>
}

// -----

// Left as they are: a step holding an op with other memory effects (a
// call), and a function without a backward.
// CHECK-LABEL: func.func @other_effects
// CHECK: %[[U1:.*]] = tosa.sub
// CHECK-NEXT: call @log(%[[U1]])
// CHECK-NEXT: tosa.sub
func.func private @log(tensor<4xf32>)
func.func @other_effects(%x: tensor<4xf32>, %p1: tensor<4xf32>, %p2: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %g2 = tosa.exp %x {zero.backward} : (tensor<4xf32>) -> tensor<4xf32>
  %g1 = tosa.exp %g2 {zero.backward} : (tensor<4xf32>) -> tensor<4xf32>
  %u1 = tosa.sub %p1, %g1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  call @log(%u1) : (tensor<4xf32>) -> ()
  %u2 = tosa.sub %p2, %g2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %u1, %u2 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @no_backward
// CHECK: %[[G2:.*]] = tosa.exp
// CHECK-NEXT: %[[G1:.*]] = tosa.exp %[[G2]]
// CHECK-NEXT: tosa.sub %{{.*}}, %[[G1]]
// CHECK-NEXT: tosa.sub %{{.*}}, %[[G2]]
func.func @no_backward(%x: tensor<4xf32>, %p1: tensor<4xf32>, %p2: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %g2 = tosa.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %g1 = tosa.exp %g2 : (tensor<4xf32>) -> tensor<4xf32>
  %u1 = tosa.sub %p1, %g1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u2 = tosa.sub %p2, %g2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %u1, %u2 : tensor<4xf32>, tensor<4xf32>
}
