// RUN: zero-opt %s --zero-gpu-map-attention -split-input-file -verify-diagnostics

// Tensor-core products take 16-bit inputs.
func.func private @f32(%q: memref<64x16xf32>, %l: memref<64xf32>) attributes {zero.kernel = "zero.attention"} {
  // expected-error @below {{zero.attention has no CUDA kernel: its element type is not bf16 or f16 (tensor-core products)}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 : memref<64x16xf32>, memref<64x16xf32>, memref<64x16xf32>, memref<64x16xf32>, memref<64xf32>
  return
}

// -----

func.func private @depth(%q: memref<64x24xbf16>, %l: memref<64xf32>) attributes {zero.kernel = "zero.attention"} {
  // expected-error @below {{zero.attention has no CUDA kernel: its depth 24 is not a multiple of 16 up to 128}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 : memref<64x24xbf16>, memref<64x24xbf16>, memref<64x24xbf16>, memref<64x24xbf16>, memref<64xf32>
  return
}

// -----

func.func private @rows(%q: memref<96x16xbf16>, %l: memref<96xf32>) attributes {zero.kernel = "zero.attention"} {
  // expected-error @below {{zero.attention has no CUDA kernel: its 96 queries and 96 keys are not multiples of 64}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 : memref<96x16xbf16>, memref<96x16xbf16>, memref<96x16xbf16>, memref<96x16xbf16>, memref<96xf32>
  return
}

// -----

// Fragments load pairs of adjacent elements.
func.func private @strided(%q: memref<64x16xbf16, strided<[32, 2]>>, %k: memref<64x16xbf16>, %l: memref<64xf32>) attributes {zero.kernel = "zero.attention"} {
  // expected-error @below {{zero.attention has no CUDA kernel: an operand's last dimension is not contiguous}}
  zero.attention %q, %k, %k into %k, %l scale 1.0 : memref<64x16xbf16, strided<[32, 2]>>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64xf32>
  return
}

// -----

func.func @step(%q: memref<64x16xbf16>, %l: memref<64xf32>) {
  // expected-error @below {{zero.attention is not in a kernel function's body (zero-form-kernels makes them)}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 : memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64xf32>
  return
}

// -----

func.func private @grid(%q: memref<65536x64x16xbf16>, %l: memref<65536x64xf32>) attributes {zero.kernel = "zero.attention"} {
  // expected-error @below {{zero.attention has no CUDA kernel: 65536 (batch, head) pairs are more than a grid's y holds}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 : memref<65536x64x16xbf16>, memref<65536x64x16xbf16>, memref<65536x64x16xbf16>, memref<65536x64x16xbf16>, memref<65536x64xf32>
  return
}

// -----

// The gradient's kernel takes what the forward's does.
func.func private @grad_rows(%q: memref<64x16xbf16>, %k: memref<96x16xbf16>, %l: memref<64xf32>) attributes {zero.kernel = "zero.attention_grad"} {
  // expected-error @below {{zero.attention_grad has no CUDA kernel: its 64 queries and 96 keys are not multiples of 64}}
  zero.attention_grad %q, %k, %k, %q, %l, %l into %q, %k, %k scale 1.0 : memref<64x16xbf16>, memref<96x16xbf16>, memref<96x16xbf16>, memref<64x16xbf16>, memref<64xf32>, memref<64xf32>, memref<64x16xbf16>, memref<96x16xbf16>, memref<96x16xbf16>
  return
}

// -----

func.func private @grad_strided(%q: memref<64x16xbf16>, %l: memref<64xf32>, %d: memref<64xf32, strided<[2]>>) attributes {zero.kernel = "zero.attention_grad"} {
  // expected-error @below {{zero.attention_grad has no CUDA kernel: an operand's last dimension is not contiguous}}
  zero.attention_grad %q, %q, %q, %q, %l, %d into %q, %q, %q scale 1.0 : memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64xf32>, memref<64xf32, strided<[2]>>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>
  return
}

// -----

func.func @grad_step(%q: memref<64x16xbf16>, %l: memref<64xf32>) {
  // expected-error @below {{zero.attention_grad is not in a kernel function's body (zero-form-kernels makes them)}}
  zero.attention_grad %q, %q, %q, %q, %l, %l into %q, %q, %q scale 1.0 : memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64xf32>, memref<64xf32>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>
  return
}
