// RUN: zero-opt %s --split-input-file --zero-elide-destination-copies --canonicalize | FileCheck %s

// dq, dk and dv joined along the last dimension, each through a reshape
// from [B, T, H, D] to [B, T, H * D]: the op writes the three slices of
// the joined buffer, whose allocation moves before it; no copy and no
// buffer of its own is left.
// CHECK-LABEL: func.func @concat
// CHECK: %[[J:.*]] = memref.alloc(){{.*}}: memref<1x64x96xbf16>
// CHECK-DAG: %[[S0:.*]] = memref.subview %[[J]][0, 0, 0] [1, 64, 32] [1, 1, 1]
// CHECK-DAG: %[[S1:.*]] = memref.subview %[[J]][0, 0, 32] [1, 64, 32] [1, 1, 1]
// CHECK-DAG: %[[S2:.*]] = memref.subview %[[J]][0, 0, 64] [1, 64, 32] [1, 1, 1]
// CHECK-DAG: %[[X0:.*]] = memref.expand_shape %[[S0]] {{\[\[}}0], [1], [2, 3]] output_shape [1, 64, 2, 16] : memref<1x64x32xbf16, strided<[6144, 96, 1]>> into memref<1x64x2x16xbf16, strided<[6144, 96, 16, 1]>>
// CHECK-DAG: %[[X1:.*]] = memref.expand_shape %[[S1]]
// CHECK-DAG: %[[X2:.*]] = memref.expand_shape %[[S2]]
// CHECK: zero.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %[[X0]], %[[X1]], %[[X2]] scale 5.000000e-01 causal seq_dim 1
// CHECK-NOT: memref.copy
// CHECK-NOT: memref.alloc
// CHECK: return %[[J]]
func.func @concat(%q: memref<1x64x2x16xbf16>, %do: memref<1x64x2x16xbf16>, %l: memref<1x64x2xf32>) -> memref<1x64x96xbf16> {
  %a0 = memref.alloc() : memref<1x64x2x16xbf16>
  %a1 = memref.alloc() : memref<1x64x2x16xbf16>
  %a2 = memref.alloc() : memref<1x64x2x16xbf16>
  zero.attention_grad %q, %q, %q, %do, %l, %l into %a0, %a1, %a2 scale 0.5 causal seq_dim 1 : memref<1x64x2x16xbf16>, memref<1x64x2x16xbf16>, memref<1x64x2x16xbf16>, memref<1x64x2x16xbf16>, memref<1x64x2xf32>, memref<1x64x2xf32>, memref<1x64x2x16xbf16>, memref<1x64x2x16xbf16>, memref<1x64x2x16xbf16>
  %c0 = memref.collapse_shape %a0 [[0], [1], [2, 3]] : memref<1x64x2x16xbf16> into memref<1x64x32xbf16>
  %c1 = memref.collapse_shape %a1 [[0], [1], [2, 3]] : memref<1x64x2x16xbf16> into memref<1x64x32xbf16>
  %c2 = memref.collapse_shape %a2 [[0], [1], [2, 3]] : memref<1x64x2x16xbf16> into memref<1x64x32xbf16>
  %j = memref.alloc() : memref<1x64x96xbf16>
  %s0 = memref.subview %j[0, 0, 0] [1, 64, 32] [1, 1, 1] : memref<1x64x96xbf16> to memref<1x64x32xbf16, strided<[6144, 96, 1]>>
  memref.copy %c0, %s0 : memref<1x64x32xbf16> to memref<1x64x32xbf16, strided<[6144, 96, 1]>>
  %s1 = memref.subview %j[0, 0, 32] [1, 64, 32] [1, 1, 1] : memref<1x64x96xbf16> to memref<1x64x32xbf16, strided<[6144, 96, 1], offset: 32>>
  memref.copy %c1, %s1 : memref<1x64x32xbf16> to memref<1x64x32xbf16, strided<[6144, 96, 1], offset: 32>>
  %s2 = memref.subview %j[0, 0, 64] [1, 64, 32] [1, 1, 1] : memref<1x64x96xbf16> to memref<1x64x32xbf16, strided<[6144, 96, 1], offset: 64>>
  memref.copy %c2, %s2 : memref<1x64x32xbf16> to memref<1x64x32xbf16, strided<[6144, 96, 1], offset: 64>>
  return %j : memref<1x64x96xbf16>
}

// -----

// The forward's output copied whole, without a reshape, into a slice.
// CHECK-LABEL: func.func @forward
// CHECK: %[[J:.*]] = memref.alloc(){{.*}}: memref<2x64x16xbf16>
// CHECK: %[[S:.*]] = memref.subview %[[J]][1, 0, 0] [1, 64, 16] [1, 1, 1]
// CHECK: zero.attention %{{.*}}, %{{.*}}, %{{.*}} into %[[S]], %{{.*}} scale
// CHECK-NOT: memref.copy
func.func @forward(%q: memref<1x64x16xbf16>, %l: memref<1x64xf32>) -> memref<2x64x16xbf16> {
  %o = memref.alloc() : memref<1x64x16xbf16>
  zero.attention %q, %q, %q into %o, %l scale 0.25 : memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64xf32>
  %j = memref.alloc() : memref<2x64x16xbf16>
  %s = memref.subview %j[1, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  memref.copy %o, %s : memref<1x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  return %j : memref<2x64x16xbf16>
}

// -----

// Left alone: the destination read by another op as well as copied.
// CHECK-LABEL: func.func @read_twice
// CHECK: memref.copy
func.func @read_twice(%q: memref<1x64x16xbf16>, %l: memref<1x64xf32>, %x: memref<1x64x16xbf16>) -> memref<2x64x16xbf16> {
  %o = memref.alloc() : memref<1x64x16xbf16>
  zero.attention %q, %q, %q into %o, %l scale 0.25 : memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64xf32>
  memref.copy %o, %x : memref<1x64x16xbf16> to memref<1x64x16xbf16>
  %j = memref.alloc() : memref<2x64x16xbf16>
  %s = memref.subview %j[1, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  memref.copy %o, %s : memref<1x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  return %j : memref<2x64x16xbf16>
}

// -----

// Left alone: the target's bytes read between the op and the copy (the
// read must see what was there before the copy).
// CHECK-LABEL: func.func @target_read_between
// CHECK: zero.attention %{{.*}}, %{{.*}}, %{{.*}} into %[[O:.*]], %{{.*}} scale
// CHECK: memref.copy %{{.*}}, %[[X:.*]] :
// CHECK: memref.copy %[[O]],
func.func @target_read_between(%q: memref<1x64x16xbf16>, %l: memref<1x64xf32>, %x: memref<1x64x16xbf16>) -> memref<2x64x16xbf16> {
  %j = memref.alloc() : memref<2x64x16xbf16>
  %o = memref.alloc() : memref<1x64x16xbf16>
  zero.attention %q, %q, %q into %o, %l scale 0.25 : memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64xf32>
  %s = memref.subview %j[1, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  memref.copy %s, %x : memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>> to memref<1x64x16xbf16>
  memref.copy %o, %s : memref<1x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  return %j : memref<2x64x16xbf16>
}

// -----

// Left alone: the target is a view of an argument (whose bytes another
// argument may share), and a linalg op's destination.
// CHECK-LABEL: func.func @argument_target
// CHECK: memref.copy
// CHECK-LABEL: func.func @other_op
// CHECK: memref.copy
func.func @argument_target(%q: memref<1x64x16xbf16>, %l: memref<1x64xf32>, %j: memref<2x64x16xbf16>) {
  %o = memref.alloc() : memref<1x64x16xbf16>
  zero.attention %q, %q, %q into %o, %l scale 0.25 : memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64xf32>
  %s = memref.subview %j[1, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  memref.copy %o, %s : memref<1x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  return
}
func.func @other_op(%x: memref<64x16xf32>) -> memref<128x16xf32> {
  %o = memref.alloc() : memref<64x16xf32>
  linalg.copy ins(%x : memref<64x16xf32>) outs(%o : memref<64x16xf32>)
  %j = memref.alloc() : memref<128x16xf32>
  %s = memref.subview %j[64, 0] [64, 16] [1, 1] : memref<128x16xf32> to memref<64x16xf32, strided<[16, 1], offset: 1024>>
  memref.copy %o, %s : memref<64x16xf32> to memref<64x16xf32, strided<[16, 1], offset: 1024>>
  return %j : memref<128x16xf32>
}

// -----

// Left alone: the op reads the target's bytes (its queries are that very
// slice), so it may not write them.
// CHECK-LABEL: func.func @reads_target
// CHECK: memref.copy
func.func @reads_target(%l: memref<1x64xf32>) -> memref<2x64x16xbf16> {
  %j = memref.alloc() : memref<2x64x16xbf16>
  %s = memref.subview %j[1, 0, 0] [1, 64, 16] [1, 1, 1] : memref<2x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  %o = memref.alloc() : memref<1x64x16xbf16>
  zero.attention %s, %s, %s into %o, %l scale 0.25 : memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>, memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>, memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>, memref<1x64x16xbf16>, memref<1x64xf32>
  memref.copy %o, %s : memref<1x64x16xbf16> to memref<1x64x16xbf16, strided<[1024, 16, 1], offset: 1024>>
  return %j : memref<2x64x16xbf16>
}

// -----

// Left alone: the target's last dimension is strided (every other
// column), which the kernels do not write.
// CHECK-LABEL: func.func @strided_target
// CHECK: memref.copy
func.func @strided_target(%q: memref<1x64x16xbf16>, %l: memref<1x64xf32>) -> memref<1x64x32xbf16> {
  %o = memref.alloc() : memref<1x64x16xbf16>
  zero.attention %q, %q, %q into %o, %l scale 0.25 : memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64x16xbf16>, memref<1x64xf32>
  %j = memref.alloc() : memref<1x64x32xbf16>
  %s = memref.subview %j[0, 0, 0] [1, 64, 16] [1, 1, 2] : memref<1x64x32xbf16> to memref<1x64x16xbf16, strided<[2048, 32, 2]>>
  memref.copy %o, %s : memref<1x64x16xbf16> to memref<1x64x16xbf16, strided<[2048, 32, 2]>>
  return %j : memref<1x64x32xbf16>
}
