// RUN: zero-opt %s --zero-gpu-arena=alignment=64 | FileCheck %s
// A loop body is replayed once: what it allocates and frees reuses one
// block every iteration; a buffer live across the loop keeps its own. A
// free under a condition keeps the block to the end. Buffers are aligned
// to the option's alignment; kernels are left alone.
// CHECK: arena = {alignment = 64 : i64, buffers = [{bytes = 64 : i64, category = "other", offset = 0 : i64}, {bytes = 4 : i64, category = "other", offset = 64 : i64}, {bytes = 8 : i64, category = "other", offset = 64 : i64}], bytes = 128 : i64}
// CHECK-LABEL: func.func @step
// CHECK: %[[ACC:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : memref<128xi8> to memref<16xf32>
// CHECK: scf.for
// CHECK: %[[T:.*]] = memref.view %{{.*}}[%c64{{.*}}][] : memref<128xi8> to memref<1xf32>
// CHECK: call @use(%[[ACC]], %[[T]])
// CHECK: scf.if
// CHECK-NOT: memref.dealloc
// CHECK: memref.view %{{.*}}[%c64{{.*}}][] : memref<128xi8> to memref<2xf32>
// CHECK-LABEL: func.func private @kernel
// CHECK: memref.alloc
// CHECK: memref.dealloc
module {
  func.func private @use(memref<16xf32>, memref<1xf32>)
  func.func @step(%n: index, %p: i1) attributes {zero.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %acc = memref.alloc() : memref<16xf32>
    scf.for %i = %c0 to %n step %c1 {
      %t = memref.alloc() : memref<1xf32>
      func.call @use(%acc, %t) : (memref<16xf32>, memref<1xf32>) -> ()
      memref.dealloc %t : memref<1xf32>
    }
    scf.if %p {
      memref.dealloc %acc : memref<16xf32>
    }
    %u = memref.alloc() : memref<2xf32>
    memref.dealloc %u : memref<2xf32>
    return
  }
  func.func private @kernel() attributes {zero.kernel = "scf.for"} {
    %b = memref.alloc() : memref<4xf32>
    memref.dealloc %b : memref<4xf32>
    return
  }
}
