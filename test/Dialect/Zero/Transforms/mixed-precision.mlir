// RUN: zero-opt %s --split-input-file --zero-mixed-precision | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-mixed-precision=precision=fp16 | FileCheck %s --check-prefix=F16

// A GEMM reads 16-bit operands and accumulates in fp32; parameters become
// 16-bit arguments; the bias add and the activation run in 16 bits; the
// softmax-like statistics run in fp32 (a reduction, then x - max computed
// in fp32 and rounded); what only the loss reads stays fp32; the results
// keep their types.
// CHECK-LABEL: func.func @layer
// CHECK-SAME: %[[X:.*]]: tensor<1x4x8xf32>, %[[W:.*]]: tensor<1x8x8xbf16> {zero.role = #zero.role<parameter>}, %[[B:.*]]: tensor<1x1x8xbf16> {zero.role = #zero.role<parameter>}
// CHECK-SAME: -> (tensor<f32>, tensor<1x4x8xf32>)
// CHECK: %[[XL:.*]] = tosa.cast %[[X]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xbf16>
// CHECK: %[[MM:.*]] = tosa.matmul %[[XL]], %[[W]], {{.*}} -> tensor<1x4x8xf32>
// CHECK: %[[MML:.*]] = tosa.cast %[[MM]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xbf16>
// CHECK: %[[H:.*]] = tosa.add %[[MML]], %[[B]] : (tensor<1x4x8xbf16>, tensor<1x1x8xbf16>) -> tensor<1x4x8xbf16>
// CHECK: %[[E:.*]] = tosa.exp %[[H]] : (tensor<1x4x8xbf16>) -> tensor<1x4x8xbf16>
// CHECK: %[[EW:.*]] = tosa.cast %[[E]] : (tensor<1x4x8xbf16>) -> tensor<1x4x8xf32>
// CHECK: %[[MAX:.*]] = tosa.reduce_max %[[EW]] {{.*}} -> tensor<1x4x1xf32>
// CHECK: %[[D:.*]] = tosa.sub %{{.*}}, %[[MAX]] : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
// CHECK: %[[DL:.*]] = tosa.cast %[[D]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xbf16>
// CHECK: %[[MM2:.*]] = tosa.matmul %[[DL]], %[[W]], {{.*}} -> tensor<1x4x8xf32>
// CHECK-NOT: tosa.cast %[[MM2]]
// CHECK: %[[BW:.*]] = tosa.cast %[[B]] : (tensor<1x1x8xbf16>) -> tensor<1x1x8xf32>
// CHECK: %[[Y:.*]] = tosa.add %[[MM2]], %[[BW]] : (tensor<1x4x8xf32>, tensor<1x1x8xf32>) -> tensor<1x4x8xf32>
// CHECK: tosa.reduce_sum %[[Y]]
// CHECK: return {{.*}} : tensor<f32>, tensor<1x4x8xf32>
// F16-LABEL: func.func @layer
// F16: tosa.matmul {{.*}} : (tensor<1x4x8xf16>, tensor<1x8x8xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x8xf32>
func.func @layer(%x: tensor<1x4x8xf32>, %w: tensor<1x8x8xf32> {zero.role = #zero.role<parameter>}, %b: tensor<1x1x8xf32> {zero.role = #zero.role<parameter>}) -> (tensor<f32>, tensor<1x4x8xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mm = tosa.matmul %x, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %h = tosa.add %mm, %b : (tensor<1x4x8xf32>, tensor<1x1x8xf32>) -> tensor<1x4x8xf32>
  %e = tosa.exp %h : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %max = tosa.reduce_max %e {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %d = tosa.sub %e, %max : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %mm2 = tosa.matmul %d, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %y = tosa.add %mm2, %b : (tensor<1x4x8xf32>, tensor<1x1x8xf32>) -> tensor<1x4x8xf32>
  %s = tosa.reduce_sum %y {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %s1 = tosa.reduce_sum %s {axis = 1 : i32} : (tensor<1x4x1xf32>) -> tensor<1x1x1xf32>
  %shape = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %loss = tosa.reshape %s1, %shape : (tensor<1x1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %loss, %h : tensor<f32>, tensor<1x4x8xf32>
}


// -----

// A softmax between two GEMMs takes its 16-bit input whole, with a 16-bit
// destination made anew (no cast of undefined values); one that only the
// loss reads computes in fp32.
// CHECK-LABEL: func.func @softmax
// CHECK: %[[MM:.*]] = tosa.matmul {{.*}} -> tensor<1x4x8xf32>
// CHECK: %[[MML:.*]] = tosa.cast %[[MM]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xbf16>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<1x4x8xbf16>
// CHECK: %[[P:.*]] = linalg.softmax dimension(2) ins(%[[MML]] : tensor<1x4x8xbf16>) outs(%[[INIT]] : tensor<1x4x8xbf16>) -> tensor<1x4x8xbf16>
// CHECK: tosa.matmul %[[P]], {{.*}} -> tensor<1x4x8xf32>
// CHECK: linalg.softmax dimension(2) ins(%{{.*}} : tensor<1x4x8xf32>) outs(%{{.*}} : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
func.func @softmax(%x: tensor<1x4x8xf32>, %w: tensor<1x8x8xf32> {zero.role = #zero.role<parameter>}) -> tensor<1x4x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mm = tosa.matmul %x, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %e0 = tensor.empty() : tensor<1x4x8xf32>
  %p = linalg.softmax dimension(2) ins(%mm : tensor<1x4x8xf32>) outs(%e0 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %mm2 = tosa.matmul %p, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %e1 = tensor.empty() : tensor<1x4x8xf32>
  %q = linalg.softmax dimension(2) ins(%mm2 : tensor<1x4x8xf32>) outs(%e1 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %q : tensor<1x4x8xf32>
}
