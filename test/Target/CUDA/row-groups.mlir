// RUN: zero-opt %s --zero-gpu-row-groups=min-threads=2048 -split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-gpu-row-groups -split-input-file | FileCheck %s --check-prefix=FEW

// A softmax as zero-gpu-split-reductions leaves it: a warp of partial
// maxima a row, their combination, and the normalization reading the rows
// again. The three (with their fills) become one row group over the 64
// rows; the partials' deallocation moves after it, the allocation of the
// result stays before it.

#x = affine_map<(r, c, p) -> (r, c, p)>
#part = affine_map<(r, c, p) -> (r, p)>
#p2 = affine_map<(r, p) -> (r, p)>
#row2 = affine_map<(r, p) -> (r)>
#e = affine_map<(r, j) -> (r, j)>
#row = affine_map<(r, j) -> (r)>

// 64 rows of 32 lanes are 2048 threads: fewer than the default
// min-threads, which leaves them three launches.
// FEW-LABEL: func.func @softmax
// FEW-NOT: zero.row_group
// FEW: return

// CHECK-LABEL: func.func @softmax
// CHECK: %[[Y:.*]] = memref.alloc() : memref<64x1024xf32>
// CHECK: zero.row_group rows(1) {
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc
// CHECK: return
func.func @softmax(%x: memref<64x1024xf32>) -> (memref<64xf32>, memref<64x1024xf32>) {
  %lowest = arith.constant 0xFF800000 : f32
  %m = memref.alloc() : memref<64xf32>
  %parts = memref.alloc() : memref<64x32xf32>
  %xe = memref.expand_shape %x [[0], [1, 2]] output_shape [64, 32, 32] : memref<64x1024xf32> into memref<64x32x32xf32>
  linalg.fill ins(%lowest : f32) outs(%parts : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#x, #part],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%xe : memref<64x32x32xf32>) outs(%parts : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%lowest : f32) outs(%m : memref<64xf32>)
  linalg.generic {indexing_maps = [#p2, #row2],
                  iterator_types = ["parallel", "reduction"]}
      ins(%parts : memref<64x32xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %parts : memref<64x32xf32>
  %y = memref.alloc() : memref<64x1024xf32>
  linalg.generic {indexing_maps = [#e, #row, #e],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<64x1024xf32>, memref<64xf32>) outs(%y : memref<64x1024xf32>) {
  ^bb0(%in: f32, %max: f32, %out: f32):
    %0 = arith.subf %in, %max : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  return %m, %y : memref<64xf32>, memref<64x1024xf32>
}

// -----

// The op after the statistics reads them at other rows (a transposed
// read): it does not join, and the reduction and its combination alone
// still form a group.

#x = affine_map<(r, c, p) -> (r, c, p)>
#part = affine_map<(r, c, p) -> (r, p)>
#p2 = affine_map<(r, p) -> (r, p)>
#row2 = affine_map<(r, p) -> (r)>
#e = affine_map<(r, j) -> (r, j)>
#col = affine_map<(r, j) -> (j)>

// CHECK-LABEL: func.func @other_rows
// CHECK: zero.row_group rows(1) {
// CHECK: iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-NEXT: ^bb0
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
func.func @other_rows(%x: memref<64x2048xf32>) -> memref<64x64xf32> {
  %lowest = arith.constant 0xFF800000 : f32
  %m = memref.alloc() : memref<64xf32>
  %y = memref.alloc() : memref<64x64xf32>
  %parts = memref.alloc() : memref<64x32xf32>
  %xe = memref.expand_shape %x [[0], [1, 2]] output_shape [64, 64, 32] : memref<64x2048xf32> into memref<64x64x32xf32>
  linalg.fill ins(%lowest : f32) outs(%parts : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#x, #part],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%xe : memref<64x64x32xf32>) outs(%parts : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%lowest : f32) outs(%m : memref<64xf32>)
  linalg.generic {indexing_maps = [#p2, #row2],
                  iterator_types = ["parallel", "reduction"]}
      ins(%parts : memref<64x32xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#col, #e],
                  iterator_types = ["parallel", "parallel"]}
      ins(%m : memref<64xf32>) outs(%y : memref<64x64xf32>) {
  ^bb0(%max: f32, %out: f32):
    linalg.yield %max : f32
  }
  memref.dealloc %parts : memref<64x32xf32>
  memref.dealloc %m : memref<64xf32>
  return %y : memref<64x64xf32>
}

// -----

// Left alone: the op after the sum reads a loop index (slicing rows would
// change what it reads), and a reduction with its fill is no group.

#e = affine_map<(r, j) -> (r, j)>
#row = affine_map<(r, j) -> (r)>

// CHECK-LABEL: func.func @alone
// CHECK-NOT: zero.row_group
// CHECK: return
func.func @alone(%x: memref<64x1024xf32>) -> memref<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<64xf32>
  %y = memref.alloc() : memref<64x1024xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<64xf32>)
  linalg.generic {indexing_maps = [#e, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x1024xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#row, #e],
                  iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<64xf32>) outs(%y : memref<64x1024xf32>) {
  ^bb0(%sum: f32, %out: f32):
    %j = linalg.index 1 : index
    %i = arith.index_cast %j : index to i32
    %f = arith.sitofp %i : i32 to f32
    %0 = arith.mulf %sum, %f : f32
    linalg.yield %0 : f32
  }
  memref.dealloc %s : memref<64xf32>
  return %y : memref<64x1024xf32>
}

// -----

// A layer norm's backward as it reaches the pass: statistics, an
// elementwise op over [1, 64, 1024, 1] (unit loops around the rows), a
// second sum that reads its output through views, and the final op. The
// unit loops are dropped (a rank-reducing subview of the output), and the
// views put each row where the op wrote it: all of it is one group.

#x = affine_map<(r, c, p) -> (r, c, p)>
#part = affine_map<(r, c, p) -> (r, p)>
#p2 = affine_map<(r, p) -> (r, p)>
#row2 = affine_map<(r, p) -> (r)>
#u_in = affine_map<(a, r, j, b) -> (r, j)>
#u_row = affine_map<(a, r, j, b) -> (r)>
#u_out = affine_map<(a, r, j, b) -> (a, r, j, b)>
#e = affine_map<(r, j) -> (r, j)>
#row = affine_map<(r, j) -> (r)>

// CHECK-LABEL: func.func @unit_loops_and_views
// CHECK: %[[T:.*]] = memref.subview %{{.*}}[0, 0, 0, 0] [1, 64, 1024, 1] [1, 1, 1, 1] : memref<1x64x1024x1xf32> to memref<64x1024xf32, strided<[1024, 1]>>
// CHECK: zero.row_group rows(1) {
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]{{.*}} outs(%[[T]]
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: zero.row_group
// CHECK: return
func.func @unit_loops_and_views(%x: memref<64x1024xf32>) -> memref<64x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<64x1024xf32>
  %m = memref.alloc() : memref<64xf32>
  %s = memref.alloc() : memref<64xf32>
  %parts = memref.alloc() : memref<64x32xf32>
  %parts2 = memref.alloc() : memref<64x32xf32>
  %t = memref.alloc() : memref<1x64x1024x1xf32>
  %xe = memref.expand_shape %x [[0], [1, 2]] output_shape [64, 32, 32] : memref<64x1024xf32> into memref<64x32x32xf32>
  linalg.fill ins(%zero : f32) outs(%parts : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#x, #part],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%xe : memref<64x32x32xf32>) outs(%parts : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%m : memref<64xf32>)
  linalg.generic {indexing_maps = [#p2, #row2],
                  iterator_types = ["parallel", "reduction"]}
      ins(%parts : memref<64x32xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#u_in, #u_row, #u_out],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : memref<64x1024xf32>, memref<64xf32>) outs(%t : memref<1x64x1024x1xf32>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %0 = arith.subf %in, %mean : f32
    linalg.yield %0 : f32
  }
  %tc = memref.collapse_shape %t [[0, 1], [2, 3]] : memref<1x64x1024x1xf32> into memref<64x1024xf32>
  %te = memref.expand_shape %tc [[0], [1, 2]] output_shape [64, 32, 32] : memref<64x1024xf32> into memref<64x32x32xf32>
  linalg.fill ins(%zero : f32) outs(%parts2 : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#x, #part],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%te : memref<64x32x32xf32>) outs(%parts2 : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<64xf32>)
  linalg.generic {indexing_maps = [#p2, #row2],
                  iterator_types = ["parallel", "reduction"]}
      ins(%parts2 : memref<64x32xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#e, #row, #e],
                  iterator_types = ["parallel", "parallel"]}
      ins(%tc, %s : memref<64x1024xf32>, memref<64xf32>) outs(%y : memref<64x1024xf32>) {
  ^bb0(%in: f32, %sq: f32, %out: f32):
    %0 = arith.mulf %in, %sq : f32
    linalg.yield %0 : f32
  }
  return %y : memref<64x1024xf32>
}

// -----

// The second sum reads the statistics' user's output one row further on
// (a view at another offset): that is another row's data, so the user
// joins the statistics' group and the second sum does not.

#x = affine_map<(r, c, p) -> (r, c, p)>
#part = affine_map<(r, c, p) -> (r, p)>
#p2 = affine_map<(r, p) -> (r, p)>
#row2 = affine_map<(r, p) -> (r)>
#e = affine_map<(r, j) -> (r, j)>
#row = affine_map<(r, j) -> (r)>

// CHECK-LABEL: func.func @other_rows_view
// CHECK: zero.row_group rows(1) {
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// CHECK: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: memref.subview
// CHECK: zero.row_group rows(1) {
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]
// CHECK: return
func.func @other_rows_view(%x: memref<64x1024xf32>, %s: memref<64xf32>) {
  %zero = arith.constant 0.0 : f32
  %m = memref.alloc() : memref<64xf32>
  %parts = memref.alloc() : memref<64x32xf32>
  %parts2 = memref.alloc() : memref<64x32xf32>
  %big = memref.alloc() : memref<65x1024xf32>
  %t = memref.subview %big[0, 0] [64, 1024] [1, 1] : memref<65x1024xf32> to memref<64x1024xf32, strided<[1024, 1]>>
  %xe = memref.expand_shape %x [[0], [1, 2]] output_shape [64, 32, 32] : memref<64x1024xf32> into memref<64x32x32xf32>
  linalg.fill ins(%zero : f32) outs(%parts : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#x, #part],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%xe : memref<64x32x32xf32>) outs(%parts : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%m : memref<64xf32>)
  linalg.generic {indexing_maps = [#p2, #row2],
                  iterator_types = ["parallel", "reduction"]}
      ins(%parts : memref<64x32xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#e, #row, #e],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : memref<64x1024xf32>, memref<64xf32>) outs(%t : memref<64x1024xf32, strided<[1024, 1]>>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %0 = arith.subf %in, %mean : f32
    linalg.yield %0 : f32
  }
  %next = memref.subview %big[1, 0] [64, 1024] [1, 1] : memref<65x1024xf32> to memref<64x1024xf32, strided<[1024, 1], offset: 1024>>
  %te = memref.expand_shape %next [[0], [1, 2]] output_shape [64, 32, 32] : memref<64x1024xf32, strided<[1024, 1], offset: 1024>> into memref<64x32x32xf32, strided<[1024, 32, 1], offset: 1024>>
  linalg.fill ins(%zero : f32) outs(%parts2 : memref<64x32xf32>)
  linalg.generic {indexing_maps = [#x, #part],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%te : memref<64x32x32xf32, strided<[1024, 32, 1], offset: 1024>>) outs(%parts2 : memref<64x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<64xf32>)
  linalg.generic {indexing_maps = [#p2, #row2],
                  iterator_types = ["parallel", "reduction"]}
      ins(%parts2 : memref<64x32xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}
