// RUN: zero-opt %s --split-input-file --zero-split-masked-matmuls="min-rows=2" | FileCheck %s
// RUN: not zero-opt %s --split-input-file --zero-split-masked-matmuls="max-blocks=0" 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: max-blocks must be at least 1

#q = affine_map<(b, i, j, k) -> (b, i, k)>
#k = affine_map<(b, i, j, k) -> (b, j, k)>
#s = affine_map<(b, i, j, k) -> (b, i, j)>
#m3 = affine_map<(b, i, j) -> (0, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>

// Scores read only under a causal mask (a row maximum): each block of 2
// rows is computed up to its diagonal, into one buffer; the rest is
// never written.
// CHECK-LABEL: func @scores
// CHECK: %[[A:.*]] = bufferization.alloc_tensor() : tensor<2x8x8xbf16>
// CHECK: %[[D0:.*]] = tensor.extract_slice %[[A]][0, 0, 0] [2, 2, 2]
// CHECK: %[[Q0:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [2, 2, 4]
// CHECK: %[[K0:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [2, 2, 4]
// CHECK: %[[S0:.*]] = zero.rounded_matmul %[[Q0]], %[[K0]] into %[[D0]] {{.*}} -> tensor<2x2x2xbf16>
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[S0]] into %[[A]][0, 0, 0] [2, 2, 2]
// CHECK: tensor.extract_slice %[[I0]][0, 2, 0] [2, 2, 4]
// CHECK: zero.rounded_matmul {{.*}} : tensor<2x2x4xbf16>, tensor<2x4x4xbf16>, tensor<2x2x4xbf16>
// CHECK: zero.rounded_matmul {{.*}} : tensor<2x2x4xbf16>, tensor<2x6x4xbf16>, tensor<2x2x6xbf16>
// CHECK: zero.rounded_matmul {{.*}} : tensor<2x2x4xbf16>, tensor<2x8x4xbf16>, tensor<2x2x8xbf16>
// CHECK: %[[I3:.*]] = tensor.insert_slice {{.*}}[0, 6, 0] [2, 2, 8]
// CHECK-NOT: zero.rounded_matmul
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[I3]] :
func.func @scores(%q: tensor<2x8x4xbf16>, %k: tensor<2x8x4xbf16>) -> tensor<2x8xf32> {
  %mask = arith.constant dense<[[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]]> : tensor<1x8x8xi1>
  %fillv = arith.constant -1.0e+04 : bf16
  %e = tensor.empty() : tensor<2x8x8xbf16>
  %s = zero.rounded_matmul %q, %k into %e maps [#q, #k, #s]
      : tensor<2x8x4xbf16>, tensor<2x8x4xbf16>, tensor<2x8x8xbf16> -> tensor<2x8x8xbf16>
  %low = arith.constant -3.0e+38 : f32
  %ri = tensor.empty() : tensor<2x8xf32>
  %rf = linalg.fill ins(%low : f32) outs(%ri : tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = linalg.generic {indexing_maps = [#m3, #id3, #row],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%mask, %s : tensor<1x8x8xi1>, tensor<2x8x8xbf16>) outs(%rf : tensor<2x8xf32>) {
  ^bb0(%m: i1, %x: bf16, %acc: f32):
    %sel = arith.select %m, %x, %fillv : bf16
    %w = arith.extf %sel : bf16 to f32
    %mx = arith.maximumf %w, %acc : f32
    linalg.yield %mx : f32
  } -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

#m3 = affine_map<(b, i, j) -> (0, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>

// Probabilities zero where the mask hides: each block of 2 rows of P V
// sums only the columns of P up to its diagonal, into its own zero fill.
// P's producer is marked with what the blocks read of it: a target may
// leave the rest unwritten.
// CHECK-LABEL: func @probabilities
// CHECK: linalg.generic {{.*}} attrs = {zero.written_region = array<i64: 2, 0, 2, 4, 0, 4, 6, 0, 6, 8, 0, 8>}
// CHECK: %[[A:.*]] = bufferization.alloc_tensor() : tensor<2x8x4xf32>
// CHECK: %[[D0:.*]] = tensor.extract_slice %[[A]][0, 0, 0] [2, 2, 4]
// CHECK: %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[D0]] : tensor<2x2x4xf32>)
// CHECK: %[[P0:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [2, 2, 2]
// CHECK: %[[V0:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [2, 2, 4]
// CHECK: linalg.batch_matmul ins(%[[P0]], %[[V0]] : tensor<2x2x2xf32>, tensor<2x2x4xf32>) outs(%[[F0]] : tensor<2x2x4xf32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x2x4xf32>, tensor<2x4x4xf32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x2x6xf32>, tensor<2x6x4xf32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x2x8xf32>, tensor<2x8x4xf32>)
// CHECK: %[[R:.*]] = tensor.insert_slice {{.*}}[0, 6, 0] [2, 2, 4]
// CHECK: return %[[R]]
func.func @probabilities(%x: tensor<2x8x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %mask = arith.constant dense<[[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]]> : tensor<1x8x8xi1>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %p = linalg.generic {indexing_maps = [#m3, #id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask, %x : tensor<1x8x8xi1>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%m: i1, %a: f32, %o: f32):
    %sel = arith.select %m, %a, %zero : f32
    linalg.yield %sel : f32
  } -> tensor<2x8x8xf32>
  %oe = tensor.empty() : tensor<2x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>)
      outs(%f : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}

// -----

#q = affine_map<(b, i, j, k) -> (b, i, k)>
#k = affine_map<(b, i, j, k) -> (b, j, k)>
#s = affine_map<(b, i, j, k) -> (b, i, j)>
#m3 = affine_map<(b, i, j) -> (0, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>

// Kept whole: a user reads the scores outside the select (its sum), and
// the operands are no masked producer's.
// CHECK-LABEL: func @read_outside_select
// CHECK-NOT: alloc_tensor
// CHECK-NOT: zero.written_region
// CHECK: zero.rounded_matmul {{.*}} -> tensor<2x8x8xbf16>
// CHECK-NOT: zero.rounded_matmul
func.func @read_outside_select(%q: tensor<2x8x4xbf16>, %k: tensor<2x8x4xbf16>) -> tensor<2x8x8xbf16> {
  %mask = arith.constant dense<[[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]]> : tensor<1x8x8xi1>
  %fillv = arith.constant -1.0e+04 : bf16
  %e = tensor.empty() : tensor<2x8x8xbf16>
  %s = zero.rounded_matmul %q, %k into %e maps [#q, #k, #s]
      : tensor<2x8x4xbf16>, tensor<2x8x4xbf16>, tensor<2x8x8xbf16> -> tensor<2x8x8xbf16>
  %o = tensor.empty() : tensor<2x8x8xbf16>
  %r = linalg.generic {indexing_maps = [#m3, #id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask, %s : tensor<1x8x8xi1>, tensor<2x8x8xbf16>) outs(%o : tensor<2x8x8xbf16>) {
  ^bb0(%m: i1, %x: bf16, %out: bf16):
    %sel = arith.select %m, %x, %fillv : bf16
    %sum = arith.addf %sel, %x : bf16
    linalg.yield %sum : bf16
  } -> tensor<2x8x8xbf16>
  return %r : tensor<2x8x8xbf16>
}

// -----

#m3 = affine_map<(b, i, j) -> (0, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>

// A softmax stored in stages, as the CPU target's fusion leaves it: masked
// scores, their exponentials less the row maximum, a product of those.
// P's zeros are followed back through the generics that wrote its
// inputs: P V is split as @probabilities is.
// CHECK-LABEL: func @staged_probabilities
// CHECK: bufferization.alloc_tensor() : tensor<2x8x4xf32>
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x2x2xf32>, tensor<2x2x4xf32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x2x8xf32>, tensor<2x8x4xf32>)
func.func @staged_probabilities(%x: tensor<2x8x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %mask = arith.constant dense<[[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]]> : tensor<1x8x8xi1>
  %fillv = arith.constant -1.0e+09 : f32
  %zero = arith.constant 0.0 : f32
  %low = arith.constant -3.0e+38 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %s = linalg.generic {indexing_maps = [#m3, #id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask, %x : tensor<1x8x8xi1>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%m: i1, %a: f32, %o: f32):
    %sel = arith.select %m, %a, %fillv : f32
    linalg.yield %sel : f32
  } -> tensor<2x8x8xf32>
  %re = tensor.empty() : tensor<2x8xf32>
  %rf = linalg.fill ins(%low : f32) outs(%re : tensor<2x8xf32>) -> tensor<2x8xf32>
  %max = linalg.generic {indexing_maps = [#id3, #row],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x8x8xf32>) outs(%rf : tensor<2x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %mx = arith.maximumf %a, %acc : f32
    linalg.yield %mx : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id3, #row, #id3],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %x1 = math.exp %d : f32
    linalg.yield %x1 : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = arith.mulf %a, %a : f32
    linalg.yield %h : f32
  } -> tensor<2x8x8xf32>
  %oe = tensor.empty() : tensor<2x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %out = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>)
      outs(%f : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %out : tensor<2x8x4xf32>
}

// -----

#m3 = affine_map<(b, i, j) -> (0, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>

// Kept whole: the mask's first row keeps nothing, so that row's maximum is
// the fill itself and its exponentials are not zero.
// CHECK-LABEL: func @staged_row_all_hidden
// CHECK-NOT: alloc_tensor
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x8x8xf32>, tensor<2x8x4xf32>)
func.func @staged_row_all_hidden(%x: tensor<2x8x8xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %mask = arith.constant dense<[[[false, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]]> : tensor<1x8x8xi1>
  %fillv = arith.constant -1.0e+09 : f32
  %zero = arith.constant 0.0 : f32
  %low = arith.constant -3.0e+38 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %s = linalg.generic {indexing_maps = [#m3, #id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask, %x : tensor<1x8x8xi1>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%m: i1, %a: f32, %o: f32):
    %sel = arith.select %m, %a, %fillv : f32
    linalg.yield %sel : f32
  } -> tensor<2x8x8xf32>
  %re = tensor.empty() : tensor<2x8xf32>
  %rf = linalg.fill ins(%low : f32) outs(%re : tensor<2x8xf32>) -> tensor<2x8xf32>
  %max = linalg.generic {indexing_maps = [#id3, #row],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<2x8x8xf32>) outs(%rf : tensor<2x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %mx = arith.maximumf %a, %acc : f32
    linalg.yield %mx : f32
  } -> tensor<2x8xf32>
  %ex = linalg.generic {indexing_maps = [#id3, #row, #id3],
                        iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %max : tensor<2x8x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %mx: f32, %o: f32):
    %d = arith.subf %a, %mx : f32
    %x1 = math.exp %d : f32
    linalg.yield %x1 : f32
  } -> tensor<2x8x8xf32>
  %p = linalg.generic {indexing_maps = [#id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex : tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %h = arith.mulf %a, %a : f32
    linalg.yield %h : f32
  } -> tensor<2x8x8xf32>
  %oe = tensor.empty() : tensor<2x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %out = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>)
      outs(%f : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %out : tensor<2x8x4xf32>
}

// -----

#m3 = affine_map<(b, i, j) -> (0, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>
#row = affine_map<(b, i, j) -> (b, i)>

// P read by the blocks of P V and, under the mask, by a row sum (a
// softmax backward's): the sum keeps only what the blocks read too.
// CHECK-LABEL: func @written_region_masked_reader
// CHECK: linalg.generic {{.*}} attrs = {zero.written_region = array<i64: 2, 0, 2, 4, 0, 4, 6, 0, 6, 8, 0, 8>}
func.func @written_region_masked_reader(%x: tensor<2x8x8xf32>, %v: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8xf32>) {
  %mask = arith.constant dense<[[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]]> : tensor<1x8x8xi1>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %p = linalg.generic {indexing_maps = [#m3, #id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask, %x : tensor<1x8x8xi1>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%m: i1, %a: f32, %o: f32):
    %sel = arith.select %m, %a, %zero : f32
    linalg.yield %sel : f32
  } -> tensor<2x8x8xf32>
  %oe = tensor.empty() : tensor<2x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>)
      outs(%f : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %se = tensor.empty() : tensor<2x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<2x8xf32>) -> tensor<2x8xf32>
  %sum = linalg.generic {indexing_maps = [#m3, #id3, #row],
                         iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%mask, %p : tensor<1x8x8xi1>, tensor<2x8x8xf32>) outs(%sf : tensor<2x8xf32>) {
  ^bb0(%m: i1, %a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %sel = arith.select %m, %sq, %zero : f32
    %add = arith.addf %sel, %acc : f32
    linalg.yield %add : f32
  } -> tensor<2x8xf32>
  return %o, %sum : tensor<2x8x4xf32>, tensor<2x8xf32>
}

// -----

#m3 = affine_map<(b, i, j) -> (0, i, j)>
#id3 = affine_map<(b, i, j) -> (b, i, j)>

// Not marked: another user reads all of P (the GEMM is split all the same).
// CHECK-LABEL: func @written_region_read_whole
// CHECK-NOT: zero.written_region
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x2x2xf32>, tensor<2x2x4xf32>)
func.func @written_region_read_whole(%x: tensor<2x8x8xf32>, %v: tensor<2x8x4xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x8xf32>) {
  %mask = arith.constant dense<[[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]]> : tensor<1x8x8xi1>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %p = linalg.generic {indexing_maps = [#m3, #id3, #id3],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mask, %x : tensor<1x8x8xi1>, tensor<2x8x8xf32>) outs(%e : tensor<2x8x8xf32>) {
  ^bb0(%m: i1, %a: f32, %o: f32):
    %sel = arith.select %m, %a, %zero : f32
    linalg.yield %sel : f32
  } -> tensor<2x8x8xf32>
  %oe = tensor.empty() : tensor<2x8x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<2x8x8xf32>, tensor<2x8x4xf32>)
      outs(%f : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o, %p : tensor<2x8x4xf32>, tensor<2x8x8xf32>
}
