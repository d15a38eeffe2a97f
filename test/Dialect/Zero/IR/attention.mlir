// RUN: zero-opt %s --split-input-file | zero-opt --split-input-file | FileCheck %s
// RUN: zero-opt %s --split-input-file --canonicalize --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @tensors
// CHECK: %{{.*}}:2 = zero.attention %arg0, %arg1, %arg2 into %{{.*}}, %{{.*}} scale 1.250000e-01 causal : tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>, tensor<2x4x64xf32> -> tensor<2x4x64x16xbf16>, tensor<2x4x64xf32>
// The destinations are written, never read: no copy of the empty tensors,
// and the op on buffers writes the allocations.
// BUF-LABEL: func.func @tensors
// BUF-DAG: %[[O:.*]] = memref.alloc() {{.*}} : memref<2x4x64x16xbf16>
// BUF-DAG: %[[L:.*]] = memref.alloc() {{.*}} : memref<2x4x64xf32>
// BUF-NOT: memref.copy
// BUF: zero.attention %{{.*}}, %{{.*}}, %{{.*}} into %[[O]], %[[L]] scale 1.250000e-01 causal : memref<2x4x64x16xbf16>, memref<2x4x64x16xbf16>, memref<2x4x64x16xbf16>, memref<2x4x64x16xbf16>, memref<2x4x64xf32>{{$}}
// BUF: return %[[O]], %[[L]]
func.func @tensors(%q: tensor<2x4x64x16xbf16>, %k: tensor<2x4x64x16xbf16>, %v: tensor<2x4x64x16xbf16>) -> (tensor<2x4x64x16xbf16>, tensor<2x4x64xf32>) {
  %o = tensor.empty() : tensor<2x4x64x16xbf16>
  %l = tensor.empty() : tensor<2x4x64xf32>
  %r:2 = zero.attention %q, %k, %v into %o, %l scale 0.125 causal
      : tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>,
        tensor<2x4x64x16xbf16>, tensor<2x4x64xf32>
      -> tensor<2x4x64x16xbf16>, tensor<2x4x64xf32>
  return %r#0, %r#1 : tensor<2x4x64x16xbf16>, tensor<2x4x64xf32>
}

// -----

// More keys than queries, rank 3, f16; on buffers the op has no results and
// declares what it reads and writes (a dead one stays).
// CHECK-LABEL: func.func @buffers
// CHECK: zero.attention %arg0, %arg1, %arg2 into %arg3, %arg4 scale 2.500000e-01 : memref<3x64x32xf16>, memref<3x192x32xf16>, memref<3x192x32xf16>, memref<3x64x32xf16>, memref<3x64xf32>{{$}}
// BUF-LABEL: func.func @buffers
// BUF: zero.attention
func.func @buffers(%q: memref<3x64x32xf16>, %k: memref<3x192x32xf16>, %v: memref<3x192x32xf16>, %o: memref<3x64x32xf16>, %l: memref<3x64xf32>) {
  zero.attention %q, %k, %v into %o, %l scale 0.25
      : memref<3x64x32xf16>, memref<3x192x32xf16>, memref<3x192x32xf16>,
        memref<3x64x32xf16>, memref<3x64xf32>
  return
}

// -----

// The gradient on tensors: three results; bufferized, the three
// destinations are written in place of empty tensors, none copied.
// CHECK-LABEL: func.func @grad
// CHECK: %{{.*}}:3 = zero.attention_grad %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 into %{{.*}}, %{{.*}}, %{{.*}} scale 1.250000e-01 causal : tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16> -> tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>
// BUF-LABEL: func.func @grad
// BUF-COUNT-3: memref.alloc() {{.*}} : memref<2x64x16xbf16>
// BUF-NOT: memref.copy
// BUF: zero.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} into %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] scale 1.250000e-01 causal : memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64xf32>, memref<2x64xf32>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>{{$}}
// BUF: return %[[DQ]], %[[DK]], %[[DV]]
func.func @grad(%q: tensor<2x64x16xbf16>, %k: tensor<2x64x16xbf16>, %v: tensor<2x64x16xbf16>, %do: tensor<2x64x16xbf16>, %l: tensor<2x64xf32>, %dl: tensor<2x64xf32>) -> (tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>) {
  %dqi = tensor.empty() : tensor<2x64x16xbf16>
  %dki = tensor.empty() : tensor<2x64x16xbf16>
  %dvi = tensor.empty() : tensor<2x64x16xbf16>
  %r:3 = zero.attention_grad %q, %k, %v, %do, %l, %dl into %dqi, %dki, %dvi scale 0.125 causal
      : tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>,
        tensor<2x64x16xbf16>, tensor<2x64xf32>, tensor<2x64xf32>,
        tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>
      -> tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>
  return %r#0, %r#1, %r#2 : tensor<2x64x16xbf16>, tensor<2x64x16xbf16>, tensor<2x64x16xbf16>
}

// -----

// On buffers, more keys than queries, f32: no results; what it reads and
// writes is declared, so the op stays though nothing reads its writes.
// CHECK-LABEL: func.func @grad_buffers
// CHECK: zero.attention_grad %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 into %arg6, %arg7, %arg8 scale 5.000000e-01 : memref<64x8xf32>, memref<128x8xf32>, memref<128x8xf32>, memref<64x8xf32>, memref<64xf32>, memref<64xf32>, memref<64x8xf32>, memref<128x8xf32>, memref<128x8xf32>{{$}}
// BUF-LABEL: func.func @grad_buffers
// BUF: zero.attention_grad
func.func @grad_buffers(%q: memref<64x8xf32>, %k: memref<128x8xf32>, %v: memref<128x8xf32>, %do: memref<64x8xf32>, %l: memref<64xf32>, %dl: memref<64xf32>, %dq: memref<64x8xf32>, %dk: memref<128x8xf32>, %dv: memref<128x8xf32>) {
  zero.attention_grad %q, %k, %v, %do, %l, %dl into %dq, %dk, %dv scale 0.5
      : memref<64x8xf32>, memref<128x8xf32>, memref<128x8xf32>,
        memref<64x8xf32>, memref<64xf32>, memref<64xf32>, memref<64x8xf32>,
        memref<128x8xf32>, memref<128x8xf32>
  return
}

// -----

// The heads as a projection lays them out ([B, T, H, D], seq_dim 1), the
// keys strided views of it; the log-sum-exp is [B, T, H].
// CHECK-LABEL: func.func @seq_dim
// CHECK: zero.attention %arg0, %arg1, %arg1 into %arg2, %arg3 scale 5.000000e-01 causal seq_dim 1 : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1]>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>{{$}}
// CHECK: zero.attention_grad {{.*}} scale 5.000000e-01 causal seq_dim 1 :
func.func @seq_dim(%q: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1]>>, %k: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, %o: memref<2x128x3x32xbf16>, %l: memref<2x128x3xf32>) {
  zero.attention %q, %k, %k into %o, %l scale 0.5 causal seq_dim 1 : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1]>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>
  zero.attention_grad %o, %o, %o, %o, %l, %l into %o, %o, %o scale 0.5 causal seq_dim 1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>, memref<2x128x3xf32>, memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
  return
}

// -----

// A dropout of the probabilities: the mask's draw, the kept values'
// factor, and the step and micro-batch it is drawn at.
// CHECK-LABEL: func.func @dropout
// CHECK: zero.attention %arg0, %arg0, %arg0 into %arg0, %arg1 scale 2.500000e-01 causal seq_dim 1 dropout <seed = 7, stream = 3, keep = 15099494> scaled 1.109375 rng(%arg2, %arg3) : memref<2x64x3x16xbf16>
// CHECK: zero.attention_grad {{.*}} scale 2.500000e-01 causal seq_dim 1 dropout <seed = 7, stream = 3, keep = 15099494> scaled 1.109375 rng(%arg2, %arg3) : memref<2x64x3x16xbf16>
func.func @dropout(%q: memref<2x64x3x16xbf16>, %l: memref<2x64x3xf32>, %step: i64, %mb: i64) {
  zero.attention %q, %q, %q into %q, %l scale 0.25 causal seq_dim 1 dropout <seed = 7, stream = 3, keep = 15099494> scaled 1.109375 rng(%step, %mb) : memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>
  zero.attention_grad %q, %q, %q, %q, %l, %l into %q, %q, %q scale 0.25 causal seq_dim 1 dropout <seed = 7, stream = 3, keep = 15099494> scaled 1.109375 rng(%step, %mb) : memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>, memref<2x64x3xf32>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>
  return
}
