// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-expand-gradients | FileCheck %s
// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-expand-gradients --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// y = sum(x * w) with w used twice (fan-out) and broadcast over rows:
// dy/dw sums both uses and the broadcast dimension.
// CHECK-LABEL: func.func @fanout_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<1x3xf32>)
// CHECK: %[[XW:.*]] = tosa.mul %[[X]], %[[W]]
// CHECK: %[[ONE:.*]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1xf32>}> {zero.backward}
// CHECK: %[[T1:.*]] = tosa.tile %[[ONE]], {{.*}} {zero.backward} : (tensor<1x1xf32>, !tosa.shape<2>) -> tensor<1x3xf32>
// CHECK: %[[T:.*]] = tosa.tile %[[T1]], {{.*}} {zero.backward} : (tensor<1x3xf32>, !tosa.shape<2>) -> tensor<2x3xf32>
// CHECK: %[[DA:.*]] = tosa.mul %[[T]], %[[W]], {{.*}} {zero.backward}
// CHECK: %[[P2:.*]] = tosa.mul %[[T]], %[[XW]], {{.*}} {zero.backward}
// CHECK: %[[G2:.*]] = tosa.reduce_sum %[[P2]] {axis = 0 : i32, zero.backward} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[P1:.*]] = tosa.mul %[[DA]], %[[X]], {{.*}} {zero.backward}
// CHECK: %[[G1:.*]] = tosa.reduce_sum %[[P1]] {axis = 0 : i32, zero.backward} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[G:.*]] = tosa.add %[[G2]], %[[G1]] {zero.backward}
// CHECK: return %[[G]]
func.func @fanout_broadcast(%x: tensor<2x3xf32>, %w: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %a = tosa.mul %x, %w, %s : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xi8>) -> tensor<2x3xf32>
  %b = tosa.mul %a, %w, %s : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<1xi8>) -> tensor<2x3xf32>
  %r0 = tosa.reduce_sum %b {axis = 0 : i32} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 1 : i32} : (tensor<1x3xf32>) -> tensor<1x1xf32>
  %g = zero.gradient %r1 wrt %w : tensor<1x1xf32>, (tensor<1x3xf32>) -> tensor<1x3xf32>
  return %g : tensor<1x3xf32>
}

// -----

// Integer values carry no gradient; a value y does not depend on gets
// zeros; ops outside the path to y are not differentiated.
// CHECK-LABEL: func.func @inactive
// CHECK: %[[Z:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<4xf32>}> {zero.backward}
// CHECK-NOT: tosa.exp {{.*}} zero.backward
// CHECK: return %{{.*}}, %[[Z]]
func.func @inactive(%x: tensor<4xf32>, %u: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tosa.exp %u : (tensor<4xf32>) -> tensor<4xf32>
  %c = tosa.cast %i : (tensor<4xi32>) -> tensor<4xf32>
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %m = tosa.mul %x, %c, %s : (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %r = tosa.reduce_sum %m {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  %g:2 = zero.gradient %r wrt %x, %u : tensor<1xf32>, (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %g#0, %g#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// matmul: dA = dY B^T, dB = A^T dY.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<1x2x3xf32>, %[[B:.*]]: tensor<1x3x4xf32>)
// CHECK-DAG: %[[BT:.*]] = tosa.transpose %[[B]] {perms = array<i32: 0, 2, 1>, zero.backward}
// CHECK-DAG: %[[AT:.*]] = tosa.transpose %[[A]] {perms = array<i32: 0, 2, 1>, zero.backward}
// CHECK-DAG: tosa.matmul %{{.*}}, %[[BT]], {{.*}} {zero.backward} : {{.*}} -> tensor<1x2x3xf32>
// CHECK-DAG: tosa.matmul %[[AT]], %{{.*}}, {{.*}} {zero.backward} : {{.*}} -> tensor<1x3x4xf32>
func.func @matmul(%a: tensor<1x2x3xf32>, %b: tensor<1x3x4xf32>) -> (tensor<1x2x3xf32>, tensor<1x3x4xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.matmul %a, %b, %zp, %zp : (tensor<1x2x3xf32>, tensor<1x3x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x4xf32>
  %r0 = tosa.reduce_sum %y {axis = 1 : i32} : (tensor<1x2x4xf32>) -> tensor<1x1x4xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 2 : i32} : (tensor<1x1x4xf32>) -> tensor<1x1x1xf32>
  %g:2 = zero.gradient %r1 wrt %a, %b : tensor<1x1x1xf32>, (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> (tensor<1x2x3xf32>, tensor<1x3x4xf32>)
  return %g#0, %g#1 : tensor<1x2x3xf32>, tensor<1x3x4xf32>
}

// -----

// Embedding gradient: a scatter-add loop, so repeated tokens accumulate.
// CHECK-LABEL: func.func @gather
// CHECK: scf.for {{.*}} iter_args
// CHECK: tensor.extract %{{.*}} {zero.backward} : tensor<1x4xi32>
// CHECK: tosa.add {{.*}} {zero.backward} : (tensor<1x1x3xf32>, tensor<1x1x3xf32>)
// CHECK: tensor.insert_slice
func.func @gather(%t: tensor<1x5x3xf32>, %i: tensor<1x4xi32>) -> tensor<1x5x3xf32> {
  %y = tosa.gather %t, %i : (tensor<1x5x3xf32>, tensor<1x4xi32>) -> tensor<1x4x3xf32>
  %r0 = tosa.reduce_sum %y {axis = 1 : i32} : (tensor<1x4x3xf32>) -> tensor<1x1x3xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 2 : i32} : (tensor<1x1x3xf32>) -> tensor<1x1x1xf32>
  %g = zero.gradient %r1 wrt %t : tensor<1x1x1xf32>, (tensor<1x5x3xf32>) -> tensor<1x5x3xf32>
  return %g : tensor<1x5x3xf32>
}

// -----

func.func @no_rule(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{no derivative rule for 'arith.addf'}}
  %y = arith.addf %x, %c : tensor<4xf32>
  %r = tosa.reduce_sum %y {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  %g = zero.gradient %r wrt %x : tensor<1xf32>, (tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// ReLU's gradient masks by its result (y > 0 exactly where x > 0), so the
// backward reads the value the next layer keeps, not the input.
// CHECK-LABEL: func.func @relu
// CHECK: %[[Y:.*]] = tosa.clamp %arg0
// CHECK: tosa.greater %[[Y]], %{{.*}} {zero.backward}
func.func @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tosa.clamp %x {max_val = 0x7F800000 : f32, min_val = 0.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %r = tosa.reduce_sum %y {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  %g = zero.gradient %r wrt %x : tensor<1xf32>, (tensor<4xf32>) -> tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

// A softmax's stabilizing max carries zero.stop_gradient: no adjoint reaches
// it (no argmax mask, no sum of the shifted adjoint), so the backward reads
// neither the max nor the shifted input, only exp's result and 1/sum.
// CHECK-LABEL: func.func @softmax_max_stops_gradient
// CHECK-SAME: (%[[X:.*]]: tensor<2x5xf32>)
// CHECK: %[[E:.*]] = tosa.exp
// CHECK: %[[INV:.*]] = tosa.reciprocal
// CHECK-NOT: tosa.equal
// CHECK-NOT: tosa.negate {{.*}} : (tensor<2x5xf32>
// CHECK: %[[DE:.*]] = tosa.add {{.*}} {zero.backward} : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
// CHECK-NOT: tosa.equal
// CHECK: %[[DX:.*]] = tosa.mul %[[DE]], %[[E]], %{{.*}} {zero.backward}
// CHECK-NEXT: return %[[DX]]
func.func @softmax_max_stops_gradient(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w = "tosa.const"() <{values = dense<[[1.0, 2.0, 3.0, 4.0, 5.0]]> : tensor<1x5xf32>}> : () -> tensor<1x5xf32>
  %mx = tosa.reduce_max %x {axis = 1 : i32, zero.stop_gradient = unit} : (tensor<2x5xf32>) -> tensor<2x1xf32>
  %sh = tosa.sub %x, %mx : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  %e = tosa.exp %sh : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<2x5xf32>) -> tensor<2x1xf32>
  %inv = tosa.reciprocal %sum : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %p = tosa.mul %e, %inv, %s : (tensor<2x5xf32>, tensor<2x1xf32>, tensor<1xi8>) -> tensor<2x5xf32>
  %pw = tosa.mul %p, %w, %s : (tensor<2x5xf32>, tensor<1x5xf32>, tensor<1xi8>) -> tensor<2x5xf32>
  %r0 = tosa.reduce_sum %pw {axis = 1 : i32} : (tensor<2x5xf32>) -> tensor<2x1xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 0 : i32} : (tensor<2x1xf32>) -> tensor<1x1xf32>
  %g = zero.gradient %r1 wrt %x : tensor<1x1xf32>, (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %g : tensor<2x5xf32>
}

// -----

// linalg.softmax differentiates as a whole: dx = y * (dy - sum(dy * y)),
// from its output alone (no exponential, max or sum of the forward is read).
// CHECK-LABEL: func.func @softmax_whole
// CHECK: %[[Y:.*]] = linalg.softmax dimension(1)
// CHECK-NOT: tosa.exp
// CHECK: %[[DYY:.*]] = tosa.mul %[[DY:.*]], %[[Y]], %{{.*}} {zero.backward}
// CHECK: %[[S:.*]] = tosa.reduce_sum %[[DYY]] {axis = 1 : i32, zero.backward} : (tensor<2x5xf32>) -> tensor<2x1xf32>
// CHECK: %[[D:.*]] = tosa.sub %[[DY]], %[[S]] {zero.backward}
// CHECK: %[[DX:.*]] = tosa.mul %[[Y]], %[[D]], %{{.*}} {zero.backward}
// CHECK-NEXT: return %[[DX]]
func.func @softmax_whole(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %w = "tosa.const"() <{values = dense<[[1.0, 2.0, 3.0, 4.0, 5.0]]> : tensor<1x5xf32>}> : () -> tensor<1x5xf32>
  %e = tensor.empty() : tensor<2x5xf32>
  %p = linalg.softmax dimension(1) ins(%x : tensor<2x5xf32>) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %pw = tosa.mul %p, %w, %s : (tensor<2x5xf32>, tensor<1x5xf32>, tensor<1xi8>) -> tensor<2x5xf32>
  %r0 = tosa.reduce_sum %pw {axis = 1 : i32} : (tensor<2x5xf32>) -> tensor<2x1xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 0 : i32} : (tensor<2x1xf32>) -> tensor<1x1xf32>
  %g = zero.gradient %r1 wrt %x : tensor<1x1xf32>, (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %g : tensor<2x5xf32>
}

// -----

// In 16 bits the rule computes in fp32 and rounds the adjoint once.
// CHECK-LABEL: func.func @softmax_bf16
// CHECK: %[[Y:.*]] = linalg.softmax
// CHECK: %[[YW:.*]] = tosa.cast %[[Y]] {zero.backward} : (tensor<2x5xbf16>) -> tensor<2x5xf32>
// CHECK: tosa.reduce_sum {{.*}} : (tensor<2x5xf32>) -> tensor<2x1xf32>
// CHECK: %[[DX:.*]] = tosa.mul %[[YW]], {{.*}} -> tensor<2x5xf32>
// CHECK: %[[DXL:.*]] = tosa.cast %[[DX]] {zero.backward} : (tensor<2x5xf32>) -> tensor<2x5xbf16>
// CHECK-NEXT: return %[[DXL]]
func.func @softmax_bf16(%x: tensor<2x5xbf16>) -> tensor<2x5xbf16> {
  %e = tensor.empty() : tensor<2x5xbf16>
  %p = linalg.softmax dimension(1) ins(%x : tensor<2x5xbf16>) outs(%e : tensor<2x5xbf16>) -> tensor<2x5xbf16>
  %r0 = tosa.reduce_sum %p {axis = 1 : i32} : (tensor<2x5xbf16>) -> tensor<2x1xbf16>
  %r1 = tosa.reduce_sum %r0 {axis = 0 : i32} : (tensor<2x1xbf16>) -> tensor<1x1xbf16>
  %g = zero.gradient %r1 wrt %x : tensor<1x1xbf16>, (tensor<2x5xbf16>) -> tensor<2x5xbf16>
  return %g : tensor<2x5xbf16>
}

// -----

// A split into three pieces along axis 1: the pieces' adjoints are zero
// paddings side by side, so x's adjoint is one concatenation of the three,
// not a sum of padded copies. Pieces that leave a gap (columns 1-2 unread) still
// add: one padding of the two adjacent pieces plus the third.
// CHECK-LABEL: func.func @split3
// CHECK-NOT: tosa.pad
// CHECK-NOT: tosa.add {{.*}} zero.backward
// CHECK: %[[G:.*]] = tosa.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i32, zero.backward} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x7xf32>
// CHECK: return %[[G]]
// CHECK-LABEL: func.func @gap
// CHECK: %[[J:.*]] = tosa.concat %{{.*}}, %{{.*}} {axis = 1 : i32, zero.backward} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
// CHECK: %[[P:.*]] = tosa.pad %[[J]]
// CHECK-SAME: -> tensor<2x7xf32>
// CHECK: %[[S:.*]] = tosa.add
// CHECK: return %[[S]]
func.func @split3(%x: tensor<2x7xf32>) -> tensor<2x7xf32> {
  %s0 = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s2 = tosa.const_shape {values = dense<[0, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s4 = tosa.const_shape {values = dense<[0, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %n2 = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %n3 = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %a = tosa.slice %x, %s0, %n2 : (tensor<2x7xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x2xf32>
  %b = tosa.slice %x, %s2, %n2 : (tensor<2x7xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x2xf32>
  %c = tosa.slice %x, %s4, %n3 : (tensor<2x7xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x3xf32>
  %ea = tosa.exp %a : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %eb = tosa.exp %b : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %ec = tosa.exp %c : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %ra = tosa.reduce_sum %ea {axis = 1 : i32} : (tensor<2x2xf32>) -> tensor<2x1xf32>
  %rb = tosa.reduce_sum %eb {axis = 1 : i32} : (tensor<2x2xf32>) -> tensor<2x1xf32>
  %rc = tosa.reduce_sum %ec {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %ab = tosa.add %ra, %rb : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %abc = tosa.add %ab, %rc : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t = tosa.reduce_sum %abc {axis = 0 : i32} : (tensor<2x1xf32>) -> tensor<1x1xf32>
  %g = zero.gradient %t wrt %x : tensor<1x1xf32>, (tensor<2x7xf32>) -> tensor<2x7xf32>
  return %g : tensor<2x7xf32>
}
func.func @gap(%x: tensor<2x7xf32>) -> tensor<2x7xf32> {
  %s0 = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s4 = tosa.const_shape {values = dense<[0, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s2 = tosa.const_shape {values = dense<[0, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %n1 = tosa.const_shape {values = dense<[2, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %n2 = tosa.const_shape {values = dense<[2, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %n3 = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %a = tosa.slice %x, %s0, %n1 : (tensor<2x7xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x1xf32>
  %b = tosa.slice %x, %s2, %n2 : (tensor<2x7xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x2xf32>
  %c = tosa.slice %x, %s4, %n3 : (tensor<2x7xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x3xf32>
  %ea = tosa.exp %a : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %eb = tosa.exp %b : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %ec = tosa.exp %c : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %rb = tosa.reduce_sum %eb {axis = 1 : i32} : (tensor<2x2xf32>) -> tensor<2x1xf32>
  %rc = tosa.reduce_sum %ec {axis = 1 : i32} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %ab = tosa.add %ea, %rb : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %abc = tosa.add %ab, %rc : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %t = tosa.reduce_sum %abc {axis = 0 : i32} : (tensor<2x1xf32>) -> tensor<1x1xf32>
  %g = zero.gradient %t wrt %x : tensor<1x1xf32>, (tensor<2x7xf32>) -> tensor<2x7xf32>
  return %g : tensor<2x7xf32>
}

// -----

// The sum of a fan-out's adjoints takes the location of the user whose
// contribution it adds (visited in reverse: the first user), so that the
// kernels it fuses into are named by a node of the model.
// CHECK-LABEL: func.func @fanout_sum_location
// LOC-LABEL: func.func @fanout_sum_location
// LOC: tosa.add %{{.*}}, %{{.*}} {zero.backward} : {{.*}} loc(#[[AT:.*]])
// LOC: #[[AT]] = loc("/h.0/Mul_1")
func.func @fanout_sum_location(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %a = tosa.mul %x, %x, %s : (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32> loc("/h.0/Mul_1")
  %b = tosa.exp %a : (tensor<4xf32>) -> tensor<4xf32> loc("/h.0/Exp_2")
  %r = tosa.reduce_sum %b {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32> loc("/h.0/ReduceSum_3")
  %g = zero.gradient %r wrt %x : tensor<1xf32>, (tensor<4xf32>) -> tensor<4xf32> loc("/h.0/Grad")
  return %g : tensor<4xf32>
}

// -----

// Attention's gradient: delta = rowsum(dout * out) in f32, from the
// output's adjoint (here the broadcast weight w) and the output; then
// zero.attention_grad with the forward's log-sum-exp, scale and causal
// gives q's, k's and v's adjoints.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x64x16xbf16>, %[[K:.*]]: tensor<2x64x16xbf16>, %[[V:.*]]: tensor<2x64x16xbf16>, %[[W:.*]]: tensor<2x64x16xbf16>)
// CHECK: %[[A:.*]]:2 = zero.attention %[[Q]], %[[K]], %[[V]]
// CHECK-DAG: %[[OUT32:.*]] = tosa.cast %[[A]]#0 {zero.backward} : (tensor<2x64x16xbf16>) -> tensor<2x64x16xf32>
// CHECK-DAG: %[[DO32:.*]] = tosa.cast %[[DO:.*]] {zero.backward} : (tensor<2x64x16xbf16>) -> tensor<2x64x16xf32>
// CHECK: %[[P:.*]] = tosa.mul %[[DO32]], %[[OUT32]], %{{.*}} {zero.backward}
// CHECK: %[[S:.*]] = tosa.reduce_sum %[[P]] {axis = 2 : i32, zero.backward} : (tensor<2x64x16xf32>) -> tensor<2x64x1xf32>
// CHECK: %[[D:.*]] = tosa.reshape %[[S]], %{{.*}} {zero.backward} : (tensor<2x64x1xf32>, !tosa.shape<2>) -> tensor<2x64xf32>
// CHECK: %[[G:.*]]:3 = zero.attention_grad %[[Q]], %[[K]], %[[V]], %[[DO]], %[[A]]#1, %[[D]] into %{{.*}}, %{{.*}}, %{{.*}} scale 1.250000e-01 causal {zero.backward}
// CHECK: return %[[G]]#0, %[[G]]#1, %[[G]]#2
func.func @attention(%q: tensor<2x64x16xbf16>, %k: tensor<2x64x16xbf16>, %v: tensor<2x64x16xbf16>, %w: tensor<2x64x16xbf16>) -> (tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>) {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %oi = tensor.empty() : tensor<2x64x16xbf16>
  %li = tensor.empty() : tensor<2x64xf32>
  %a:2 = zero.attention %q, %k, %v into %oi, %li scale 0.125 causal : tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64xf32> -> tensor<2x64x16xbf16>, tensor<2x64xf32>
  %y = tosa.mul %a#0, %w, %s : (tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<1xi8>) -> tensor<2x64x16xbf16>
  %r0 = tosa.reduce_sum %y {axis = 0 : i32} : (tensor<2x64x16xbf16>) -> tensor<1x64x16xbf16>
  %r1 = tosa.reduce_sum %r0 {axis = 1 : i32} : (tensor<1x64x16xbf16>) -> tensor<1x1x16xbf16>
  %r2 = tosa.reduce_sum %r1 {axis = 2 : i32} : (tensor<1x1x16xbf16>) -> tensor<1x1x1xbf16>
  %g:3 = zero.gradient %r2 wrt %q, %k, %v : tensor<1x1x1xbf16>, (tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>) -> (tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>)
  return %g#0, %g#1, %g#2 : tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>
}

// -----

// The log-sum-exp is the forward's own: a loss reading it has no rule.
func.func @attention_lse_used(%q: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {
  %oi = tensor.empty() : tensor<2x64x16xbf16>
  %li = tensor.empty() : tensor<2x64xf32>
  // expected-error @+1 {{no derivative rule for a zero.attention whose log-sum-exp is used}}
  %a:2 = zero.attention %q, %q, %q into %oi, %li scale 0.125 : tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64xf32> -> tensor<2x64x16xbf16>, tensor<2x64xf32>
  %r0 = tosa.reduce_sum %a#1 {axis = 0 : i32} : (tensor<2x64xf32>) -> tensor<1x64xf32>
  %r1 = tosa.reduce_sum %r0 {axis = 1 : i32} : (tensor<1x64xf32>) -> tensor<1x1xf32>
  %g = zero.gradient %r1 wrt %q : tensor<1x1xf32>, (tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16>
  return %g : tensor<2x64x16xbf16>
}

// -----

// With the heads as they lie (seq_dim 1) delta is shaped as the query
// without its depth, as the log-sum-exp is, and the gradient op takes the
// forward's seq_dim.
// CHECK-LABEL: func.func @attention_heads
// CHECK: %[[S:.*]] = tosa.reduce_sum %{{.*}} {axis = 3 : i32, zero.backward} : (tensor<1x64x2x16xf32>) -> tensor<1x64x2x1xf32>
// CHECK: %[[D:.*]] = tosa.reshape %[[S]], %{{.*}} {zero.backward} : (tensor<1x64x2x1xf32>, !tosa.shape<3>) -> tensor<1x64x2xf32>
// CHECK: zero.attention_grad {{.*}}, %[[D]] into {{.*}} scale 1.250000e-01 causal seq_dim 1 {zero.backward} : tensor<1x64x2x16xbf16>
func.func @attention_heads(%q: tensor<1x64x2x16xbf16>, %w: tensor<1x64x2x16xbf16>) -> tensor<1x64x2x16xbf16> {
  %s = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %oi = tensor.empty() : tensor<1x64x2x16xbf16>
  %li = tensor.empty() : tensor<1x64x2xf32>
  %a:2 = zero.attention %q, %q, %q into %oi, %li scale 0.125 causal seq_dim 1 : tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1x64x2xf32> -> tensor<1x64x2x16xbf16>, tensor<1x64x2xf32>
  %y = tosa.mul %a#0, %w, %s : (tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1xi8>) -> tensor<1x64x2x16xbf16>
  %r0 = tosa.reduce_sum %y {axis = 0 : i32} : (tensor<1x64x2x16xbf16>) -> tensor<1x64x2x16xbf16>
  %r1 = tosa.reduce_sum %r0 {axis = 1 : i32} : (tensor<1x64x2x16xbf16>) -> tensor<1x1x2x16xbf16>
  %r2 = tosa.reduce_sum %r1 {axis = 2 : i32} : (tensor<1x1x2x16xbf16>) -> tensor<1x1x1x16xbf16>
  %r3 = tosa.reduce_sum %r2 {axis = 3 : i32} : (tensor<1x1x1x16xbf16>) -> tensor<1x1x1x1xbf16>
  %g = zero.gradient %r3 wrt %q : tensor<1x1x1x1xbf16>, (tensor<1x64x2x16xbf16>) -> tensor<1x64x2x16xbf16>
  return %g : tensor<1x64x2x16xbf16>
}

// -----

// A dropout's draw, factor and counter words pass to the gradient op,
// which draws the forward's mask again.
// CHECK-LABEL: func.func @attention_dropout
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: i64, %[[MB:[a-z0-9]+]]: i64
// CHECK: zero.attention_grad {{.*}} scale 1.250000e-01 causal seq_dim 1 dropout <seed = 3, stream = 1, keep = 8388608> scaled 2.000000e+00 rng(%[[STEP]], %[[MB]]) {zero.backward} : tensor<1x64x2x16xbf16>
func.func @attention_dropout(%q: tensor<1x64x2x16xbf16>, %step: i64, %mb: i64) -> tensor<1x64x2x16xbf16> {
  %oi = tensor.empty() : tensor<1x64x2x16xbf16>
  %li = tensor.empty() : tensor<1x64x2xf32>
  %a:2 = zero.attention %q, %q, %q into %oi, %li scale 0.125 causal seq_dim 1 dropout <seed = 3, stream = 1, keep = 8388608> scaled 2.0 rng(%step, %mb) : tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1x64x2xf32> -> tensor<1x64x2x16xbf16>, tensor<1x64x2xf32>
  %r0 = tosa.reduce_sum %a#0 {axis = 0 : i32} : (tensor<1x64x2x16xbf16>) -> tensor<1x64x2x16xbf16>
  %r1 = tosa.reduce_sum %r0 {axis = 1 : i32} : (tensor<1x64x2x16xbf16>) -> tensor<1x1x2x16xbf16>
  %r2 = tosa.reduce_sum %r1 {axis = 2 : i32} : (tensor<1x1x2x16xbf16>) -> tensor<1x1x1x16xbf16>
  %r3 = tosa.reduce_sum %r2 {axis = 3 : i32} : (tensor<1x1x1x16xbf16>) -> tensor<1x1x1x1xbf16>
  %g = zero.gradient %r3 wrt %q : tensor<1x1x1x1xbf16>, (tensor<1x64x2x16xbf16>) -> tensor<1x64x2x16xbf16>
  return %g : tensor<1x64x2x16xbf16>
}
