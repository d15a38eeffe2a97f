// RUN: zero-opt %s --split-input-file --verify-diagnostics

// A row group holds linalg ops on buffers only.
func.func @load(%a: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  zero.row_group rows(1) {
    // expected-error @+1 {{in a row group: expected a linalg op on statically shaped buffers}}
    %x = memref.load %a[%c0] : memref<4xf32>
  }
  return
}

// -----

// Its rows are parallel loops of every op.
#e = affine_map<(r, j) -> (r, j)>
#col = affine_map<(r, j) -> (j)>
func.func @reduced_rows(%x: memref<64x128xf32>, %s: memref<128xf32>) {
  zero.row_group rows(1) {
    // expected-error @+1 {{in a row group: its first 1 loops must be parallel}}
    linalg.generic {indexing_maps = [#e, #col], iterator_types = ["reduction", "parallel"]}
        ins(%x : memref<64x128xf32>) outs(%s : memref<128xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %0 = arith.addf %a, %acc : f32
      linalg.yield %0 : f32
    }
  }
  return
}

// -----

// The same rows in every op.
func.func @other_rows(%a: memref<64xf32>, %b: memref<32xf32>) {
  %z = arith.constant 0.0 : f32
  zero.row_group rows(1) {
    linalg.fill ins(%z : f32) outs(%a : memref<64xf32>)
    // expected-error @+1 {{in a row group: its rows differ from the group's first op's}}
    linalg.fill ins(%z : f32) outs(%b : memref<32xf32>)
  }
  return
}

// -----

func.func @no_rows(%a: memref<64xf32>) {
  %z = arith.constant 0.0 : f32
  // expected-error @+1 {{attribute 'row_dims' failed to satisfy constraint}}
  zero.row_group rows(0) {
    linalg.fill ins(%z : f32) outs(%a : memref<64xf32>)
  }
  return
}

// -----

// A row loop inside an index expression: a row's slice is no dimension.
#pair = affine_map<(r, j) -> (r floordiv 2, j)>
#e = affine_map<(r, j) -> (r, j)>
func.func @compound(%x: memref<32x128xf32>, %y: memref<64x128xf32>) {
  zero.row_group rows(1) {
    // expected-error @+1 {{in a row group: reads a loop index, or indexes a row loop other than as a whole dimension of its own}}
    linalg.generic {indexing_maps = [#pair, #e], iterator_types = ["parallel", "parallel"]}
        ins(%x : memref<32x128xf32>) outs(%y : memref<64x128xf32>) {
    ^bb0(%a: f32, %o: f32):
      linalg.yield %a : f32
    }
  }
  return
}

// -----

// A body that reads its indices would read the slice's.
#e = affine_map<(r, j) -> (r, j)>
func.func @index(%y: memref<64x128xf32>) {
  zero.row_group rows(1) {
    // expected-error @+1 {{in a row group: reads a loop index, or indexes a row loop other than as a whole dimension of its own}}
    linalg.generic {indexing_maps = [#e], iterator_types = ["parallel", "parallel"]}
        outs(%y : memref<64x128xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %c = arith.index_cast %i : index to i32
      %f = arith.sitofp %c : i32 to f32
      linalg.yield %f : f32
    }
  }
  return
}
