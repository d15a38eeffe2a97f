// RUN: zero-opt %s --split-input-file --verify-diagnostics

func.func @elem(%q: memref<64x16xi8>, %l: memref<64xf32>) {
  // expected-error @below {{expects bf16, f16 or f32 operands, got 'i8'}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 : memref<64x16xi8>, memref<64x16xi8>, memref<64x16xi8>, memref<64x16xi8>, memref<64xf32>
  return
}

// -----

func.func @mixed(%q: memref<64x16xbf16>, %k: memref<64x16xf16>, %l: memref<64xf32>) {
  // expected-error @below {{expects query, key, value and out of one element type}}
  zero.attention %q, %k, %k into %q, %l scale 1.0 : memref<64x16xbf16>, memref<64x16xf16>, memref<64x16xf16>, memref<64x16xbf16>, memref<64xf32>
  return
}

// -----

func.func @lse_type(%q: memref<64x16xbf16>, %l: memref<64xbf16>) {
  // expected-error @below {{expects an f32 lse, got 'bf16'}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 : memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64xbf16>
  return
}

// -----

func.func @depth(%q: memref<64x16xbf16>, %k: memref<64x32xbf16>, %l: memref<64xf32>) {
  // expected-error @below {{expects key and value of one shape, the query's but for the rows}}
  zero.attention %q, %k, %k into %q, %l scale 1.0 : memref<64x16xbf16>, memref<64x32xbf16>, memref<64x32xbf16>, memref<64x16xbf16>, memref<64xf32>
  return
}

// -----

func.func @lse_shape(%q: memref<2x64x16xbf16>, %l: memref<64xf32>) {
  // expected-error @below {{expects lse shaped as the query without its depth}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 : memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<64xf32>
  return
}

// -----

func.func @causal(%q: memref<64x16xbf16>, %k: memref<128x16xbf16>, %l: memref<64xf32>) {
  // expected-error @below {{causal attention expects as many keys as queries}}
  zero.attention %q, %k, %k into %q, %l scale 1.0 causal : memref<64x16xbf16>, memref<128x16xbf16>, memref<128x16xbf16>, memref<64x16xbf16>, memref<64xf32>
  return
}

// -----

func.func @results(%q: tensor<64x16xbf16>, %l: tensor<64xf32>) {
  // expected-error @below {{returns 2 tensors exactly on tensors}}
  %r = zero.attention %q, %q, %q into %q, %l scale 1.0 : tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64xf32> -> tensor<64x16xbf16>
  return
}

// -----

func.func @out_shape(%q: memref<64x16xbf16>, %o: memref<64x32xbf16>, %l: memref<64xf32>) {
  // expected-error @below {{expects out shaped as the query}}
  zero.attention %q, %q, %q into %o, %l scale 1.0 : memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x32xbf16>, memref<64xf32>
  return
}

// -----

func.func @grad_types(%q: memref<64x16xbf16>, %g: memref<64x16xf16>, %l: memref<64xf32>) {
  // expected-error @below {{expects query, key, value, dout and the gradients of one element type}}
  zero.attention_grad %q, %q, %q, %q, %l, %l into %g, %q, %q scale 1.0 : memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64xf32>, memref<64xf32>, memref<64x16xf16>, memref<64x16xbf16>, memref<64x16xbf16>
  return
}

// -----

func.func @grad_delta(%q: memref<64x16xbf16>, %l: memref<64xf32>, %d: memref<64xbf16>) {
  // expected-error @below {{expects an f32 delta, got 'bf16'}}
  zero.attention_grad %q, %q, %q, %q, %l, %d into %q, %q, %q scale 1.0 : memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64xf32>, memref<64xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>
  return
}

// -----

func.func @grad_dout(%q: memref<64x16xbf16>, %k: memref<128x16xbf16>, %l: memref<64xf32>) {
  // expected-error @below {{expects dout shaped as the query}}
  zero.attention_grad %q, %k, %k, %k, %l, %l into %q, %k, %k scale 1.0 : memref<64x16xbf16>, memref<128x16xbf16>, memref<128x16xbf16>, memref<128x16xbf16>, memref<64xf32>, memref<64xf32>, memref<64x16xbf16>, memref<128x16xbf16>, memref<128x16xbf16>
  return
}

// -----

func.func @grad_dkey(%q: memref<64x16xbf16>, %k: memref<128x16xbf16>, %l: memref<64xf32>) {
  // expected-error @below {{expects dkey shaped as the key}}
  zero.attention_grad %q, %k, %k, %q, %l, %l into %q, %q, %k scale 1.0 : memref<64x16xbf16>, memref<128x16xbf16>, memref<128x16xbf16>, memref<64x16xbf16>, memref<64xf32>, memref<64xf32>, memref<64x16xbf16>, memref<64x16xbf16>, memref<128x16xbf16>
  return
}

// -----

func.func @grad_delta_shape(%q: memref<64x16xbf16>, %l: memref<64xf32>, %d: memref<32xf32>) {
  // expected-error @below {{expects delta shaped as the query without its depth}}
  zero.attention_grad %q, %q, %q, %q, %l, %d into %q, %q, %q scale 1.0 : memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64xf32>, memref<32xf32>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>
  return
}

// -----

func.func @grad_results(%q: tensor<64x16xbf16>, %l: tensor<64xf32>) {
  // expected-error @below {{returns 3 tensors exactly on tensors}}
  %r:2 = zero.attention_grad %q, %q, %q, %q, %l, %l into %q, %q, %q scale 1.0 : tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64xf32>, tensor<64xf32>, tensor<64x16xbf16>, tensor<64x16xbf16>, tensor<64x16xbf16> -> tensor<64x16xbf16>, tensor<64x16xbf16>
  return
}

// -----

func.func @seq_dim_depth(%q: memref<2x64x3x16xbf16>, %l: memref<2x64x3xf32>) {
  // expected-error @below {{expects seq_dim in [0, 2] (the depth is the last dimension), got 3}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 seq_dim 3 : memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>
  return
}

// -----

func.func @seq_dim_negative(%q: memref<2x64x3x16xbf16>, %l: memref<2x64x3xf32>) {
  // expected-error @below {{expects seq_dim in [0, 2] (the depth is the last dimension), got -1}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 seq_dim -1 : memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>
  return
}

// -----

// With seq_dim 1 the keys may differ from the queries in dimension 1 only:
// here they differ in the heads.
func.func @seq_dim_heads(%q: memref<2x64x3x16xbf16>, %k: memref<2x64x4x16xbf16>, %l: memref<2x64x3xf32>) {
  // expected-error @below {{expects key and value of one shape, the query's but for the rows}}
  zero.attention %q, %k, %k into %q, %l scale 1.0 seq_dim 1 : memref<2x64x3x16xbf16>, memref<2x64x4x16xbf16>, memref<2x64x4x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>
  return
}

// -----

func.func @seq_dim_causal(%q: memref<2x64x3x16xbf16>, %k: memref<2x128x3x16xbf16>, %l: memref<2x64x3xf32>) {
  // expected-error @below {{causal attention expects as many keys as queries}}
  zero.attention_grad %q, %k, %k, %q, %l, %l into %q, %k, %k scale 1.0 causal seq_dim 1 : memref<2x64x3x16xbf16>, memref<2x128x3x16xbf16>, memref<2x128x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>, memref<2x64x3xf32>, memref<2x64x3x16xbf16>, memref<2x128x3x16xbf16>, memref<2x128x3x16xbf16>
  return
}

// -----

func.func @dropout_one_word(%q: memref<2x64x3x16xbf16>, %l: memref<2x64x3xf32>, %step: i64) {
  // expected-error @below {{expects dropout, its factor and rng (the step and the micro-batch) together}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 seq_dim 1 dropout <seed = 0, stream = 0, keep = 8388608> scaled 2.0 rng(%step) : memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>
  return
}

// -----

func.func @dropout_no_factor(%q: memref<2x64x3x16xbf16>, %l: memref<2x64x3xf32>, %step: i64) {
  // expected-error @below {{expects dropout, its factor and rng (the step and the micro-batch) together}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 seq_dim 1 {dropout = #zero.dropout_mask<seed = 0, stream = 0, keep = 8388608>} : memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>
  return
}

// -----

func.func @dropout_rows(%q: memref<64x16xbf16>, %l: memref<64xf32>, %step: i64) {
  // expected-error @below {{expects a dimension besides the rows and the depth for the dropout mask's rows}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 dropout <seed = 0, stream = 0, keep = 8388608> scaled 2.0 rng(%step, %step) : memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64x16xbf16>, memref<64xf32>
  return
}

// -----

func.func @dropout_keep(%q: memref<2x64x16xbf16>, %l: memref<2x64xf32>, %step: i64) {
  // expected-error @below {{expects a dropout keep threshold in [1, 2^24], got 0}}
  zero.attention_grad %q, %q, %q, %q, %l, %l into %q, %q, %q scale 1.0 dropout <seed = 0, stream = 0, keep = 0> scaled 2.0 rng(%step, %step) : memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64xf32>, memref<2x64xf32>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>
  return
}

// -----

func.func @dropout_factor(%q: memref<2x64x16xbf16>, %l: memref<2x64xf32>, %step: i64) {
  // expected-error @below {{expects a positive, finite dropout factor, got -1}}
  zero.attention %q, %q, %q into %q, %l scale 1.0 dropout <seed = 0, stream = 0, keep = 1> scaled -1.0 rng(%step, %step) : memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64x16xbf16>, memref<2x64xf32>
  return
}
