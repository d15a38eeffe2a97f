// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=blocks}))' --split-input-file | FileCheck %s --check-prefix=BLOCKS
// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=sqrt segments=2}))' --split-input-file | FileCheck %s --check-prefix=SQRT
// RUN: zero-opt %s --pass-pipeline='builtin.module(func.func(zero-rematerialize{policy=none}))' --split-input-file | FileCheck %s --check-prefix=NONE

// Two repeated blocks (names as PyTorch exports them). Block 1's input %b0
// is its checkpoint; the backward's reads of %a1, %b1 and %a0 are
// recomputed from the checkpoints and %w, each block right before the
// first backward op that reads it, through one barrier per block.
// BLOCKS-LABEL: func.func @two_blocks
// BLOCKS-SAME: (%[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<4xf32>)
// BLOCKS: %[[A0:.*]] = tosa.add %[[X]], %[[W]]
// BLOCKS: %[[B0:.*]] = tosa.tanh %[[A0]]
// BLOCKS: %[[A1:.*]] = tosa.add %[[B0]], %[[W]]
// BLOCKS: %[[B1:.*]] = tosa.tanh %[[A1]]
// BLOCKS: %[[IN1:.*]]:2 = zero.remat_barrier %[[B0]], %[[W]] {zero.backward}
// BLOCKS: %[[RA1:.*]] = tosa.add %[[IN1]]#0, %[[IN1]]#1 {zero.backward, zero.recompute}
// BLOCKS: %[[RB1:.*]] = tosa.tanh %[[RA1]] {zero.backward, zero.recompute}
// BLOCKS: %[[G1:.*]] = tosa.sub %[[DY]], %[[RB1]] {zero.backward}
// BLOCKS: %[[G2:.*]] = tosa.sub %[[G1]], %[[RA1]] {zero.backward}
// BLOCKS: %[[G3:.*]] = tosa.sub %[[G2]], %[[B0]] {zero.backward}
// BLOCKS: %[[IN0:.*]]:2 = zero.remat_barrier %[[X]], %[[W]] {zero.backward}
// BLOCKS: %[[RA0:.*]] = tosa.add %[[IN0]]#0, %[[IN0]]#1 {zero.backward, zero.recompute}
// BLOCKS-NOT: tosa.tanh
// BLOCKS: %[[G4:.*]] = tosa.sub %[[G3]], %[[RA0]] {zero.backward}
// BLOCKS: return %[[G4]], %[[B1]]

// Two segments of two computing ops each: the same cut here.
// SQRT-LABEL: func.func @two_blocks
// SQRT-COUNT-2: zero.remat_barrier
// SQRT-NOT: zero.remat_barrier

// NONE-LABEL: func.func @two_blocks
// NONE-NOT: zero.remat_barrier
// NONE-NOT: zero.recompute
func.func @two_blocks(%x: tensor<4xf32>, %w: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a0 = tosa.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("/blocks.0/add")
  %b0 = tosa.tanh %a0 : (tensor<4xf32>) -> tensor<4xf32> loc("/blocks.0/tanh")
  %a1 = tosa.add %b0, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("/blocks.1/add")
  %b1 = tosa.tanh %a1 : (tensor<4xf32>) -> tensor<4xf32> loc("/blocks.1/tanh")
  %g1 = tosa.sub %dy, %b1 {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g2 = tosa.sub %g1, %a1 {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g3 = tosa.sub %g2, %b0 {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g4 = tosa.sub %g3, %a0 {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g4, %b1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A name prefix with one index is no repeated block; ops outside every
// block (the head) keep their values.
// BLOCKS-LABEL: func.func @no_repeats
// BLOCKS-NOT: zero.remat_barrier
// SQRT-LABEL: func.func @no_repeats
func.func @no_repeats(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
  %a = tosa.tanh %x : (tensor<4xf32>) -> tensor<4xf32> loc("/blocks.0/tanh")
  %h = tosa.tanh %a : (tensor<4xf32>) -> tensor<4xf32> loc("/head/tanh")
  %g = tosa.sub %dy, %h {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g2 = tosa.sub %g, %a {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %g2 : tensor<4xf32>
}

// -----

// Inside a micro-batch loop, after inlining (call-site locations): the
// loop body is recomputed in itself; parameters from outside the loop go
// through the barrier too.
// BLOCKS-LABEL: func.func @in_loop
// BLOCKS: scf.for
// BLOCKS: %[[IN:.*]]:2 = zero.remat_barrier %{{.*}}, %{{.*}} {zero.backward}
// BLOCKS: tosa.tanh %{{.*}} {zero.backward, zero.recompute}
// BLOCKS: scf.yield
func.func @in_loop(%x: tensor<4xf32>, %w: tensor<4xf32>, %dy: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %dy) -> (tensor<4xf32>) {
    %a0 = tosa.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(callsite("/blocks.0/add" at "step"))
    %b0 = tosa.tanh %a0 : (tensor<4xf32>) -> tensor<4xf32> loc(callsite("/blocks.0/tanh" at "step"))
    %a1 = tosa.add %b0, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(callsite("/blocks.1/add" at "step"))
    %b1 = tosa.tanh %a1 : (tensor<4xf32>) -> tensor<4xf32> loc(callsite("/blocks.1/tanh" at "step"))
    %g1 = tosa.sub %acc, %b1 {zero.backward} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %g1 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
