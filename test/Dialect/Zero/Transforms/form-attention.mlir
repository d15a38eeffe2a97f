// RUN: zero-opt %s --split-input-file --zero-form-attention --canonicalize | FileCheck %s
// RUN: not zero-opt %s --split-input-file --zero-form-attention="max-fill=-50" 2>&1 | FileCheck %s --check-prefix=FILL

// RUN: not zero-opt %s --split-input-file --zero-form-attention="block=0" 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not zero-opt %s --split-input-file --zero-form-attention="depth-multiple=0" 2>&1 | FileCheck %s --check-prefix=DEPTH
// RUN: not zero-opt %s --split-input-file --zero-form-attention="max-pairs=-1" 2>&1 | FileCheck %s --check-prefix=PAIRS

// FILL: error: max-fill is -50; give -104 or less
// BLOCK: error: block must be at least 1
// DEPTH: error: depth-multiple must be at least 1
// PAIRS: error: max-pairs must be at least 1

// A GPT's causal attention as the importer and zero-mixed-precision give
// it: bf16 scores in f32 rounded, reshaped to [batch, heads, Tq, Tk],
// scaled, keys after the query filled with -inf, softmax, the rounded
// product with the values. One op instead: the keys transposed back from
// the score product's B, the scale, causal; nothing else stays.
// CHECK-LABEL: func.func @causal
// CHECK-SAME: (%[[Q:.*]]: tensor<2x64x16xbf16>, %[[KT:.*]]: tensor<2x16x64xbf16>, %[[V:.*]]: tensor<2x64x16xbf16>)
// CHECK: %[[K:.*]] = tosa.transpose %[[KT]] {perms = array<i32: 0, 2, 1>}
// CHECK: %[[O:.*]]:2 = zero.attention %[[Q]], %[[K]], %[[V]] into %{{.*}}, %{{.*}} scale 2.500000e-01 causal : tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64xf32> -> tensor<2x64x16xbf16>, tensor<2x64xf32>
// CHECK-NOT: tosa.matmul
// CHECK-NOT: linalg.softmax
// CHECK: return %[[O]]#0
func.func @causal(%q: tensor<2x64x16xbf16>, %kt: tensor<2x16x64xbf16>, %v: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<2.5e-01> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[2, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %r4 = tosa.reshape %r, %s4 : (tensor<2x64x64xbf16>, !tosa.shape<4>) -> tensor<1x2x64x64xbf16>
  %x = tosa.mul %r4, %scale, %sh : (tensor<1x2x64x64xbf16>, tensor<1x1x1x1xbf16>, tensor<1xi8>) -> tensor<1x2x64x64xbf16>
  %mask = "tosa.const"() <{values = dense<"0xFEFFFFFFFFFFFFFFFCFFFFFFFFFFFFFFF8FFFFFFFFFFFFFFF0FFFFFFFFFFFFFFE0FFFFFFFFFFFFFFC0FFFFFFFFFFFFFF80FFFFFFFFFFFFFF00FFFFFFFFFFFFFF00FEFFFFFFFFFFFF00FCFFFFFFFFFFFF00F8FFFFFFFFFFFF00F0FFFFFFFFFFFF00E0FFFFFFFFFFFF00C0FFFFFFFFFFFF0080FFFFFFFFFFFF0000FFFFFFFFFFFF0000FEFFFFFFFFFF0000FCFFFFFFFFFF0000F8FFFFFFFFFF0000F0FFFFFFFFFF0000E0FFFFFFFFFF0000C0FFFFFFFFFF000080FFFFFFFFFF000000FFFFFFFFFF000000FEFFFFFFFF000000FCFFFFFFFF000000F8FFFFFFFF000000F0FFFFFFFF000000E0FFFFFFFF000000C0FFFFFFFF00000080FFFFFFFF00000000FFFFFFFF00000000FEFFFFFF00000000FCFFFFFF00000000F8FFFFFF00000000F0FFFFFF00000000E0FFFFFF00000000C0FFFFFF0000000080FFFFFF0000000000FFFFFF0000000000FEFFFF0000000000FCFFFF0000000000F8FFFF0000000000F0FFFF0000000000E0FFFF0000000000C0FFFF000000000080FFFF000000000000FFFF000000000000FEFF000000000000FCFF000000000000F8FF000000000000F0FF000000000000E0FF000000000000C0FF00000000000080FF00000000000000FF00000000000000FE00000000000000FC00000000000000F800000000000000F000000000000000E000000000000000C000000000000000800000000000000000"> : tensor<1x1x64x64xi1>}> : () -> tensor<1x1x64x64xi1>
  %fill = "tosa.const"() <{values = dense<0xFF80> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %y = tosa.select %mask, %fill, %x : (tensor<1x1x64x64xi1>, tensor<1x1x1x1xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %e = tensor.empty() : tensor<1x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%y : tensor<1x2x64x64xbf16>) outs(%e : tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %p3 = tosa.reshape %p, %s3 : (tensor<1x2x64x64xbf16>, !tosa.shape<3>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p3, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  return %o : tensor<2x64x16xbf16>
}

// -----

// The mask the other way round (true where kept, a finite fill far below
// any score: HF GPT-2's finfo.min), the scale first.
// CHECK-LABEL: func.func @kept_mask
// CHECK: zero.attention {{.*}} scale 2.500000e-01 causal
func.func @kept_mask(%q: tensor<2x64x16xbf16>, %kt: tensor<2x16x64xbf16>, %v: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<2.5e-01> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[2, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %r4 = tosa.reshape %r, %s4 : (tensor<2x64x64xbf16>, !tosa.shape<4>) -> tensor<1x2x64x64xbf16>
  %x = tosa.mul %scale, %r4, %sh : (tensor<1x1x1x1xbf16>, tensor<1x2x64x64xbf16>, tensor<1xi8>) -> tensor<1x2x64x64xbf16>
  %mask = "tosa.const"() <{values = dense<"0x0100000000000000030000000000000007000000000000000F000000000000001F000000000000003F000000000000007F00000000000000FF00000000000000FF01000000000000FF03000000000000FF07000000000000FF0F000000000000FF1F000000000000FF3F000000000000FF7F000000000000FFFF000000000000FFFF010000000000FFFF030000000000FFFF070000000000FFFF0F0000000000FFFF1F0000000000FFFF3F0000000000FFFF7F0000000000FFFFFF0000000000FFFFFF0100000000FFFFFF0300000000FFFFFF0700000000FFFFFF0F00000000FFFFFF1F00000000FFFFFF3F00000000FFFFFF7F00000000FFFFFFFF00000000FFFFFFFF01000000FFFFFFFF03000000FFFFFFFF07000000FFFFFFFF0F000000FFFFFFFF1F000000FFFFFFFF3F000000FFFFFFFF7F000000FFFFFFFFFF000000FFFFFFFFFF010000FFFFFFFFFF030000FFFFFFFFFF070000FFFFFFFFFF0F0000FFFFFFFFFF1F0000FFFFFFFFFF3F0000FFFFFFFFFF7F0000FFFFFFFFFFFF0000FFFFFFFFFFFF0100FFFFFFFFFFFF0300FFFFFFFFFFFF0700FFFFFFFFFFFF0F00FFFFFFFFFFFF1F00FFFFFFFFFFFF3F00FFFFFFFFFFFF7F00FFFFFFFFFFFFFF00FFFFFFFFFFFFFF01FFFFFFFFFFFFFF03FFFFFFFFFFFFFF07FFFFFFFFFFFFFF0FFFFFFFFFFFFFFF1FFFFFFFFFFFFFFF3FFFFFFFFFFFFFFF7FFFFFFFFFFFFFFFFF"> : tensor<1x1x64x64xi1>}> : () -> tensor<1x1x64x64xi1>
  %fill = "tosa.const"() <{values = dense<0xFF7F> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %y = tosa.select %mask, %x, %fill : (tensor<1x1x64x64xi1>, tensor<1x2x64x64xbf16>, tensor<1x1x1x1xbf16>) -> tensor<1x2x64x64xbf16>
  %e = tensor.empty() : tensor<1x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%y : tensor<1x2x64x64xbf16>) outs(%e : tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %p3 = tosa.reshape %p, %s3 : (tensor<1x2x64x64xbf16>, !tosa.shape<3>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p3, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  return %o : tensor<2x64x16xbf16>
}

// -----

// No mask: not causal.
// CHECK-LABEL: func.func @full
// CHECK: zero.attention {{.*}} scale 2.500000e-01 :
func.func @full(%q: tensor<2x64x16xbf16>, %kt: tensor<2x16x64xbf16>, %v: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<2.5e-01> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[2, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %r4 = tosa.reshape %r, %s4 : (tensor<2x64x64xbf16>, !tosa.shape<4>) -> tensor<1x2x64x64xbf16>
  %x = tosa.mul %r4, %scale, %sh : (tensor<1x2x64x64xbf16>, tensor<1x1x1x1xbf16>, tensor<1xi8>) -> tensor<1x2x64x64xbf16>
  %e = tensor.empty() : tensor<1x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x64x64xbf16>) outs(%e : tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %p3 = tosa.reshape %p, %s3 : (tensor<1x2x64x64xbf16>, !tosa.shape<3>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p3, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  return %o : tensor<2x64x16xbf16>
}

// -----

// Left alone: a mask hiding the diagonal too (not causal attention).
// CHECK-LABEL: func.func @diagonal_hidden
// CHECK-NOT: zero.attention
// CHECK: linalg.softmax
func.func @diagonal_hidden(%q: tensor<2x64x16xbf16>, %kt: tensor<2x16x64xbf16>, %v: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<2.5e-01> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[2, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %r4 = tosa.reshape %r, %s4 : (tensor<2x64x64xbf16>, !tosa.shape<4>) -> tensor<1x2x64x64xbf16>
  %x = tosa.mul %r4, %scale, %sh : (tensor<1x2x64x64xbf16>, tensor<1x1x1x1xbf16>, tensor<1xi8>) -> tensor<1x2x64x64xbf16>
  %mask = "tosa.const"() <{values = dense<"0xFFFFFFFFFFFFFFFFFEFFFFFFFFFFFFFFFCFFFFFFFFFFFFFFF8FFFFFFFFFFFFFFF0FFFFFFFFFFFFFFE0FFFFFFFFFFFFFFC0FFFFFFFFFFFFFF80FFFFFFFFFFFFFF00FFFFFFFFFFFFFF00FEFFFFFFFFFFFF00FCFFFFFFFFFFFF00F8FFFFFFFFFFFF00F0FFFFFFFFFFFF00E0FFFFFFFFFFFF00C0FFFFFFFFFFFF0080FFFFFFFFFFFF0000FFFFFFFFFFFF0000FEFFFFFFFFFF0000FCFFFFFFFFFF0000F8FFFFFFFFFF0000F0FFFFFFFFFF0000E0FFFFFFFFFF0000C0FFFFFFFFFF000080FFFFFFFFFF000000FFFFFFFFFF000000FEFFFFFFFF000000FCFFFFFFFF000000F8FFFFFFFF000000F0FFFFFFFF000000E0FFFFFFFF000000C0FFFFFFFF00000080FFFFFFFF00000000FFFFFFFF00000000FEFFFFFF00000000FCFFFFFF00000000F8FFFFFF00000000F0FFFFFF00000000E0FFFFFF00000000C0FFFFFF0000000080FFFFFF0000000000FFFFFF0000000000FEFFFF0000000000FCFFFF0000000000F8FFFF0000000000F0FFFF0000000000E0FFFF0000000000C0FFFF000000000080FFFF000000000000FFFF000000000000FEFF000000000000FCFF000000000000F8FF000000000000F0FF000000000000E0FF000000000000C0FF00000000000080FF00000000000000FF00000000000000FE00000000000000FC00000000000000F800000000000000F000000000000000E000000000000000C00000000000000080"> : tensor<1x1x64x64xi1>}> : () -> tensor<1x1x64x64xi1>
  %fill = "tosa.const"() <{values = dense<0xFF80> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %y = tosa.select %mask, %fill, %x : (tensor<1x1x64x64xi1>, tensor<1x1x1x1xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %e = tensor.empty() : tensor<1x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%y : tensor<1x2x64x64xbf16>) outs(%e : tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %p3 = tosa.reshape %p, %s3 : (tensor<1x2x64x64xbf16>, !tosa.shape<3>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p3, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  return %o : tensor<2x64x16xbf16>
}

// -----

// Left alone: a fill of -100, above max-fill (exp(-100 - max) need not be 0).
// CHECK-LABEL: func.func @weak_fill
// CHECK-NOT: zero.attention
// CHECK: linalg.softmax
func.func @weak_fill(%q: tensor<2x64x16xbf16>, %kt: tensor<2x16x64xbf16>, %v: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<2.5e-01> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[2, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %r4 = tosa.reshape %r, %s4 : (tensor<2x64x64xbf16>, !tosa.shape<4>) -> tensor<1x2x64x64xbf16>
  %x = tosa.mul %r4, %scale, %sh : (tensor<1x2x64x64xbf16>, tensor<1x1x1x1xbf16>, tensor<1xi8>) -> tensor<1x2x64x64xbf16>
  %mask = "tosa.const"() <{values = dense<"0xFEFFFFFFFFFFFFFFFCFFFFFFFFFFFFFFF8FFFFFFFFFFFFFFF0FFFFFFFFFFFFFFE0FFFFFFFFFFFFFFC0FFFFFFFFFFFFFF80FFFFFFFFFFFFFF00FFFFFFFFFFFFFF00FEFFFFFFFFFFFF00FCFFFFFFFFFFFF00F8FFFFFFFFFFFF00F0FFFFFFFFFFFF00E0FFFFFFFFFFFF00C0FFFFFFFFFFFF0080FFFFFFFFFFFF0000FFFFFFFFFFFF0000FEFFFFFFFFFF0000FCFFFFFFFFFF0000F8FFFFFFFFFF0000F0FFFFFFFFFF0000E0FFFFFFFFFF0000C0FFFFFFFFFF000080FFFFFFFFFF000000FFFFFFFFFF000000FEFFFFFFFF000000FCFFFFFFFF000000F8FFFFFFFF000000F0FFFFFFFF000000E0FFFFFFFF000000C0FFFFFFFF00000080FFFFFFFF00000000FFFFFFFF00000000FEFFFFFF00000000FCFFFFFF00000000F8FFFFFF00000000F0FFFFFF00000000E0FFFFFF00000000C0FFFFFF0000000080FFFFFF0000000000FFFFFF0000000000FEFFFF0000000000FCFFFF0000000000F8FFFF0000000000F0FFFF0000000000E0FFFF0000000000C0FFFF000000000080FFFF000000000000FFFF000000000000FEFF000000000000FCFF000000000000F8FF000000000000F0FF000000000000E0FF000000000000C0FF00000000000080FF00000000000000FF00000000000000FE00000000000000FC00000000000000F800000000000000F000000000000000E000000000000000C000000000000000800000000000000000"> : tensor<1x1x64x64xi1>}> : () -> tensor<1x1x64x64xi1>
  %fill = "tosa.const"() <{values = dense<-1.000000e+02> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %y = tosa.select %mask, %fill, %x : (tensor<1x1x64x64xi1>, tensor<1x1x1x1xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %e = tensor.empty() : tensor<1x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%y : tensor<1x2x64x64xbf16>) outs(%e : tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %p3 = tosa.reshape %p, %s3 : (tensor<1x2x64x64xbf16>, !tosa.shape<3>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p3, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  return %o : tensor<2x64x16xbf16>
}

// -----

// Left alone: the probabilities used again (returned).
// CHECK-LABEL: func.func @probs_used
// CHECK-NOT: zero.attention
// CHECK: linalg.softmax
func.func @probs_used(%q: tensor<2x64x16xbf16>, %kt: tensor<2x16x64xbf16>, %v: tensor<2x64x16xbf16>) -> (tensor<2x64x16xbf16>, tensor<1x2x64x64xbf16>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scale = "tosa.const"() <{values = dense<2.5e-01> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[2, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %r4 = tosa.reshape %r, %s4 : (tensor<2x64x64xbf16>, !tosa.shape<4>) -> tensor<1x2x64x64xbf16>
  %x = tosa.mul %r4, %scale, %sh : (tensor<1x2x64x64xbf16>, tensor<1x1x1x1xbf16>, tensor<1xi8>) -> tensor<1x2x64x64xbf16>
  %e = tensor.empty() : tensor<1x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%x : tensor<1x2x64x64xbf16>) outs(%e : tensor<1x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  %p3 = tosa.reshape %p, %s3 : (tensor<1x2x64x64xbf16>, !tosa.shape<3>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p3, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  return %o, %p : tensor<2x64x16xbf16>, tensor<1x2x64x64xbf16>
}

// -----
// Left alone: f32 (no tensor-core products).
// CHECK-LABEL: func.func @f32
// CHECK-NOT: zero.attention
// CHECK: linalg.softmax
func.func @f32(%q: tensor<2x64x16xf32>, %kt: tensor<2x16x64xf32>, %v: tensor<2x64x16xf32>) -> tensor<2x64x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xf32>, tensor<2x16x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x64x64xf32>
  %e = tensor.empty() : tensor<2x64x64xf32>
  %p = linalg.softmax dimension(2) ins(%mm : tensor<2x64x64xf32>) outs(%e : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<2x64x64xf32>, tensor<2x64x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x64x16xf32>
  return %o : tensor<2x64x16xf32>
}

// -----

// Rank 3, no reshape, no scale; but 48 queries: no 64-row blocks. Left
// alone; the same with 64 queries is formed (scale 1).
// CHECK-LABEL: func.func @rows_48
// CHECK-NOT: zero.attention
// CHECK: linalg.softmax
func.func @rows_48(%q: tensor<2x48x16xbf16>, %kt: tensor<2x16x64xbf16>, %v: tensor<2x64x16xbf16>) -> tensor<2x48x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x48x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x48x64xf32>
  %r = tosa.cast %mm : (tensor<2x48x64xf32>) -> tensor<2x48x64xbf16>
  %e = tensor.empty() : tensor<2x48x64xbf16>
  %p = linalg.softmax dimension(2) ins(%r : tensor<2x48x64xbf16>) outs(%e : tensor<2x48x64xbf16>) -> tensor<2x48x64xbf16>
  %pv = tosa.matmul %p, %v, %zp, %zp : (tensor<2x48x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x48x16xf32>
  %o = tosa.cast %pv : (tensor<2x48x16xf32>) -> tensor<2x48x16xbf16>
  return %o : tensor<2x48x16xbf16>
}

// -----

// CHECK-LABEL: func.func @rows_64
// CHECK: zero.attention {{.*}} scale 1.000000e+00 : tensor<2x64x16xbf16>
func.func @rows_64(%q: tensor<2x64x16xbf16>, %kt: tensor<2x16x64xbf16>, %v: tensor<2x64x16xbf16>) -> tensor<2x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %e = tensor.empty() : tensor<2x64x64xbf16>
  %p = linalg.softmax dimension(2) ins(%r : tensor<2x64x64xbf16>) outs(%e : tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  return %o : tensor<2x64x16xbf16>
}

// -----

// The heads of [B, T, H, D] projections, transposed to [B, H, T, D] and
// merged to [B * H, T, D] as imported, the output transposed back: the op
// takes them as they lie (seq_dim 1), and no transpose is left.
// CHECK-LABEL: func.func @heads_as_stored
// CHECK-SAME: (%[[X:.*]]: tensor<1x64x2x16xbf16>, %[[K:.*]]: tensor<1x64x2x16xbf16>, %[[V:.*]]: tensor<1x64x2x16xbf16>)
// CHECK-NOT: tosa.transpose
// CHECK: %[[O:.*]]:2 = zero.attention %[[X]], %[[K]], %[[V]] into %{{.*}}, %{{.*}} scale 1.000000e+00 seq_dim 1 : tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1x64x2x16xbf16>, tensor<1x64x2xf32> -> tensor<1x64x2x16xbf16>, tensor<1x64x2xf32>
// CHECK-NOT: tosa.transpose
// CHECK: return %[[O]]#0
func.func @heads_as_stored(%x: tensor<1x64x2x16xbf16>, %kx: tensor<1x64x2x16xbf16>, %vx: tensor<1x64x2x16xbf16>) -> tensor<1x64x2x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %s3 = tosa.const_shape {values = dense<[2, 64, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %st = tosa.const_shape {values = dense<[2, 16, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q4 = tosa.transpose %x {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %q = tosa.reshape %q4, %s3 : (tensor<1x2x64x16xbf16>, !tosa.shape<3>) -> tensor<2x64x16xbf16>
  %kt4 = tosa.transpose %kx {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x16x64xbf16>
  %kt = tosa.reshape %kt4, %st : (tensor<1x2x16x64xbf16>, !tosa.shape<3>) -> tensor<2x16x64xbf16>
  %v4 = tosa.transpose %vx {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %v = tosa.reshape %v4, %s3 : (tensor<1x2x64x16xbf16>, !tosa.shape<3>) -> tensor<2x64x16xbf16>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %e = tensor.empty() : tensor<2x64x64xbf16>
  %p = linalg.softmax dimension(2) ins(%r : tensor<2x64x64xbf16>) outs(%e : tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  %o4 = tosa.reshape %o, %s4 : (tensor<2x64x16xbf16>, !tosa.shape<4>) -> tensor<1x2x64x16xbf16>
  %y = tosa.transpose %o4 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x2x64x16xbf16>) -> tensor<1x64x2x16xbf16>
  return %y : tensor<1x64x2x16xbf16>
}

// -----

// [T, B, H, D] the same way: seq_dim 0.
// CHECK-LABEL: func.func @sequence_first
// CHECK-NOT: tosa.transpose
// CHECK: zero.attention {{.*}} seq_dim 0 : tensor<64x1x2x16xbf16>, {{.*}} -> tensor<64x1x2x16xbf16>, tensor<64x1x2xf32>
// CHECK-NOT: tosa.transpose
func.func @sequence_first(%x: tensor<64x1x2x16xbf16>, %kx: tensor<64x1x2x16xbf16>, %vx: tensor<64x1x2x16xbf16>) -> tensor<64x1x2x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %s3 = tosa.const_shape {values = dense<[2, 64, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %st = tosa.const_shape {values = dense<[2, 16, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q4 = tosa.transpose %x {perms = array<i32: 1, 2, 0, 3>} : (tensor<64x1x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %q = tosa.reshape %q4, %s3 : (tensor<1x2x64x16xbf16>, !tosa.shape<3>) -> tensor<2x64x16xbf16>
  %kt4 = tosa.transpose %kx {perms = array<i32: 1, 2, 3, 0>} : (tensor<64x1x2x16xbf16>) -> tensor<1x2x16x64xbf16>
  %kt = tosa.reshape %kt4, %st : (tensor<1x2x16x64xbf16>, !tosa.shape<3>) -> tensor<2x16x64xbf16>
  %v4 = tosa.transpose %vx {perms = array<i32: 1, 2, 0, 3>} : (tensor<64x1x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %v = tosa.reshape %v4, %s3 : (tensor<1x2x64x16xbf16>, !tosa.shape<3>) -> tensor<2x64x16xbf16>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %e = tensor.empty() : tensor<2x64x64xbf16>
  %p = linalg.softmax dimension(2) ins(%r : tensor<2x64x64xbf16>) outs(%e : tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  %o4 = tosa.reshape %o, %s4 : (tensor<2x64x16xbf16>, !tosa.shape<4>) -> tensor<1x2x64x16xbf16>
  %y = tosa.transpose %o4 {perms = array<i32: 2, 0, 1, 3>} : (tensor<1x2x64x16xbf16>) -> tensor<64x1x2x16xbf16>
  return %y : tensor<64x1x2x16xbf16>
}

// -----

// The output used as [B * H, T, D]: the op on the merged heads, as
// before.
// CHECK-LABEL: func.func @output_kept
// CHECK: zero.attention {{.*}} scale 1.000000e+00 : tensor<2x64x16xbf16>
func.func @output_kept(%x: tensor<1x64x2x16xbf16>, %kx: tensor<1x64x2x16xbf16>, %vx: tensor<1x64x2x16xbf16>) -> tensor<2x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %s3 = tosa.const_shape {values = dense<[2, 64, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %st = tosa.const_shape {values = dense<[2, 16, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q4 = tosa.transpose %x {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %q = tosa.reshape %q4, %s3 : (tensor<1x2x64x16xbf16>, !tosa.shape<3>) -> tensor<2x64x16xbf16>
  %kt4 = tosa.transpose %kx {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x16x64xbf16>
  %kt = tosa.reshape %kt4, %st : (tensor<1x2x16x64xbf16>, !tosa.shape<3>) -> tensor<2x16x64xbf16>
  %v4 = tosa.transpose %vx {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %v = tosa.reshape %v4, %s3 : (tensor<1x2x64x16xbf16>, !tosa.shape<3>) -> tensor<2x64x16xbf16>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %e = tensor.empty() : tensor<2x64x64xbf16>
  %p = linalg.softmax dimension(2) ins(%r : tensor<2x64x64xbf16>) outs(%e : tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  return %o : tensor<2x64x16xbf16>
}

// -----

// The output transposed to another layout than the inputs': as before.
// CHECK-LABEL: func.func @heads_swapped
// CHECK: zero.attention {{.*}} scale 1.000000e+00 : tensor<2x64x16xbf16>
func.func @heads_swapped(%x: tensor<1x64x2x16xbf16>, %kx: tensor<1x64x2x16xbf16>, %vx: tensor<1x64x2x16xbf16>) -> tensor<2x1x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %s3 = tosa.const_shape {values = dense<[2, 64, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %st = tosa.const_shape {values = dense<[2, 16, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s4 = tosa.const_shape {values = dense<[1, 2, 64, 16]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %q4 = tosa.transpose %x {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %q = tosa.reshape %q4, %s3 : (tensor<1x2x64x16xbf16>, !tosa.shape<3>) -> tensor<2x64x16xbf16>
  %kt4 = tosa.transpose %kx {perms = array<i32: 0, 2, 3, 1>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x16x64xbf16>
  %kt = tosa.reshape %kt4, %st : (tensor<1x2x16x64xbf16>, !tosa.shape<3>) -> tensor<2x16x64xbf16>
  %v4 = tosa.transpose %vx {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x64x2x16xbf16>) -> tensor<1x2x64x16xbf16>
  %v = tosa.reshape %v4, %s3 : (tensor<1x2x64x16xbf16>, !tosa.shape<3>) -> tensor<2x64x16xbf16>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<2x64x16xbf16>, tensor<2x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x64xf32>
  %r = tosa.cast %mm : (tensor<2x64x64xf32>) -> tensor<2x64x64xbf16>
  %e = tensor.empty() : tensor<2x64x64xbf16>
  %p = linalg.softmax dimension(2) ins(%r : tensor<2x64x64xbf16>) outs(%e : tensor<2x64x64xbf16>) -> tensor<2x64x64xbf16>
  %pv = tosa.matmul %p, %v, %zp, %zp : (tensor<2x64x64xbf16>, tensor<2x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<2x64x16xf32>
  %o = tosa.cast %pv : (tensor<2x64x16xf32>) -> tensor<2x64x16xbf16>
  %o4 = tosa.reshape %o, %s4 : (tensor<2x64x16xbf16>, !tosa.shape<4>) -> tensor<1x2x64x16xbf16>
  %y = tosa.transpose %o4 {perms = array<i32: 1, 0, 2, 3>} : (tensor<1x2x64x16xbf16>) -> tensor<2x1x64x16xbf16>
  return %y : tensor<2x1x64x16xbf16>
}

// -----

// A dropout of the probabilities as the importer gives it (its mask a
// generic marked with its draw, from the counter argument; the
// probabilities times a factor, selected with 0), over [B, H, Tq, Tk]
// with the pairs merged for the products: the op takes the draw, the
// factor and the counter's words, its operands split as the mask's pairs
// are, its output merged again. Neither the mask nor the probabilities
// stay.
// CHECK-LABEL: func.func @dropout
// CHECK-SAME: %[[RNG:[a-z0-9]+]]: tensor<2xi64>
// CHECK-DAG: %[[STEP:.*]] = tensor.extract %[[RNG]][%c0]
// CHECK-DAG: %[[MB:.*]] = tensor.extract %[[RNG]][%c1]
// CHECK: %[[O:.*]]:2 = zero.attention %{{.*}}, %{{.*}}, %{{.*}} into %{{.*}}, %{{.*}} scale 1.000000e+00 dropout <seed = 5, stream = 2, keep = 15099494> scaled 1.109375 rng(%[[STEP]], %[[MB]]) : tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16>, tensor<2x2x64x16xbf16>, tensor<2x2x64xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.softmax
// CHECK: %[[R:.*]] = tosa.reshape %[[O]]#0
// CHECK: return %[[R]] : tensor<4x64x16xbf16>
func.func @dropout(%q: tensor<4x64x16xbf16>, %kt: tensor<4x16x64xbf16>, %v: tensor<4x64x16xbf16>, %rng: tensor<2xi64> {zero.role = #zero.role<rng>}) -> tensor<4x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %s4 = tosa.const_shape {values = dense<[2, 2, 64, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[4, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<4x64x16xbf16>, tensor<4x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<4x64x64xf32>
  %r = tosa.cast %mm : (tensor<4x64x64xf32>) -> tensor<4x64x64xbf16>
  %r4 = tosa.reshape %r, %s4 : (tensor<4x64x64xbf16>, !tosa.shape<4>) -> tensor<2x2x64x64xbf16>
  %e = tensor.empty() : tensor<2x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%r4 : tensor<2x2x64x64xbf16>) outs(%e : tensor<2x2x64x64xbf16>) -> tensor<2x2x64x64xbf16>
  %c0 = arith.constant 0 : index
  %step = tensor.extract %rng[%c0] : tensor<2xi64>
  %mi = tensor.empty() : tensor<2x2x64x64xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%mi : tensor<2x2x64x64xi1>) attrs = {zero.dropout_mask = #zero.dropout_mask<seed = 5, stream = 2, keep = 15099494>} {
  ^bb0(%out: i1):
    %i = linalg.index 3 : index
    %w = arith.index_cast %i : index to i64
    %k = arith.cmpi ult, %w, %step : i64
    linalg.yield %k : i1
  } -> tensor<2x2x64x64xi1>
  %f = "tosa.const"() <{values = dense<1.109375> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scaled = tosa.mul %p, %f, %sh : (tensor<2x2x64x64xbf16>, tensor<1x1x1x1xbf16>, tensor<1xi8>) -> tensor<2x2x64x64xbf16>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %d = tosa.select %mask, %scaled, %z : (tensor<2x2x64x64xi1>, tensor<2x2x64x64xbf16>, tensor<1x1x1x1xbf16>) -> tensor<2x2x64x64xbf16>
  %d3 = tosa.reshape %d, %s3 : (tensor<2x2x64x64xbf16>, !tosa.shape<3>) -> tensor<4x64x64xbf16>
  %pv = tosa.matmul %d3, %v, %zp, %zp : (tensor<4x64x64xbf16>, tensor<4x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<4x64x16xf32>
  %o = tosa.cast %pv : (tensor<4x64x16xf32>) -> tensor<4x64x16xbf16>
  return %o : tensor<4x64x16xbf16>
}

// -----

// A select of the probabilities by a mask the importer did not mark:
// not a dropout the kernels can draw, so nothing is formed.
// CHECK-LABEL: func.func @dropout_unmarked
// CHECK-NOT: zero.attention
// CHECK: linalg.softmax
func.func @dropout_unmarked(%q: tensor<4x64x16xbf16>, %kt: tensor<4x16x64xbf16>, %v: tensor<4x64x16xbf16>, %rng: tensor<2xi64> {zero.role = #zero.role<rng>}) -> tensor<4x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %s4 = tosa.const_shape {values = dense<[2, 2, 64, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[4, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<4x64x16xbf16>, tensor<4x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<4x64x64xf32>
  %r = tosa.cast %mm : (tensor<4x64x64xf32>) -> tensor<4x64x64xbf16>
  %r4 = tosa.reshape %r, %s4 : (tensor<4x64x64xbf16>, !tosa.shape<4>) -> tensor<2x2x64x64xbf16>
  %e = tensor.empty() : tensor<2x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%r4 : tensor<2x2x64x64xbf16>) outs(%e : tensor<2x2x64x64xbf16>) -> tensor<2x2x64x64xbf16>
  %c0 = arith.constant 0 : index
  %step = tensor.extract %rng[%c0] : tensor<2xi64>
  %mi = tensor.empty() : tensor<2x2x64x64xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%mi : tensor<2x2x64x64xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 3 : index
    %w = arith.index_cast %i : index to i64
    %k = arith.cmpi ult, %w, %step : i64
    linalg.yield %k : i1
  } -> tensor<2x2x64x64xi1>
  %f = "tosa.const"() <{values = dense<1.109375> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scaled = tosa.mul %p, %f, %sh : (tensor<2x2x64x64xbf16>, tensor<1x1x1x1xbf16>, tensor<1xi8>) -> tensor<2x2x64x64xbf16>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %d = tosa.select %mask, %scaled, %z : (tensor<2x2x64x64xi1>, tensor<2x2x64x64xbf16>, tensor<1x1x1x1xbf16>) -> tensor<2x2x64x64xbf16>
  %d3 = tosa.reshape %d, %s3 : (tensor<2x2x64x64xbf16>, !tosa.shape<3>) -> tensor<4x64x64xbf16>
  %pv = tosa.matmul %d3, %v, %zp, %zp : (tensor<4x64x64xbf16>, tensor<4x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<4x64x16xf32>
  %o = tosa.cast %pv : (tensor<4x64x16xf32>) -> tensor<4x64x16xbf16>
  return %o : tensor<4x64x16xbf16>
}

// -----

// A marked mask whose body reads a value other than the counter's: not
// formed.
// CHECK-LABEL: func.func @dropout_other_counter
// CHECK-NOT: zero.attention
// CHECK: linalg.softmax
func.func @dropout_other_counter(%q: tensor<4x64x16xbf16>, %kt: tensor<4x16x64xbf16>, %v: tensor<4x64x16xbf16>, %rng: tensor<2xi64> {zero.role = #zero.role<rng>}, %other: tensor<2xi64>) -> tensor<4x64x16xbf16> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xbf16>}> : () -> tensor<1xbf16>
  %s4 = tosa.const_shape {values = dense<[2, 2, 64, 64]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %s3 = tosa.const_shape {values = dense<[4, 64, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %mm = tosa.matmul %q, %kt, %zp, %zp : (tensor<4x64x16xbf16>, tensor<4x16x64xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<4x64x64xf32>
  %r = tosa.cast %mm : (tensor<4x64x64xf32>) -> tensor<4x64x64xbf16>
  %r4 = tosa.reshape %r, %s4 : (tensor<4x64x64xbf16>, !tosa.shape<4>) -> tensor<2x2x64x64xbf16>
  %e = tensor.empty() : tensor<2x2x64x64xbf16>
  %p = linalg.softmax dimension(3) ins(%r4 : tensor<2x2x64x64xbf16>) outs(%e : tensor<2x2x64x64xbf16>) -> tensor<2x2x64x64xbf16>
  %c0 = arith.constant 0 : index
  %step = tensor.extract %other[%c0] : tensor<2xi64>
  %mi = tensor.empty() : tensor<2x2x64x64xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%mi : tensor<2x2x64x64xi1>) attrs = {zero.dropout_mask = #zero.dropout_mask<seed = 5, stream = 2, keep = 15099494>} {
  ^bb0(%out: i1):
    %i = linalg.index 3 : index
    %w = arith.index_cast %i : index to i64
    %k = arith.cmpi ult, %w, %step : i64
    linalg.yield %k : i1
  } -> tensor<2x2x64x64xi1>
  %f = "tosa.const"() <{values = dense<1.109375> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %scaled = tosa.mul %p, %f, %sh : (tensor<2x2x64x64xbf16>, tensor<1x1x1x1xbf16>, tensor<1xi8>) -> tensor<2x2x64x64xbf16>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1x1xbf16>}> : () -> tensor<1x1x1x1xbf16>
  %d = tosa.select %mask, %scaled, %z : (tensor<2x2x64x64xi1>, tensor<2x2x64x64xbf16>, tensor<1x1x1x1xbf16>) -> tensor<2x2x64x64xbf16>
  %d3 = tosa.reshape %d, %s3 : (tensor<2x2x64x64xbf16>, !tosa.shape<3>) -> tensor<4x64x64xbf16>
  %pv = tosa.matmul %d3, %v, %zp, %zp : (tensor<4x64x64xbf16>, tensor<4x64x16xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<4x64x16xf32>
  %o = tosa.cast %pv : (tensor<4x64x16xf32>) -> tensor<4x64x16xbf16>
  return %o : tensor<4x64x16xbf16>
}
