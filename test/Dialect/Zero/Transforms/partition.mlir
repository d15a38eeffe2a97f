// The ZeRO passes on a small training step (w: 3x2 = 6 elements; on 4 ranks
// each holds a shard of 2; the 1x2 bias b has 2 elements, 1 per rank).
// RUN: zero-opt %s --zero-build-train-step="clip=1.0" --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=4" | FileCheck %s --check-prefix=DDP
// RUN: zero-opt %s --zero-build-train-step="clip=1.0" --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=4 reduce-when-complete=1" | FileCheck %s --check-prefix=EARLY
// RUN: zero-opt %s --zero-build-train-step="clip=1.0" --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=4" --zero-partition-optimizer-states | FileCheck %s --check-prefix=OS
// RUN: zero-opt %s --zero-build-train-step="clip=1.0" --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=4" --zero-partition-optimizer-states --zero-partition-gradients | FileCheck %s --check-prefix=GRAD
// RUN: zero-opt %s --zero-build-train-step="clip=1.0" --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=4" --zero-partition-optimizer-states --zero-partition-gradients --zero-partition-parameters | FileCheck %s --check-prefix=PARAM
// RUN: zero-opt %s --zero-build-train-step="clip=1.0" --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=4" --zero-partition-optimizer-states --zero-partition-gradients --zero-partition-parameters="persistence-threshold=4" | FileCheck %s --check-prefix=PERSIST
// RUN: zero-opt %s --zero-build-train-step="accumulation=2" --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=4" --zero-partition-optimizer-states --zero-partition-gradients | FileCheck %s --check-prefix=GRADACC
// RUN: not zero-opt %s --zero-build-train-step --zero-expand-gradients --inline --zero-partition-optimizer-states 2>&1 | FileCheck %s --check-prefix=ORDER

func.func @main(%x: tensor<4x3xf32> {zero.name = "x", zero.role = #zero.role<input>},
                %w: tensor<3x2xf32> {zero.name = "w", zero.role = #zero.role<parameter>},
                %bias: tensor<1x2xf32> {zero.name = "b", zero.role = #zero.role<parameter>})
    -> (tensor<f32> {zero.name = "loss"})
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
  %yb = tosa.add %y, %bias : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x2xf32>
  %ym = tosa.mul %yb, %yb, %s : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %r0 = tosa.reduce_sum %ym {axis = 0 : i32} : (tensor<4x2xf32>) -> tensor<1x2xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 1 : i32} : (tensor<1x2xf32>) -> tensor<1x1xf32>
  %l = tosa.reshape %r1, %sh0 : (tensor<1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %l : tensor<f32>
}

// Stage 0: gradients and loss are summed over the ranks and divided by 4.
// DDP-LABEL: func.func @train_step(
// DDP-SAME: attributes {zero.entry, zero.stage = 0 : i64, zero.world_size = 4 : i64}
// DDP-DAG: %[[ARW:.*]] = zero.all_reduce %{{.*}} into %{{.*}} {world_size = 4 : i64} : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
// DDP-DAG: %[[ARB:.*]] = zero.all_reduce %{{.*}} into %{{.*}} {world_size = 4 : i64} : tensor<1x2xf32>, tensor<1x2xf32> -> tensor<1x2xf32>
// DDP-DAG: "tosa.const"() <{values = dense<2.500000e-01> : tensor<1x1xf32>}>
// DDP: zero.clip_grad_norm {{.*}} {max_norm = 1.000000e+00 : f64}
// DDP: zero.all_reduce %{{.*}} into %{{.*}} {world_size = 4 : i64} : tensor<f32>, tensor<f32> -> tensor<f32>
// DDP-NOT: reduce_scatter

// With reduce-when-complete (stage 0) each gradient's all-reduce follows
// the op that completes it in the backward: the bias's before the weight
// gradient's GEMM; the averages stay with the step.
// EARLY-LABEL: func.func @train_step(
// EARLY: %[[GB:.*]] = tosa.reduce_sum %{{.*}} {axis = 0 : i32, zero.backward}
// EARLY-NEXT: %[[EB:.*]] = tensor.empty() : tensor<1x2xf32>
// EARLY-NEXT: zero.all_reduce %[[GB]] into %[[EB]] {world_size = 4 : i64, zero.backward}
// EARLY: tosa.matmul {{.*}} {zero.backward}
// EARLY-NEXT: %[[GW:.*]] = tosa.reshape {{.*}} {zero.backward} : (tensor<1x3x2xf32>
// EARLY-NEXT: %[[EW:.*]] = tensor.empty() : tensor<3x2xf32>
// EARLY-NEXT: zero.all_reduce %[[GW]] into %[[EW]] {world_size = 4 : i64, zero.backward}
// EARLY: tosa.mul
// EARLY: zero.clip_grad_norm

// Stage 1: flatten, pad, reduce-scatter; the norm sums over the ranks;
// each rank updates its shard and the parameter is gathered back.
// OS-LABEL: func.func @train_step(
// OS-SAME: tensor<2xf32> {zero.init = 0.000000e+00 : f64, zero.name = "w/exp_avg", zero.role = #zero.role<optimizer_state>, zero.shard = {numel = 6 : i64, shape = array<i64: 3, 2>, shard = 2 : i64}, zero.state_of = "w"}
// OS-SAME: tensor<1xf32> {zero.init = 0.000000e+00 : f64, zero.name = "b/exp_avg", zero.role = #zero.role<optimizer_state>, zero.shard = {numel = 2 : i64, shape = array<i64: 1, 2>, shard = 1 : i64}, zero.state_of = "b"}
// OS: zero.reduce_scatter %{{.*}} into %{{.*}} {world_size = 4 : i64, zero.grad_scatter} : tensor<8xf32>, tensor<2xf32> -> tensor<2xf32>
// OS: zero.clip_grad_norm %{{.*}}, %{{.*}} {max_norm = 1.000000e+00 : f64, sharded, world_size = 4 : i64} : (tensor<2xf32>, tensor<1xf32>)
// OS: %[[R:.*]] = zero.rank
// OS: %[[OFF:.*]] = arith.muli %[[R]], %{{.*}} : index
// OS: tensor.extract_slice %{{.*}}[%[[OFF]]] [2] [1] {zero.param_shard} : tensor<8xf32> to tensor<2xf32>
// OS: zero.adam {{.*}} : (tensor<2xf32>, {{.*}}) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// OS: zero.all_gather %{{.*}} into %{{.*}} {world_size = 4 : i64, zero.param_gather} : tensor<2xf32>, tensor<8xf32> -> tensor<8xf32>
// OS: bufferization.materialize_in_destination
// OS-NOT: zero.all_reduce %{{.*}} : tensor<3x2xf32>

// Stage 2: each reduce-scatter follows its gradient at once.
// GRAD: zero.stage = 2
// GRAD: zero.reduce_scatter
// GRAD-SAME: zero.grad_scatter
// GRAD: zero.reduce_scatter
// GRAD-SAME: zero.grad_scatter
// GRAD: zero.clip_grad_norm

// Stage 3: parameters are shard arguments, gathered right before their
// forward use; the update writes the shard. (Here the backward needs no
// parameter: x takes no gradient, so dW = x^T dy; no gather follows.)
// PARAM-LABEL: func.func @train_step(
// PARAM-SAME: %[[WS:[a-z0-9]+]]: tensor<2xf32> {zero.name = "w", zero.role = #zero.role<parameter>, zero.shard = {numel = 6 : i64, shape = array<i64: 3, 2>, shard = 2 : i64}}
// PARAM: zero.all_gather %[[WS]] into {{.*}} : tensor<2xf32>, tensor<8xf32> -> tensor<8xf32>
// PARAM: tosa.matmul
// PARAM-NOT: zero.all_gather %[[WS]]
// PARAM: %[[NW:.*]], %{{.*}}, %{{.*}} = zero.adam %[[WS]], {{.*}} : (tensor<2xf32>, {{.*}}) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// PARAM: return {{.*}}%[[NW]]

// A persistence threshold of 4 elements keeps the 2-element bias whole.
// PERSIST: tensor<2xf32> {zero.name = "w", zero.role = #zero.role<parameter>, zero.shard
// PERSIST-SAME: tensor<1x2xf32> {zero.name = "b", zero.role = #zero.role<parameter>}

// With accumulation, stage 2 scatters each micro-batch's gradient inside
// the loop and carries only the shards; the mean over micro-batches is taken
// on the shard after the loop.
// GRADACC-LABEL: func.func @train_step
// GRADACC: scf.for {{.*}} -> (tensor<f32>, tensor<2xf32>, tensor<1xf32>)
// GRADACC: %[[SB:.*]] = zero.reduce_scatter {{.*}} : tensor<4xf32>, tensor<1xf32>
// GRADACC: %[[SW:.*]] = zero.reduce_scatter {{.*}} : tensor<8xf32>, tensor<2xf32>
// GRADACC: linalg.add ins(%{{.*}}, %[[SW]] : tensor<2xf32>, tensor<2xf32>)
// GRADACC: linalg.add ins(%{{.*}}, %[[SB]] : tensor<1xf32>, tensor<1xf32>)
// GRADACC: scf.yield
// GRADACC-NOT: zero.reduce_scatter
// GRADACC: zero.clip_grad_norm

// ORDER: error: run zero-partition-data-parallel first
