// RUN: zero-opt %s --pass-pipeline="builtin.module(func.func(zero-gpu-skip-masked-terms))" -split-input-file | FileCheck %s
// RUN: zero-opt %s --pass-pipeline="builtin.module(func.func(zero-gpu-skip-masked-terms{max-fill=-1e10}))" -split-input-file | FileCheck %s --check-prefix=STRICT

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A causal softmax (rows of 4, the mask's lower triangle true, the fill
// -1e9 as models write it) and its backward's row sum of dP x P: the sum's
// term is selected by the mask, read as the softmax read it.
// CHECK-LABEL: func.func @causal_softmax_backward
// CHECK-SAME: (%[[S:.*]]: tensor<4x4xf32>, %[[DP:.*]]: tensor<4x4xbf16>
// CHECK: %[[MASK:.*]] = arith.constant dense<{{.*}}> : tensor<4x4xi1>
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]], #[[ID]], #[[ROW:.*]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[DP]], %[[P]], %[[MASK]] : tensor<4x4xbf16>, tensor<4x4xbf16>, tensor<4x4xi1>)
// CHECK: ^bb0(%[[D:.*]]: bf16, %[[Q:.*]]: bf16, %[[BIT:.*]]: i1, %[[ACC:.*]]: f32):
// CHECK: %[[T:.*]] = arith.mulf
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SEL:.*]] = arith.select %[[BIT]], %[[T]], %[[Z]] : f32
// CHECK: arith.addf %[[SEL]], %[[ACC]] : f32
// A fill above max-fill is no -inf: left alone.
// STRICT-LABEL: func.func @causal_softmax_backward
// STRICT-NOT: tensor<4x4xi1>) outs(%{{.*}} : tensor<4xf32>)
func.func @causal_softmax_backward(%s: tensor<4x4xf32>, %dp: tensor<4x4xbf16>, %max: tensor<4xf32>, %sum: tensor<4xf32>) -> tensor<4xf32> {
  %mask = arith.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
  %fill = arith.constant -1.0e9 : f32
  %scale = arith.constant 0.125 : f32
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xbf16>
  %p = linalg.generic {indexing_maps = [#id, #id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %s, %max, %sum : tensor<4x4xi1>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4x4xbf16>) {
  ^bb0(%m: i1, %x: f32, %mx: f32, %sm: f32, %out: bf16):
    %scaled = arith.mulf %x, %scale : f32
    %sel = arith.select %m, %scaled, %fill : f32
    %shift = arith.subf %sel, %mx : f32
    %ex = math.exp %shift : f32
    %inv = arith.divf %one, %sm : f32
    %pr = arith.mulf %ex, %inv : f32
    %r = arith.truncf %pr : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4x4xbf16>
  %acc0 = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dp, %p : tensor<4x4xbf16>, tensor<4x4xbf16>) outs(%acc : tensor<4xf32>) {
  ^bb0(%d: bf16, %q: bf16, %a: f32):
    %dw = arith.extf %d : bf16 to f32
    %qw = arith.extf %q : bf16 to f32
    %t = arith.mulf %dw, %qw : f32
    %n = arith.addf %t, %a : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bcast = affine_map<(d0, d1, d2) -> (0, d1, d2)>
#col = affine_map<(d0, d1, d2) -> (d0, d2)>
#perm = affine_map<(d0, d1, d2) -> (d0, d2, d1)>

// A select of zero (a ReLU-like masked value), broadcast over a batch, and
// read transposed by a sum over its middle loop: the mask's map follows the
// element through the producer's output map and the reader's.
// CHECK-DAG: #[[MASKMAP:.*]] = affine_map<(d0, d1, d2) -> (0, d2, d1)>
// CHECK-LABEL: func.func @zero_fill_transposed
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[MASKMAP]], #{{.*}}], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: arith.select
func.func @zero_fill_transposed(%x: tensor<2x3x5xf32>) -> tensor<2x3xf32> {
  %mask = arith.constant dense<[[[true, false, true, false, true], [false, true, false, true, false], [true, true, false, false, true]]]> : tensor<1x3x5xi1>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xf32>
  %p = linalg.generic {indexing_maps = [#bcast, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask, %x : tensor<1x3x5xi1>, tensor<2x3x5xf32>) outs(%e : tensor<2x3x5xf32>) {
  ^bb0(%m: i1, %v: f32, %out: f32):
    %s = arith.select %m, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<2x3x5xf32>
  %acc0 = tensor.empty() : tensor<2x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<2x3xf32>) -> tensor<2x3xf32>
  // Loops (b, j, i): reads p[b, i, j], sums over j.
  %r = linalg.generic {indexing_maps = [#perm, #col], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%p : tensor<2x3x5xf32>) outs(%acc : tensor<2x3xf32>) {
  ^bb0(%q: f32, %a: f32):
    %sq = arith.mulf %q, %q : f32
    %n = arith.addf %a, %sq : f32
    linalg.yield %n : f32
  } -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Left alone:
// - a mask row with no true element: its maximum would be the fill, whose
//   exponential is 1, not 0;
// - a term not zero where the probabilities are (dP + P);
// - a mask that is an argument, not a constant;
// - a producer whose masked value is not driven to zero (exp of the
//   select of a positive fill).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor<2x2xi1>) outs(%{{.*}} : tensor<2xf32>)
// CHECK: return
func.func @left_alone(%s: tensor<2x2xf32>, %dp: tensor<2x2xf32>, %max: tensor<2xf32>, %arg_mask: tensor<2x2xi1>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %empty_row = arith.constant dense<[[false, false], [true, true]]> : tensor<2x2xi1>
  %causal = arith.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %ninf = arith.constant 0xFF800000 : f32
  %pos = arith.constant 1.0e9 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %acc0 = tensor.empty() : tensor<2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<2xf32>) -> tensor<2xf32>
  %p1 = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%empty_row, %s, %max : tensor<2x2xi1>, tensor<2x2xf32>, tensor<2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%m: i1, %x: f32, %mx: f32, %out: f32):
    %sel = arith.select %m, %x, %ninf : f32
    %shift = arith.subf %sel, %mx : f32
    %ex = math.exp %shift : f32
    linalg.yield %ex : f32
  } -> tensor<2x2xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dp, %p1 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %q: f32, %a: f32):
    %t = arith.mulf %d, %q : f32
    %n = arith.addf %t, %a : f32
    linalg.yield %n : f32
  } -> tensor<2xf32>
  %p2 = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%causal, %s, %max : tensor<2x2xi1>, tensor<2x2xf32>, tensor<2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%m: i1, %x: f32, %mx: f32, %out: f32):
    %sel = arith.select %m, %x, %ninf : f32
    %shift = arith.subf %sel, %mx : f32
    %ex = math.exp %shift : f32
    linalg.yield %ex : f32
  } -> tensor<2x2xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dp, %p2 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %q: f32, %a: f32):
    %t = arith.addf %d, %q : f32
    %n = arith.addf %t, %a : f32
    linalg.yield %n : f32
  } -> tensor<2xf32>
  %p3 = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%arg_mask, %s, %max : tensor<2x2xi1>, tensor<2x2xf32>, tensor<2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%m: i1, %x: f32, %mx: f32, %out: f32):
    %sel = arith.select %m, %x, %ninf : f32
    %shift = arith.subf %sel, %mx : f32
    %ex = math.exp %shift : f32
    linalg.yield %ex : f32
  } -> tensor<2x2xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dp, %p3 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %q: f32, %a: f32):
    %t = arith.mulf %d, %q : f32
    %n = arith.addf %t, %a : f32
    linalg.yield %n : f32
  } -> tensor<2xf32>
  %p4 = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%causal, %s, %max : tensor<2x2xi1>, tensor<2x2xf32>, tensor<2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%m: i1, %x: f32, %mx: f32, %out: f32):
    %sel = arith.select %m, %x, %pos : f32
    %shift = arith.subf %sel, %mx : f32
    %ex = math.exp %shift : f32
    linalg.yield %ex : f32
  } -> tensor<2x2xf32>
  %r4 = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dp, %p4 : tensor<2x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %q: f32, %a: f32):
    %t = arith.mulf %d, %q : f32
    %n = arith.addf %t, %a : f32
    linalg.yield %n : f32
  } -> tensor<2xf32>
  return %r1, %r2, %r3, %r4 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The mask written the other way (true hides: select(m, fill, s), as the
// test GPT's export has it): the term is kept where the mask is false.
// CHECK-LABEL: func.func @true_hides
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %[[BIT:.*]]: i1, %[[ACC:.*]]: f32):
// CHECK: %[[T:.*]] = arith.mulf
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SEL:.*]] = arith.select %[[BIT]], %[[Z]], %[[T]] : f32
// CHECK: arith.addf %[[SEL]], %[[ACC]] : f32
func.func @true_hides(%s: tensor<3x3xf32>, %dp: tensor<3x3xf32>, %max: tensor<3xf32>) -> tensor<3xf32> {
  %mask = arith.constant dense<[[false, true, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
  %fill = arith.constant -3.4e38 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x3xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %s, %max : tensor<3x3xi1>, tensor<3x3xf32>, tensor<3xf32>) outs(%e : tensor<3x3xf32>) {
  ^bb0(%m: i1, %x: f32, %mx: f32, %out: f32):
    %sel = arith.select %m, %fill, %x : f32
    %shift = arith.subf %sel, %mx : f32
    %ex = math.exp %shift : f32
    linalg.yield %ex : f32
  } -> tensor<3x3xf32>
  %acc0 = tensor.empty() : tensor<3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dp, %p : tensor<3x3xf32>, tensor<3x3xf32>) outs(%acc : tensor<3xf32>) {
  ^bb0(%d: f32, %q: f32, %a: f32):
    %t = arith.mulf %d, %q : f32
    %n = arith.addf %t, %a : f32
    linalg.yield %n : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A negated condition (`xori` with true) flips which mask value hides.
// CHECK-LABEL: func.func @negated
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %[[BIT:.*]]: i1, %[[ACC:.*]]: f32):
// CHECK: %[[T:.*]] = arith.mulf
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SEL:.*]] = arith.select %[[BIT]], %[[T]], %[[Z]] : f32
// CHECK: arith.addf %[[SEL]], %[[ACC]] : f32
func.func @negated(%s: tensor<2x2xf32>, %dp: tensor<2x2xf32>, %max: tensor<2xf32>) -> tensor<2xf32> {
  %mask = arith.constant dense<[[true, false], [true, true]]> : tensor<2x2xi1>
  %true = arith.constant true
  %fill = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mask, %s, %max : tensor<2x2xi1>, tensor<2x2xf32>, tensor<2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%m: i1, %x: f32, %mx: f32, %out: f32):
    %hide = arith.xori %m, %true : i1
    %sel = arith.select %hide, %fill, %x : f32
    %shift = arith.subf %sel, %mx : f32
    %ex = math.exp %shift : f32
    linalg.yield %ex : f32
  } -> tensor<2x2xf32>
  %acc0 = tensor.empty() : tensor<2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<2xf32>) -> tensor<2xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dp, %p : tensor<2x2xf32>, tensor<2x2xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%d: f32, %q: f32, %a: f32):
    %t = arith.mulf %d, %q : f32
    %n = arith.addf %t, %a : f32
    linalg.yield %n : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}
