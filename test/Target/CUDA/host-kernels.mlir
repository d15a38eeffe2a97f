// RUN: zero-opt %s --zero-gpu-host-kernels -split-input-file | FileCheck %s
// RUN: zero-opt %s --zero-gpu-host-kernels -split-input-file --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// The host copy reads what gpu-to-llvm's launch passes, a pointer per
// value: the memref's descriptor fields (allocated, aligned, offset, the
// sizes, the strides), then the index. It runs every block (z, y, x) and
// thread (z, y, x) with the ids as loop variables; the device function and
// the launch stay.
// CHECK-LABEL: func.func @step
// CHECK: gpu.launch_func @zero_kernels::@scale
// CHECK: gpu.module @zero_kernels
// CHECK: gpu.func @scale
// CHECK: gpu.thread_id x
// CHECK-LABEL: func.func @zero_host_kernel_scale(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr, %[[GX:[^:]*]]: i64, %[[GY:[^:]*]]: i64, %[[GZ:[^:]*]]: i64, %[[BX:[^:]*]]: i64, %[[BY:[^:]*]]: i64, %[[BZ:[^:]*]]: i64)
// CHECK: %[[S0:.*]] = llvm.load %[[P]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.getelementptr %[[P]][1]
// CHECK: llvm.getelementptr %[[P]][2]
// CHECK: llvm.getelementptr %[[P]][3]
// CHECK: llvm.getelementptr %[[P]][4]
// CHECK: %[[M:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<?xf32, strided<[?], offset: ?>>
// CHECK: %[[A5:.*]] = llvm.getelementptr %[[P]][5]
// CHECK: %[[S5:.*]] = llvm.load %[[A5]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[N:.*]] = llvm.load %[[S5]] : !llvm.ptr -> i64
// CHECK: %[[NI:.*]] = builtin.unrealized_conversion_cast %[[N]] : i64 to index
// CHECK: %[[A6:.*]] = llvm.getelementptr %[[P]][6]
// CHECK: %[[S6:.*]] = llvm.load %[[A6]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[F:.*]] = llvm.load %[[S6]] : !llvm.ptr -> f32
// CHECK-DAG: %[[IGX:.*]] = arith.index_cast %[[GX]] : i64 to index
// CHECK-DAG: %[[IGZ:.*]] = arith.index_cast %[[GZ]] : i64 to index
// CHECK-DAG: %[[IBX:.*]] = arith.index_cast %[[BX]] : i64 to index
// CHECK-DAG: %[[IBZ:.*]] = arith.index_cast %[[BZ]] : i64 to index
// CHECK: scf.for %[[BIZ:.*]] = %{{.*}} to %[[IGZ]]
// CHECK: scf.for
// CHECK: scf.for %[[BIX:.*]] = %{{.*}} to %[[IGX]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[TIX:.*]] = %{{.*}} to %[[IBX]]
// CHECK: %[[MUL:.*]] = arith.muli %[[BIX]], %[[IBX]] : index
// CHECK: %[[I:.*]] = arith.addi %[[MUL]], %[[TIX]] : index
// CHECK: arith.cmpi ult, %[[I]], %[[NI]] : index
// CHECK: memref.load %[[M]][%[[I]]]
// CHECK: arith.mulf %{{.*}}, %[[F]] : f32
// CHECK: memref.store
// CHECK-NOT: gpu.block_id
// CHECK-NOT: gpu.thread_id
// CHECK: return
// The argument spec: the memref is read and written, two scalars.
// CHECK: llvm.mlir.global external constant @zero_host_kernel_scale_args("m1:4:rw s s\00")

// Lowered, the copy is a C function void(void **, int64_t x 6).
// LLVM: llvm.func @zero_host_kernel_scale(%{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
module attributes {gpu.container_module} {
  func.func @step(%a: memref<?xf32, strided<[?], offset: ?>>, %n: index, %f: f32) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @zero_kernels::@scale blocks in (%c4, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<?xf32, strided<[?], offset: ?>>, %n : index, %f : f32)
    return
  }
  gpu.module @zero_kernels {
    gpu.func @scale(%a: memref<?xf32, strided<[?], offset: ?>>, %n: index, %f: f32) kernel {
      %b = gpu.block_id x
      %t = gpu.thread_id x
      %d = gpu.block_dim x
      %0 = arith.muli %b, %d : index
      %i = arith.addi %0, %t : index
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %x = memref.load %a[%i] : memref<?xf32, strided<[?], offset: ?>>
        %y = arith.mulf %x, %f : f32
        memref.store %y, %a[%i] : memref<?xf32, strided<[?], offset: ?>>
      }
      gpu.return
    }
  }
}

// -----

// 16-bit floats compute in f32 and round back; their conversions become
// integer arithmetic. A 0-d memref is three fields.
// CHECK-LABEL: func.func @zero_host_kernel_gelu(
// CHECK: llvm.getelementptr %{{.*}}[2]
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64)> to memref<bf16>
// CHECK-NOT: llvm.getelementptr %{{.*}}[3]
// CHECK: memref.load %{{.*}}[] : memref<bf16>
// CHECK: arith.bitcast %{{.*}} : bf16 to i16
// CHECK: math.erf %{{.*}} : f32
// CHECK: arith.mulf %{{.*}} : f32
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK: memref.store %{{.*}}[] : memref<bf16>
// CHECK: llvm.mlir.global external constant @zero_host_kernel_gelu_args("m0:2:rw\00")
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    gpu.func @gelu(%a: memref<bf16>) kernel {
      %x = memref.load %a[] : memref<bf16>
      %e = math.erf %x : bf16
      %y = arith.mulf %x, %e : bf16
      memref.store %y, %a[] : memref<bf16>
      gpu.return
    }
  }
}

// -----

// Effects through views: a read-only input seen through a reinterpret_cast
// and an output written through a subview; an unused buffer touches
// nothing; i1 elements take a byte.
// CHECK-LABEL: func.func @zero_host_kernel_views(
// CHECK: llvm.mlir.global external constant @zero_host_kernel_views_args("m2:4:r m1:4:w m1:4:- m1:1:r\00")
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    gpu.func @views(%in: memref<4x8xf32>, %out: memref<32xf32>, %unused: memref<8xf32>, %mask: memref<8xi1>) kernel {
      %t = gpu.thread_id x
      %flat = memref.reinterpret_cast %in to offset: [0], sizes: [32], strides: [1] : memref<4x8xf32> to memref<32xf32>
      %x = memref.load %flat[%t] : memref<32xf32>
      %m = memref.load %mask[%t] : memref<8xi1>
      %y = arith.select %m, %x, %x : f32
      %part = memref.subview %out[8] [8] [1] : memref<32xf32> to memref<8xf32, strided<[1], offset: 8>>
      memref.store %y, %part[%t] : memref<8xf32, strided<[1], offset: 8>>
      gpu.return
    }
  }
}

// -----

// A barrier splits the body into phases: each block runs the first phase
// for every thread (z, y, x), then the second; what the second uses from
// the first (the row index from the thread id) is computed again in its
// own thread loop.
// CHECK-LABEL: func.func @zero_host_kernel_phases(
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[T1:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[R1:.*]] = arith.addi %[[B]], %[[T1]] : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[R1]]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[T2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: %[[R2:.*]] = arith.addi %[[B]], %[[T2]] : index
// CHECK: memref.load %{{.*}}[%[[R2]]]
// CHECK-NOT: gpu.barrier
// CHECK: return
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    gpu.func @phases(%a: memref<64xf32>, %b: memref<64xf32>) kernel {
      %bid = gpu.block_id x
      %t = gpu.thread_id x
      %r = arith.addi %bid, %t : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%r] : memref<64xf32>
      gpu.barrier
      %x = memref.load %a[%r] : memref<64xf32>
      memref.store %x, %b[%r] : memref<64xf32>
      gpu.return
    }
  }
}
