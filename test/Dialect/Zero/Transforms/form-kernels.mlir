// RUN: zero-opt %s --zero-form-kernels -split-input-file | FileCheck %s

// The same elementwise op on two views of one flat buffer (a layer's
// weights after another's, as in a gather bucket) is one kernel: the views'
// static offsets become a dynamic one. A different op is another kernel.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK: module attributes {zero.kernels = {formed = 4 : i64, unique = 3 : i64}}
// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: %[[FLAT:.*]]: memref<128xf32>
// CHECK: %[[V0:.*]] = memref.reinterpret_cast %[[FLAT]] to offset: [0]
// CHECK: %[[V1:.*]] = memref.reinterpret_cast %[[FLAT]] to offset: [64]
// CHECK: %[[A0:.*]] = memref.alloc
// CHECK: %[[C0:.*]] = memref.cast %[[V0]] : memref<8x8xf32, strided<[8, 1]>> to memref<8x8xf32, strided<[8, 1], offset: ?>>
// CHECK: call @[[GELU:kernel_0_generic]](%[[C0]], %[[A0]])
// CHECK: %[[C1:.*]] = memref.cast %[[V1]] : memref<8x8xf32, strided<[8, 1], offset: 64>> to memref<8x8xf32, strided<[8, 1], offset: ?>>
// CHECK: call @[[GELU]](%[[C1]], %[[A1:[a-z_0-9]+]])
// CHECK: call @[[ADD:kernel_2_generic]](%[[A0]], %[[A1]])
// CHECK: call @[[COPY:kernel_3_copy]](%[[A0]], %arg1)
// CHECK-NOT: linalg.generic
// CHECK: return
// The kernels: private, marked with their root op, constants cloned in.
// CHECK: func.func private @[[GELU]](%{{.*}}: memref<8x8xf32, strided<[8, 1], offset: ?>>, %{{.*}}: memref<8x8xf32>) attributes {zero.kernel = "linalg.generic"}
// CHECK: arith.constant 5.000000e-01
// CHECK: linalg.generic
// CHECK: func.func private @[[ADD]](
// CHECK: func.func private @[[COPY]](
// CHECK-NOT: func.func private @kernel_1
func.func @two_layers(%flat: memref<128xf32>, %out: memref<8x8xf32>) {
  %half = arith.constant 0.5 : f32
  %v0 = memref.reinterpret_cast %flat to offset: [0], sizes: [8, 8], strides: [8, 1] : memref<128xf32> to memref<8x8xf32, strided<[8, 1]>>
  %v1 = memref.reinterpret_cast %flat to offset: [64], sizes: [8, 8], strides: [8, 1] : memref<128xf32> to memref<8x8xf32, strided<[8, 1], offset: 64>>
  %a0 = memref.alloc() : memref<8x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v0 : memref<8x8xf32, strided<[8, 1]>>) outs(%a0 : memref<8x8xf32>) attrs = {zero.backward} {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %half : f32
    linalg.yield %y : f32
  }
  %a1 = memref.alloc() : memref<8x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v1 : memref<8x8xf32, strided<[8, 1], offset: 64>>) outs(%a1 : memref<8x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %half : f32
    linalg.yield %y : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a0, %a1 : memref<8x8xf32>, memref<8x8xf32>) outs(%a0 : memref<8x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  memref.copy %a0, %out : memref<8x8xf32> to memref<8x8xf32>
  memref.dealloc %a1 : memref<8x8xf32>
  memref.dealloc %a0 : memref<8x8xf32>
  return
}

// -----

// A reduction's accumulator fill joins its kernel; the collective, the
// allocation and the BLAS call stay in the step.
// CHECK: zero.kernels = {formed = 1 : i64, unique = 1 : i64}
// CHECK-LABEL: func.func @reduce_and_communicate
// CHECK: memref.alloc
// CHECK-NEXT: call @[[SUM:kernel_0_reduce]](%[[ACC:.*]], %arg0)
// CHECK-NEXT: %[[R:.*]] = zero.all_reduce_start
// CHECK-NEXT: zero.wait %[[R]]
// CHECK-NEXT: call @sgemm
// CHECK: func.func private @[[SUM]]
// CHECK-NEXT: arith.constant 0.0
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.reduce
func.func private @sgemm(memref<4xf32>)
func.func @reduce_and_communicate(%x: memref<4x16xf32>, %y: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<4xf32>)
  linalg.reduce ins(%x : memref<4x16xf32>) outs(%acc : memref<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  %r = zero.all_reduce_start %acc into %y {world_size = 2 : i64} : memref<4xf32>, memref<4xf32>
  zero.wait %r
  call @sgemm(%y) : (memref<4xf32>) -> ()
  memref.dealloc %acc : memref<4xf32>
  return
}

// -----

// A reduction with two outputs takes both their fills, in order, into its
// kernel.
// CHECK: zero.kernels = {formed = 1 : i64, unique = 1 : i64}
// CHECK-LABEL: func.func @two_accumulators
// CHECK: memref.alloc
// CHECK-NEXT: memref.alloc
// CHECK-NEXT: call @[[SUMS:kernel_0_generic]](%{{.*}}, %{{.*}}, %arg0)
// CHECK-NEXT: return
// CHECK: func.func private @[[SUMS]]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg0 : memref<4xf32>)
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%arg1 : memref<4xf32>)
// CHECK-NEXT: linalg.generic
func.func @two_accumulators(%x: memref<4x16xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %low = arith.constant 0xFF800000 : f32
  %s = memref.alloc() : memref<4xf32>
  %m = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<4xf32>)
  linalg.fill ins(%low : f32) outs(%m : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x16xf32>) outs(%s, %m : memref<4xf32>, memref<4xf32>) {
  ^bb0(%in: f32, %acc: f32, %mx: f32):
    %a = arith.addf %in, %acc : f32
    %b = arith.maximumf %in, %mx : f32
    linalg.yield %a, %b : f32, f32
  }
  return %s, %m : memref<4xf32>, memref<4xf32>
}

// -----

// A loop of pure compute is one kernel, with the buffers it allocates for
// each iteration and the scalars it reads; the step keeps no loop.
// CHECK-LABEL: func.func @scatter_rows
// CHECK-NOT: scf.for
// CHECK: call @[[LOOP:kernel_0_for]](%{{.*}}, %{{.*}}, %{{.*}}) : (memref<4xi32>, memref<4x8xf32>, memref<16x8xf32>) -> ()
// CHECK-NOT: scf.for
// CHECK: return
// CHECK: func.func private @[[LOOP]]({{.*}}) attributes {zero.kernel = "scf.for"}
// CHECK: scf.for
// CHECK: memref.alloc
// CHECK: memref.dealloc
func.func @scatter_rows(%idx: memref<4xi32>, %src: memref<4x8xf32>, %dst: memref<16x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %j32 = memref.load %idx[%i] : memref<4xi32>
    %j = arith.index_cast %j32 : i32 to index
    %row = memref.subview %src[%i, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    %tmp = memref.alloc() : memref<8xf32>
    memref.copy %row, %tmp : memref<8xf32, strided<[1], offset: ?>> to memref<8xf32>
    %out = memref.subview %dst[%j, 0] [1, 8] [1, 1] : memref<16x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    memref.copy %tmp, %out : memref<8xf32> to memref<8xf32, strided<[1], offset: ?>>
    memref.dealloc %tmp : memref<8xf32>
  }
  return
}

// -----

// Launch groups writing other slots of one buffer (a bucket's members) are
// one kernel: views that only the group's copies and linalg ops use take a
// dynamic offset, `strided<[1]>` at offset 0 too. A view that a bucket copy
// reads keeps its static offset.

// CHECK: module attributes {zero.kernels = {formed = 3 : i64, unique = 2 : i64}}
// CHECK-LABEL: func.func @group_slots
// CHECK: call @[[SLOTS:kernel_0_launch_group]](%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) :
// CHECK-SAME: memref<8xf32, strided<[1], offset: ?>>
// CHECK: call @[[SLOTS]](
// CHECK: call @[[PACK:kernel_2_launch_group]](
// CHECK: func.func private @[[SLOTS]](%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32, strided<[1], offset: ?>>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32, strided<[1], offset: ?>>)
// CHECK: func.func private @[[PACK]](%{{.*}}: memref<8xf32, strided<[1], offset: 8>>, %{{.*}}: memref<16xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32, strided<[1], offset: ?>>)
// CHECK-NOT: func.func private @kernel_1
func.func @group_slots(%flat: memref<32xf32>, %a: memref<8xf32>, %b: memref<8xf32>,
                       %c: memref<8xf32>, %d: memref<8xf32>, %stage: memref<16xf32>) {
  %s0 = memref.subview %flat[0] [8] [1] : memref<32xf32> to memref<8xf32, strided<[1]>>
  %s1 = memref.subview %flat[8] [8] [1] : memref<32xf32> to memref<8xf32, strided<[1], offset: 8>>
  %s2 = memref.subview %flat[16] [8] [1] : memref<32xf32> to memref<8xf32, strided<[1], offset: 16>>
  %s3 = memref.subview %flat[24] [8] [1] : memref<32xf32> to memref<8xf32, strided<[1], offset: 24>>
  zero.launch_group {
    memref.copy %a, %s0 : memref<8xf32> to memref<8xf32, strided<[1]>>
    memref.copy %b, %s1 : memref<8xf32> to memref<8xf32, strided<[1], offset: 8>>
  }
  zero.launch_group {
    memref.copy %c, %s2 : memref<8xf32> to memref<8xf32, strided<[1], offset: 16>>
    memref.copy %d, %s3 : memref<8xf32> to memref<8xf32, strided<[1], offset: 24>>
  }
  zero.launch_group {
    zero.bucket_pack %s1 into %stage[0] rows 1 : memref<8xf32, strided<[1], offset: 8>>, memref<16xf32>
    memref.copy %a, %s2 : memref<8xf32> to memref<8xf32, strided<[1], offset: 16>>
  }
  return
}
