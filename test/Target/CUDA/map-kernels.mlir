// RUN: zero-opt %s --zero-gpu-map-kernels --canonicalize --split-input-file | FileCheck %s

// A 2-d elementwise kernel: the inner dimension to x (32 wide), the outer
// to y (8), one block per 8x32 tile; each thread computes one element.
// CHECK-LABEL: func.func private @ew
// CHECK: scf.forall (%[[BI:.*]], %[[BJ:.*]]) = (0, 0) to (64, 100) step (8, 32) {
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (8, 32) {
// CHECK: linalg.generic
// CHECK: } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK: } {mapping = [#gpu.block<y>, #gpu.block<x>]}
func.func private @ew(%a: memref<64x100xf32>, %b: memref<64x100xf32>) attributes {zero.kernel = "linalg.generic"} {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<64x100xf32>) outs(%b : memref<64x100xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// A function that is no kernel keeps its ops.
// CHECK-LABEL: func.func @step
// CHECK-NOT: scf.forall
// CHECK: linalg.copy
func.func @step(%a: memref<8xf32>, %b: memref<8xf32>) {
  linalg.copy ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  return
}

// -----

// A row reduction: rows over x, one thread reduces a whole row in loop
// order (the reduction stays a loop inside the thread's op). With no call
// to say otherwise the rows may be the accumulator, which each thread
// would then read where another initializes it: the fill is a launch of
// its own, before it.
// CHECK-LABEL: func.func private @row_sum
// CHECK: scf.forall (%{{.*}}) in (4) {
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : f32)
// CHECK: {mapping = [#gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<x>]}
// CHECK: scf.forall (%{{.*}}) in (4) {
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}} : memref<1x8xf32, strided<[8, 1], offset: ?>>)
// CHECK: {mapping = [#gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<x>]}
func.func private @row_sum(%a: memref<4x8xf32>, %c: memref<4xf32>) attributes {zero.kernel = "linalg.reduce"} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<4xf32>)
  linalg.reduce ins(%a : memref<4x8xf32>) outs(%c : memref<4xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// Called with buffers that do not overlap, each thread initializes the
// accumulator elements it reduces into: one launch.
// CHECK: module attributes {zero.kernels = {gpu_coarsened = 0 : i64, gpu_launches = 2 : i64, gpu_partial_writes = 0 : i64, gpu_row_groups = 0 : i64}}
// CHECK-LABEL: func.func private @row_sum_fused
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.forall (%{{.*}}) in (4) {
// CHECK: %[[ACC:.*]] = memref.subview %arg1
// CHECK-NEXT: linalg.fill ins(%[[Z]] : f32) outs(%[[ACC]] : memref<1xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%[[ACC]] : memref<1xf32, strided<[1], offset: ?>>)
// CHECK: {mapping = [#gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<x>]}
// CHECK-NEXT: return
// A full reduction's one thread initializes its accumulator first, called
// or not.
// CHECK-LABEL: func.func private @full_sum_fused
// CHECK: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
// CHECK: {mapping = [#gpu.thread<z>]}
// CHECK-NEXT: } {mapping = [#gpu.block<z>]}
// CHECK-NEXT: return
// CHECK-LABEL: func.func @sums
func.func private @row_sum_fused(%a: memref<4x8xf32>, %c: memref<4xf32>) attributes {zero.kernel = "linalg.reduce"} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<4xf32>)
  linalg.reduce ins(%a : memref<4x8xf32>) outs(%c : memref<4xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}
func.func private @full_sum_fused(%a: memref<16xf32>, %s: memref<f32>) attributes {zero.kernel = "linalg.generic"} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%s : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<16xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}
func.func @sums() {
  %a = memref.alloc() : memref<4x8xf32>
  %c = memref.alloc() : memref<4xf32>
  call @row_sum_fused(%a, %c) : (memref<4x8xf32>, memref<4xf32>) -> ()
  memref.dealloc %a : memref<4x8xf32>
  memref.dealloc %c : memref<4xf32>
  return
}

// -----

// A reduction with two outputs (a split layer norm backward's two column
// sums), each initialized right before it: each thread initializes its
// elements of both, one launch.
// CHECK: module attributes {zero.kernels = {gpu_coarsened = 0 : i64, gpu_launches = 1 : i64, gpu_partial_writes = 0 : i64, gpu_row_groups = 0 : i64}}
// CHECK-LABEL: func.func private @two_sums_fused
// CHECK: scf.forall (%{{.*}}) = (0) to (64) step (64) {
// CHECK-NEXT: scf.forall (%{{.*}}) in (64) {
// CHECK: %[[S:.*]] = memref.subview %arg1
// CHECK: %[[Q:.*]] = memref.subview %arg2
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[S]] : memref<1xf32, strided<[1], offset: ?>>)
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[Q]] : memref<1xf32, strided<[1], offset: ?>>)
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["reduction", "parallel"]
// CHECK-SAME: outs(%[[S]], %[[Q]] : memref<1xf32, strided<[1], offset: ?>>, memref<1xf32, strided<[1], offset: ?>>)
// CHECK: {mapping = [#gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<x>]}
// CHECK-NEXT: return
func.func private @two_sums_fused(%a: memref<8x64xf32>, %s: memref<64xf32>, %q: memref<64xf32>) attributes {zero.kernel = "linalg.generic"} {
  %z = arith.constant 0.0 : f32
  %low = arith.constant 0xFF800000 : f32
  linalg.fill ins(%z : f32) outs(%s : memref<64xf32>)
  linalg.fill ins(%low : f32) outs(%q : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>], iterator_types = ["reduction", "parallel"]} ins(%a : memref<8x64xf32>) outs(%s, %q : memref<64xf32>, memref<64xf32>) {
  ^bb0(%x: f32, %acc: f32, %m: f32):
    %r = arith.addf %x, %acc : f32
    %n = arith.maximumf %x, %m : f32
    linalg.yield %r, %n : f32, f32
  }
  return
}
func.func @two_sums() {
  %a = memref.alloc() : memref<8x64xf32>
  %s = memref.alloc() : memref<64xf32>
  %q = memref.alloc() : memref<64xf32>
  call @two_sums_fused(%a, %s, %q) : (memref<8x64xf32>, memref<64xf32>, memref<64xf32>) -> ()
  memref.dealloc %a : memref<8x64xf32>
  memref.dealloc %s : memref<64xf32>
  memref.dealloc %q : memref<64xf32>
  return
}

// -----

// A full reduction and a 0-d op have no parallel dimension: one thread of
// one block, mapped to z.
// CHECK-LABEL: func.func private @full
// CHECK: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
// CHECK: {mapping = [#gpu.thread<z>]}
// CHECK: {mapping = [#gpu.block<z>]}
// CHECK: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = []
func.func private @full(%a: memref<16xf32>, %s: memref<f32>, %t: memref<f32>) attributes {zero.kernel = "linalg.generic"} {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%a : memref<16xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%s : memref<f32>) outs(%t : memref<f32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.sqrt %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Copies become linalg.copy, generalized and tiled. Upstream drops the
// unit dimension of identity layouts only; one left on a dynamic-offset
// view is not distributed, and the 1-d copy takes 256 threads.
// CHECK-LABEL: func.func private @copy
// CHECK-NOT: memref.copy %
// CHECK: scf.forall (%{{.*}}) = (0) to (1000) step (256) {
// CHECK: scf.forall (%{{.*}}) in (256) {
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : memref<1x?xf32, strided<[2000, 2], offset: ?>>)
// CHECK: {mapping = [#gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<x>]}
// CHECK-LABEL: func.func private @copy_identity
// CHECK: scf.forall (%{{.*}}) = (0) to (1000) step (256) {
// CHECK: scf.forall (%{{.*}}) in (256) {
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel"]
// CHECK-SAME: ins(%{{.*}} : memref<?xf32, strided<[1], offset: ?>>)
func.func private @copy(%a: memref<1x1000xf32, strided<[2000, 2], offset: ?>>, %b: memref<1x1000xf32>) attributes {zero.kernel = "memref.copy"} {
  memref.copy %a, %b : memref<1x1000xf32, strided<[2000, 2], offset: ?>> to memref<1x1000xf32>
  return
}
func.func private @copy_identity(%a: memref<1x1000xf32>, %b: memref<1x1000xf32>) attributes {zero.kernel = "memref.copy"} {
  memref.copy %a, %b : memref<1x1000xf32> to memref<1x1000xf32>
  return
}

// -----

// Four parallel dimensions: the inner three go to x, y, z (threads 32 x 8
// x 1); the outermost stays a loop in every thread. A narrow inner
// dimension gives its threads to y.
// CHECK-LABEL: func.func private @rank4
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (3, 16, 40) step (1, 8, 32) {
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 8, 32) {
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : memref<2x1x1x?xf32
// CHECK: {mapping = [#gpu.thread<z>, #gpu.thread<y>, #gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK-LABEL: func.func private @narrow
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (100, 4) step (64, 4) {
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (64, 4) {
func.func private @rank4(%a: memref<2x3x16x40xf32>, %b: memref<2x3x16x40xf32>) attributes {zero.kernel = "linalg.generic"} {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%a : memref<2x3x16x40xf32>) outs(%b : memref<2x3x16x40xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.negf %x : f32
    linalg.yield %r : f32
  }
  return
}
func.func private @narrow(%a: memref<100x4xf32>, %b: memref<100x4xf32>) attributes {zero.kernel = "linalg.generic"} {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<100x4xf32>) outs(%b : memref<100x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.negf %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A grid's y is at most 65535 blocks: rows past 65535 x 8 stay a loop in
// each thread, x alone is distributed.
// CHECK-LABEL: func.func private @tall
// CHECK: scf.forall (%{{.*}}) = (0) to (64) step (32) {
// CHECK: scf.forall (%{{.*}}) in (32) {
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : memref<600000x1xf32
// CHECK: {mapping = [#gpu.block<x>]}
func.func private @tall(%a: memref<600000x64xf32>, %b: memref<600000x64xf32>) attributes {zero.kernel = "linalg.generic"} {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<600000x64xf32>) outs(%b : memref<600000x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.negf %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A loop kernel (the embedding gradient's scatter) that no call shows to
// write a buffer no other argument overlaps runs in one thread; its
// fixed-size temporary becomes one stack buffer, not an allocation per
// iteration.
// CHECK-LABEL: func.func private @scatter
// CHECK: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: scf.forall (%{{.*}}) in (1) {
// CHECK-NEXT: %[[T:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4xf32>
// CHECK: scf.for
// CHECK-NOT: memref.alloc(
// CHECK-NOT: memref.dealloc
// CHECK: linalg.generic {{.*}} outs(%[[T]] : memref<4xf32>)
// CHECK: {mapping = [#gpu.thread<z>]}
// CHECK: {mapping = [#gpu.block<z>]}
func.func private @scatter(%ids: memref<6xindex>, %g: memref<6x4xf32>, %w: memref<10x4xf32>) attributes {zero.kernel = "scf.for"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %t = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    %id = memref.load %ids[%i] : memref<6xindex>
    %row = memref.subview %w[%id, 0] [1, 4] [1, 1] : memref<10x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %grow = memref.subview %g[%i, 0] [1, 4] [1, 1] : memref<6x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>, affine_map<(j) -> (j)>], iterator_types = ["parallel"]} ins(%row, %grow : memref<4xf32, strided<[1], offset: ?>>, memref<4xf32, strided<[1], offset: ?>>) outs(%t : memref<4xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
    memref.copy %t, %row : memref<4xf32> to memref<4xf32, strided<[1], offset: ?>>
    memref.dealloc %t : memref<4xf32>
  }
  return
}

// -----

// The scatter with its caller: the table is an allocation of the step, so
// no other argument overlaps it. The copy back becomes the add's output,
// and the loop runs inside the add's grid (two blocks of columns, the
// second partial): a thread per column, each adding the tokens' rows in
// order to its column of the table. The table's 10 rows are split into 10
// parts (one row each; 3000 threads, below the 131072 a split aims for),
// a block row each: a thread adds a token's row only when the row is in
// its part, so each element is still one thread's, in token order. The
// thread's tile, the same in every iteration, is computed before the loop.
// CHECK-LABEL: func.func private @scatter_grid
// CHECK-NOT: memref.alloc
// CHECK: scf.forall (%[[P:.*]], %[[B:.*]]) = (0, 0) to (10, 300) step (1, 256) {
// CHECK-NEXT: scf.forall (%[[T:.*]]) in (256) {
// CHECK-NEXT: affine.min
// CHECK: scf.for %[[I:.*]] =
// CHECK-NOT: affine.
// CHECK: %[[ID:.*]] = memref.load %{{.*}}[%[[I]]] : memref<6xindex>
// CHECK: %[[ROW:.*]] = memref.subview %{{.*}}[%[[ID]], 0] [1, 300] [1, 1]
// CHECK: %[[WT:.*]] = memref.subview %[[ROW]][
// CHECK: %[[WE:.*]] = memref.subview %[[WT]][
// CHECK: %[[REL:.*]] = arith.subi %[[ID]], %[[P]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[REL]], %c1 : index
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: linalg.generic
// CHECK-SAME: ins(%{{[a-z_0-9]+}} : memref<?xf32
// CHECK-SAME: outs(%[[WE]] : memref<?xf32
// CHECK-NEXT: ^bb0(%[[G:.*]]: f32, %[[W:.*]]: f32):
// CHECK-NEXT: arith.addf %[[W]], %[[G]] : f32
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.copy
// CHECK: {mapping = [#gpu.thread<x>]}
// CHECK: {mapping = [#gpu.block<y>, #gpu.block<x>]}
// CHECK-NEXT: return
// CHECK-LABEL: func.func @step
func.func private @scatter_grid(%ids: memref<6xindex>, %g: memref<6x300xf32>, %w: memref<10x300xf32>) attributes {zero.kernel = "scf.for"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %id = memref.load %ids[%i] : memref<6xindex>
    %row = memref.subview %w[%id, 0] [1, 300] [1, 1] : memref<10x300xf32> to memref<300xf32, strided<[1], offset: ?>>
    %grow = memref.subview %g[%i, 0] [1, 300] [1, 1] : memref<6x300xf32> to memref<300xf32, strided<[1], offset: ?>>
    %t = memref.alloc() {alignment = 64 : i64} : memref<300xf32>
    linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>, affine_map<(j) -> (j)>], iterator_types = ["parallel"]} ins(%row, %grow : memref<300xf32, strided<[1], offset: ?>>, memref<300xf32, strided<[1], offset: ?>>) outs(%t : memref<300xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
    memref.copy %t, %row : memref<300xf32> to memref<300xf32, strided<[1], offset: ?>>
    memref.dealloc %t : memref<300xf32>
  }
  return
}
func.func @step(%ids: memref<6xindex>, %g: memref<6x300xf32>) -> memref<10x300xf32> {
  %w = memref.alloc() : memref<10x300xf32>
  call @scatter_grid(%ids, %g, %w) : (memref<6xindex>, memref<6x300xf32>, memref<10x300xf32>) -> ()
  return %w : memref<10x300xf32>
}

// -----

// A table of 1002 rows, read through a view two rows in: 300 threads of
// columns, so 436 parts are wanted (131072 / 300); rows come 3 to a part,
// 334 parts. A thread adds token t's row when id + 2 (the row of the
// allocation) less 3 x its part is below 3.
// CHECK-LABEL: func.func private @scatter_parts
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: scf.forall (%[[P:.*]], %[[B:.*]]) = (0, 0) to (334, 300) step (1, 256) {
// CHECK: %[[FIRST:.*]] = arith.muli %[[P]], %[[C3]] : index
// CHECK: scf.for
// CHECK: %[[ID:.*]] = memref.load
// CHECK: %[[AT:.*]] = arith.addi %[[ID]], %[[C2]] : index
// CHECK: %[[REL:.*]] = arith.subi %[[AT]], %[[FIRST]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[REL]], %[[C3]] : index
// CHECK: scf.if %[[IN]] {
// CHECK: {mapping = [#gpu.block<y>, #gpu.block<x>]}
func.func private @scatter_parts(%ids: memref<6xindex>, %g: memref<6x300xf32>, %w: memref<1002x300xf32>) attributes {zero.kernel = "scf.for"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %tab = memref.subview %w[2, 0] [1000, 300] [1, 1] : memref<1002x300xf32> to memref<1000x300xf32, strided<[300, 1], offset: 600>>
  scf.for %i = %c0 to %c6 step %c1 {
    %id = memref.load %ids[%i] : memref<6xindex>
    %row = memref.subview %tab[%id, 0] [1, 300] [1, 1] : memref<1000x300xf32, strided<[300, 1], offset: 600>> to memref<300xf32, strided<[1], offset: ?>>
    %grow = memref.subview %g[%i, 0] [1, 300] [1, 1] : memref<6x300xf32> to memref<300xf32, strided<[1], offset: ?>>
    %t = memref.alloc() {alignment = 64 : i64} : memref<300xf32>
    linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>, affine_map<(j) -> (j)>], iterator_types = ["parallel"]} ins(%row, %grow : memref<300xf32, strided<[1], offset: ?>>, memref<300xf32, strided<[1], offset: ?>>) outs(%t : memref<300xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
    memref.copy %t, %row : memref<300xf32> to memref<300xf32, strided<[1], offset: ?>>
    memref.dealloc %t : memref<300xf32>
  }
  return
}
func.func @step_parts(%ids: memref<6xindex>, %g: memref<6x300xf32>) -> memref<1002x300xf32> {
  %w = memref.alloc() : memref<1002x300xf32>
  call @scatter_parts(%ids, %g, %w) : (memref<6xindex>, memref<6x300xf32>, memref<1002x300xf32>) -> ()
  return %w : memref<1002x300xf32>
}

// -----

// Loops a grid would race on stay on one thread: the table is also the
// gradient (an argument overlaps it); a row's column offset changes with
// the iteration (a thread's column moves); the loop loads from the table
// it writes; the body has two ops; the op reads the table through a view
// other than subviews (a flattened table, one column further: thread j
// would read what thread j + 1 writes).
// CHECK-LABEL: func.func private @overlapping
// CHECK: {mapping = [#gpu.thread<z>]}
// CHECK-LABEL: func.func private @moving_columns
// CHECK: {mapping = [#gpu.thread<z>]}
// CHECK-LABEL: func.func private @reads_table
// CHECK: {mapping = [#gpu.thread<z>]}
// CHECK-LABEL: func.func private @two_ops
// CHECK: {mapping = [#gpu.thread<z>]}
// CHECK-LABEL: func.func private @shifted_read
// CHECK: {mapping = [#gpu.thread<z>]}
// CHECK-LABEL: func.func @steps
#id = affine_map<(j) -> (j)>
func.func private @overlapping(%ids: memref<6xindex>, %g: memref<10x40xf32>, %w: memref<10x40xf32>) attributes {zero.kernel = "scf.for"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %id = memref.load %ids[%i] : memref<6xindex>
    %row = memref.subview %w[%id, 0] [1, 40] [1, 1] : memref<10x40xf32> to memref<40xf32, strided<[1], offset: ?>>
    %grow = memref.subview %g[%i, 0] [1, 40] [1, 1] : memref<10x40xf32> to memref<40xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%grow : memref<40xf32, strided<[1], offset: ?>>) outs(%row : memref<40xf32, strided<[1], offset: ?>>) {
    ^bb0(%y: f32, %o: f32):
      %s = arith.addf %o, %y : f32
      linalg.yield %s : f32
    }
  }
  return
}
func.func private @moving_columns(%ids: memref<6xindex>, %g: memref<6x40xf32>, %w: memref<10x80xf32>) attributes {zero.kernel = "scf.for"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %id = memref.load %ids[%i] : memref<6xindex>
    %row = memref.subview %w[%id, %i] [1, 40] [1, 1] : memref<10x80xf32> to memref<40xf32, strided<[1], offset: ?>>
    %grow = memref.subview %g[%i, 0] [1, 40] [1, 1] : memref<6x40xf32> to memref<40xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%grow : memref<40xf32, strided<[1], offset: ?>>) outs(%row : memref<40xf32, strided<[1], offset: ?>>) {
    ^bb0(%y: f32, %o: f32):
      %s = arith.addf %o, %y : f32
      linalg.yield %s : f32
    }
  }
  return
}
func.func private @reads_table(%g: memref<6x40xf32>, %w: memref<10x40xf32>) attributes {zero.kernel = "scf.for"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %v = memref.load %w[%i, %c0] : memref<10x40xf32>
    %id = arith.fptoui %v : f32 to i32
    %k = arith.index_cast %id : i32 to index
    %row = memref.subview %w[%k, 0] [1, 40] [1, 1] : memref<10x40xf32> to memref<40xf32, strided<[1], offset: ?>>
    %grow = memref.subview %g[%i, 0] [1, 40] [1, 1] : memref<6x40xf32> to memref<40xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%grow : memref<40xf32, strided<[1], offset: ?>>) outs(%row : memref<40xf32, strided<[1], offset: ?>>) {
    ^bb0(%y: f32, %o: f32):
      %s = arith.addf %o, %y : f32
      linalg.yield %s : f32
    }
  }
  return
}
func.func private @two_ops(%ids: memref<6xindex>, %g: memref<6x40xf32>, %w: memref<10x40xf32>) attributes {zero.kernel = "scf.for"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %id = memref.load %ids[%i] : memref<6xindex>
    %row = memref.subview %w[%id, 0] [1, 40] [1, 1] : memref<10x40xf32> to memref<40xf32, strided<[1], offset: ?>>
    %grow = memref.subview %g[%i, 0] [1, 40] [1, 1] : memref<6x40xf32> to memref<40xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%grow : memref<40xf32, strided<[1], offset: ?>>) outs(%row : memref<40xf32, strided<[1], offset: ?>>) {
    ^bb0(%y: f32, %o: f32):
      %s = arith.addf %o, %y : f32
      linalg.yield %s : f32
    }
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%grow : memref<40xf32, strided<[1], offset: ?>>) outs(%row : memref<40xf32, strided<[1], offset: ?>>) {
    ^bb0(%y: f32, %o: f32):
      %s = arith.mulf %o, %y : f32
      linalg.yield %s : f32
    }
  }
  return
}
func.func private @shifted_read(%ids: memref<6xindex>, %g: memref<6x40xf32>, %w: memref<10x40xf32>) attributes {zero.kernel = "scf.for"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  scf.for %i = %c0 to %c6 step %c1 {
    %id = memref.load %ids[%i] : memref<6xindex>
    %row = memref.subview %w[%id, 0] [1, 40] [1, 1] : memref<10x40xf32> to memref<40xf32, strided<[1], offset: ?>>
    %flat = memref.collapse_shape %w [[0, 1]] : memref<10x40xf32> into memref<400xf32>
    %next = memref.subview %flat[1] [40] [1] : memref<400xf32> to memref<40xf32, strided<[1], offset: 1>>
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%next : memref<40xf32, strided<[1], offset: 1>>) outs(%row : memref<40xf32, strided<[1], offset: ?>>) {
    ^bb0(%y: f32, %o: f32):
      %s = arith.addf %o, %y : f32
      linalg.yield %s : f32
    }
  }
  return
}
func.func @steps(%ids: memref<6xindex>, %g: memref<6x40xf32>) {
  %w = memref.alloc() : memref<10x40xf32>
  call @overlapping(%ids, %w, %w) : (memref<6xindex>, memref<10x40xf32>, memref<10x40xf32>) -> ()
  %w2 = memref.alloc() : memref<10x80xf32>
  call @moving_columns(%ids, %g, %w2) : (memref<6xindex>, memref<6x40xf32>, memref<10x80xf32>) -> ()
  call @reads_table(%g, %w) : (memref<6x40xf32>, memref<10x40xf32>) -> ()
  call @two_ops(%ids, %g, %w) : (memref<6xindex>, memref<6x40xf32>, memref<10x40xf32>) -> ()
  call @shifted_read(%ids, %g, %w) : (memref<6xindex>, memref<6x40xf32>, memref<10x40xf32>) -> ()
  return
}

// -----

// A launch group's kernel is one launch: a 2-d op's blocks (a 2x2 grid of
// 8x32 threads) then a 1-d op's (one block of 16) and a reduction's one
// thread (its fill in that thread), end to end on x: 6 blocks of 256
// threads. A tree of comparisons on the block id picks the op; its block
// and thread indices come from the linear ids, x fastest; threads past an
// op's count idle.
// CHECK-LABEL: func.func private @group
// CHECK: scf.forall (%[[B:.*]]) in (6) {
// CHECK-NEXT: scf.forall (%[[T:.*]]) in (256) {
// CHECK: %[[LOW:.*]] = arith.cmpi ult, %[[B]], %c4
// CHECK-NEXT: scf.if %[[LOW]] {
// CHECK: arith.remui %[[B]], %c2
// CHECK: arith.divui %[[B]], %c2
// CHECK: arith.remui %[[T]], %c32
// CHECK: arith.divui %[[T]], %c32
// CHECK: linalg.generic
// CHECK: } else {
// CHECK: arith.cmpi ult, %[[B]], %c5
// CHECK: arith.cmpi ult, %[[T]], %c16
// CHECK: linalg.generic
// CHECK: } else {
// CHECK: arith.cmpi ult, %[[T]], %c1
// CHECK: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK: } {mapping = [#gpu.thread<x>]}
// CHECK-NEXT: } {mapping = [#gpu.block<x>]}
// CHECK-NEXT: return
func.func private @group(%a: memref<16x64xf32>, %b: memref<16x64xf32>,
                         %c: memref<16xf32>, %d: memref<16xf32>,
                         %s: memref<f32>) attributes {zero.kernel = "zero.launch_group"} {
  %zero = arith.constant 0.0 : f32
  zero.launch_group {
    linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<16x64xf32>) outs(%b : memref<16x64xf32>) {
    ^bb0(%x: f32, %o: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
    }
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%c : memref<16xf32>) outs(%d : memref<16xf32>) {
    ^bb0(%x: f32, %o: f32):
      %n = arith.negf %x : f32
      linalg.yield %n : f32
    }
    linalg.fill ins(%zero : f32) outs(%s : memref<f32>)
    linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]} ins(%c : memref<16xf32>) outs(%s : memref<f32>) {
    ^bb0(%x: f32, %acc: f32):
      %t = arith.addf %x, %acc : f32
      linalg.yield %t : f32
    }
  }
  return
}

// A kernel calls it once: its arguments are told apart.
func.func @calls_group(%a: memref<16x64xf32>, %b: memref<16x64xf32>,
                       %c: memref<16xf32>, %d: memref<16xf32>) {
  %s = memref.alloc() : memref<f32>
  %a0 = memref.alloc() : memref<16x64xf32>
  %b0 = memref.alloc() : memref<16x64xf32>
  %c0 = memref.alloc() : memref<16xf32>
  %d0 = memref.alloc() : memref<16xf32>
  func.call @group(%a0, %b0, %c0, %d0, %s) : (memref<16x64xf32>, memref<16x64xf32>, memref<16xf32>, memref<16xf32>, memref<f32>) -> ()
  return
}

// -----

// A row group over 4 x 16 rows: blocks of 8 rows (a warp each), a thread
// forall per op in order. The partials' op takes a lane per partial, the
// combine a thread per row (x of one), the normalization lane l's columns
// l, l + 32, ... (a strided view); the fills run in their op's threads.
// Each thread's row is the block's first row plus its y, delinearized.
// CHECK-LABEL: func.func private @rows
// CHECK: scf.forall (%[[B:.*]]) in (8) {
// CHECK: scf.forall (%[[T:.*]], %[[L:.*]]) in (8, 32) {
// CHECK: %[[R0:.*]] = arith.muli %[[B]], %[[C8:.*]] : index
// CHECK: %[[R:.*]] = arith.addi %[[R0]], %[[T]] : index
// CHECK: %[[I1:.*]] = arith.remui %[[R]], %[[C16:.*]] : index
// CHECK: %[[I0:.*]] = arith.divui %[[R]], %[[C16]] : index
// CHECK: memref.subview %arg1[%[[I0]], %[[I1]], 0, %[[L]]] [1, 1, 4, 1] [1, 1, 1, 32]
// CHECK: %[[P:.*]] = memref.subview %arg0[%[[I0]], %[[I1]], %[[L]]] [1, 1, 1] [1, 1, 32]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%{{.*}} : f32) outs(%[[P]]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]
// CHECK: } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (8, 1) {
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK: scf.forall (%{{.*}}, %[[L3:.*]]) in (8, 32) {
// CHECK: memref.subview %arg3[%{{.*}}, %{{.*}}, %[[L3]]] [1, 1, 4] [1, 1, 32]
// CHECK: } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK: } {mapping = [#gpu.block<x>]}
// CHECK-NOT: zero.row_group
#x4 = affine_map<(a, b, c, p) -> (a, b, c, p)>
#p4 = affine_map<(a, b, c, p) -> (a, b, p)>
#p3 = affine_map<(a, b, p) -> (a, b, p)>
#r3 = affine_map<(a, b, p) -> (a, b)>
#e3 = affine_map<(a, b, j) -> (a, b, j)>
#q3 = affine_map<(a, b, j) -> (a, b)>
func.func private @rows(%parts: memref<4x16x32xf32>, %x4: memref<4x16x4x32xf32>, %m: memref<4x16xf32>, %x: memref<4x16x128xf32>, %y: memref<4x16x128xf32>) attributes {zero.kernel = "zero.row_group"} {
  %lowest = arith.constant 0xFF800000 : f32
  zero.row_group rows(2) {
    linalg.fill ins(%lowest : f32) outs(%parts : memref<4x16x32xf32>)
    linalg.generic {indexing_maps = [#x4, #p4], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
        ins(%x4 : memref<4x16x4x32xf32>) outs(%parts : memref<4x16x32xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %in, %out : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%lowest : f32) outs(%m : memref<4x16xf32>)
    linalg.generic {indexing_maps = [#p3, #r3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%parts : memref<4x16x32xf32>) outs(%m : memref<4x16xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %in, %out : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#e3, #q3, #e3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x, %m : memref<4x16x128xf32>, memref<4x16xf32>) outs(%y : memref<4x16x128xf32>) {
    ^bb0(%in: f32, %max: f32, %out: f32):
      %0 = arith.subf %in, %max : f32
      %1 = math.exp %0 : f32
      linalg.yield %1 : f32
    }
  }
  return
}

// -----

// Elementwise over 1024 x 2048 bf16: a thread takes 2 adjacent rows (y),
// each row a warp's 32 adjacent columns (x): two loads of each operand in
// flight a thread while the grid keeps 2^20 threads (8 rows, 16 bytes of
// bf16, would leave 262,144).
// CHECK-LABEL: func.func private @coarse
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1024, 2048) step (16, 32) {
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (8, 32) {
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<2x1xbf16, strided<[2048, 1], offset: ?>>) outs(%{{.*}} : memref<2x1xbf16, strided<[2048, 1], offset: ?>>)
// CHECK: } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
// CHECK: } {mapping = [#gpu.block<y>, #gpu.block<x>]}
func.func private @coarse(%a: memref<1024x2048xbf16>, %b: memref<1024x2048xbf16>) attributes {zero.kernel = "linalg.generic"} {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<1024x2048xbf16>) outs(%b : memref<1024x2048xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %e = arith.negf %x : bf16
    linalg.yield %e : bf16
  }
  return
}

// A row sum over the same shape keeps one output a thread: its reduction
// already loops in each thread.
// CHECK-LABEL: func.func private @coarse_reduction_kept
// CHECK: scf.forall (%{{.*}}) = (0) to (1024) step (256) {
// CHECK: scf.forall (%{{.*}}) in (256) {
func.func private @coarse_reduction_kept(%a: memref<1024x2048xbf16>, %b: memref<1024xf32>) attributes {zero.kernel = "linalg.generic"} {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<1024x2048xbf16>) outs(%b : memref<1024xf32>) {
  ^bb0(%x: bf16, %o: f32):
    %w = arith.extf %x : bf16 to f32
    %s = arith.addf %w, %o : f32
    linalg.yield %s : f32
  }
  return
}

// f32 over 4096 x 1024 (4M elements): 4 rows a thread (16 bytes), 2^20
// threads.
// CHECK-LABEL: func.func private @coarse_f32
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4096, 1024) step (32, 32) {
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (8, 32) {
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : memref<4x1xf32, strided<[1024, 1], offset: ?>>)
func.func private @coarse_f32(%a: memref<4096x1024xf32>, %b: memref<4096x1024xf32>) attributes {zero.kernel = "linalg.generic"} {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a : memref<4096x1024xf32>) outs(%b : memref<4096x1024xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A member written only where its result is read (zero.written_region):
// rows below 32 of each [64, 128] slab take columns [32, 64) ([40, 50)
// widened to whole lanes: 1 iteration of a lane, from column 32), the
// others all 128 (4). A row's lanes take one branch.
// CHECK-LABEL: func.func private @rows_written_region
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (8, 1) {
// CHECK: scf.forall (%{{.*}}, %[[L:.*]]) in (8, 32) {
// CHECK: %[[I:.*]] = arith.remui %{{.*}}, %[[C64:.*]] : index
// CHECK: %[[A:.*]] = arith.divui %{{.*}}, %[[C64]] : index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[I]], %{{.*}} : index
// CHECK: scf.if %[[IN]] {
// CHECK: %[[O:.*]] = arith.addi %[[L]], %{{.*}} : index
// CHECK: memref.subview %arg0[%[[A]], %[[I]], %[[O]]] [1, 1, 1] [1, 1, 32]
// CHECK: linalg.generic
// CHECK-NOT: zero.written_region
// CHECK: } else {
// CHECK: memref.subview %arg0[%[[A]], %[[I]], %[[L]]] [1, 1, 4] [1, 1, 32]
// CHECK: linalg.generic
// CHECK: }
// CHECK: } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
#e3 = affine_map<(a, i, j) -> (a, i, j)>
#q3 = affine_map<(a, i, j) -> (a, i)>
func.func private @rows_written_region(%x: memref<2x64x128xf32>, %m: memref<2x64xf32>, %y: memref<2x64x128xf32>) attributes {zero.kernel = "zero.row_group"} {
  %lowest = arith.constant 0xFF800000 : f32
  zero.row_group rows(2) {
    linalg.fill ins(%lowest : f32) outs(%m : memref<2x64xf32>)
    linalg.generic {indexing_maps = [#e3, #q3], iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x : memref<2x64x128xf32>) outs(%m : memref<2x64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %in, %out : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#e3, #q3, #e3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x, %m : memref<2x64x128xf32>, memref<2x64xf32>) outs(%y : memref<2x64x128xf32>)
        attrs = {zero.written_region = array<i64: 32, 40, 50, 64, 0, 128>} {
    ^bb0(%in: f32, %max: f32, %out: f32):
      %0 = arith.subf %in, %max : f32
      %1 = math.exp %0 : f32
      linalg.yield %1 : f32
    }
  }
  return
}
