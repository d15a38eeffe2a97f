// Stage 3 when the backward reads a parameter: h = x W1, y = h W2; dh =
// dy W2^T needs W2 again. The forward's gathered W2 (and its reshape) is not
// kept alive into the backward: W2 is gathered a second time and the view
// remade there.
// RUN: zero-opt %s --zero-build-train-step --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=2" --zero-partition-optimizer-states --zero-partition-gradients --zero-partition-parameters | FileCheck %s

func.func @main(%x: tensor<4x3xf32> {zero.name = "x", zero.role = #zero.role<input>},
                %w1: tensor<3x3xf32> {zero.name = "w1", zero.role = #zero.role<parameter>},
                %w2: tensor<3x2xf32> {zero.name = "w2", zero.role = #zero.role<parameter>})
    -> (tensor<f32> {zero.name = "loss"})
    attributes {zero.entry} {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %sx = tosa.const_shape {values = dense<[1, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s1 = tosa.const_shape {values = dense<[1, 3, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s2 = tosa.const_shape {values = dense<[1, 3, 2]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %x3 = tosa.reshape %x, %sx : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
  %a = tosa.reshape %w1, %s1 : (tensor<3x3xf32>, !tosa.shape<3>) -> tensor<1x3x3xf32>
  %h = tosa.matmul %x3, %a, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  %b = tosa.reshape %w2, %s2 : (tensor<3x2xf32>, !tosa.shape<3>) -> tensor<1x3x2xf32>
  %y = tosa.matmul %h, %b, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %r0 = tosa.reduce_sum %y {axis = 1 : i32} : (tensor<1x4x2xf32>) -> tensor<1x1x2xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 2 : i32} : (tensor<1x1x2xf32>) -> tensor<1x1x1xf32>
  %l = tosa.reshape %r1, %s0 : (tensor<1x1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W1:[a-z0-9]+]]: tensor<5xf32> {zero.name = "w1"
// CHECK-SAME: %[[W2:[a-z0-9]+]]: tensor<3xf32> {zero.name = "w2"
// CHECK: zero.all_gather %[[W1]] into {{.*}} {world_size = 2 : i64} : tensor<5xf32>, tensor<10xf32>
// CHECK: zero.all_gather %[[W2]] into {{.*}} {world_size = 2 : i64} : tensor<3xf32>, tensor<6xf32>
// CHECK: tosa.tile {{.*}} {zero.backward}
// CHECK: %[[G2:.*]] = zero.all_gather %[[W2]] into {{.*}} {world_size = 2 : i64, zero.backward} : tensor<3xf32>, tensor<6xf32>
// CHECK: tosa.reshape %[[G2]], {{.*}} {zero.backward}
// CHECK: tosa.reshape {{.*}} {zero.backward} : (tensor<3x2xf32>, !tosa.shape<3>) -> tensor<1x3x2xf32>
// CHECK: tosa.transpose {{.*}} {perms = array<i32: 0, 2, 1>, zero.backward}
// CHECK-NOT: zero.all_gather %[[W1]]

// stage3_max_reuse_distance: between W2's last forward use and its first
// backward use no other parameter is used (distance 0), so with a reuse
// distance of 0 the backward reads the forward's gathered W2 and W2 is
// gathered once; W1 is gathered once anyway (its backward reads only x).
// RUN: zero-opt %s --zero-build-train-step --zero-expand-gradients --inline --canonicalize --zero-partition-data-parallel="world-size=2" --zero-partition-optimizer-states --zero-partition-gradients --zero-partition-parameters="max-reuse-distance=0" | FileCheck %s --check-prefix=REUSE
// REUSE-LABEL: func.func @train_step(
// REUSE-SAME: %[[W1:[a-z0-9]+]]: tensor<5xf32> {zero.name = "w1"
// REUSE-SAME: %[[W2:[a-z0-9]+]]: tensor<3xf32> {zero.name = "w2"
// REUSE: zero.all_gather %[[W1]] into
// REUSE: zero.all_gather %[[W2]] into {{.*}} {world_size = 2 : i64} : tensor<3xf32>, tensor<6xf32>
// REUSE-NOT: zero.all_gather %[[W2]]
// REUSE-NOT: zero.all_gather %[[W1]]
