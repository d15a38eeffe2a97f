// RUN: zero-opt %s --zero-gpu-host-kernels -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file --pass-pipeline="builtin.module(zero-gpu-host-kernels,gpu.module(zero-gpu-bf16-mma-to-nvvm,convert-nvgpu-to-nvvm,convert-gpu-to-nvvm),convert-scf-to-cf,convert-vector-to-llvm,convert-to-llvm,reconcile-unrealized-casts)" | FileCheck %s --check-prefix=LLVM

// A loaded value crosses a barrier: each thread's own, so the threads run
// side by side. The copy runs one thread: the parameter array, the
// emulator's context, then grid, block, block id and thread id (x, y, z
// each); the context's slots are read once at the entry, and the barrier
// calls the first.
// CHECK-LABEL: func.func @zero_host_thread_sync(
// CHECK-SAME: %[[P:[^:]*]]: !llvm.ptr, %[[CTX:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[TX:[^:]*]]: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64)
// CHECK: %[[T:.*]] = arith.index_cast %[[TX]] : i64 to index
// CHECK: %[[SLOT:.*]] = llvm.load %[[CTX]] : !llvm.ptr -> !llvm.ptr
// CHECK: cf.br ^[[BODY:.*]]
// CHECK: ^[[BODY]]:
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%[[T]]] : memref<8xf32>
// CHECK: llvm.call %[[SLOT]](%[[CTX]]) : !llvm.ptr, (!llvm.ptr) -> ()
// CHECK: memref.store %[[X]], %{{.*}}[%[[T]]] : memref<8xf32>
// CHECK: return
// CHECK-NOT: gpu.barrier
// CHECK: llvm.mlir.global external constant @zero_host_thread_sync_args("m1:4:rw\00")
// CHECK: llvm.mlir.global external constant @zero_host_thread_sync_shared(0 : i64)
// CHECK-NOT: zero_host_kernel_sync

// Lowered, a C function void(void **, void *, int64_t x 12).
// LLVM-LABEL: llvm.func @zero_host_thread_sync(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// LLVM-NOT: builtin.unrealized_conversion_cast
// LLVM: llvm.return
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    gpu.func @sync(%a: memref<8xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<8xf32>
      gpu.barrier
      memref.store %x, %a[%t] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// Workgroup buffers lie in the block's shared bytes (the context's fourth
// slot) in order, each 16-byte aligned: 12 bytes, then 128 at 16; the
// copy's memrefs are host memory. A barrier in a loop, and one in a
// branch, call the emulator where they are; a private buffer is the
// thread's.
// CHECK-LABEL: func.func @zero_host_thread_tiles(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %[[CTX:[^:]*]]: !llvm.ptr
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[CTX]][3] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[SHARED:.*]] = llvm.load %[[AT]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.insertvalue %[[SHARED]], %{{.*}}[1]
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<3xf32>
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[SHARED]][16] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.insertvalue %[[S1]], %{{.*}}[1]
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)> to memref<32xf32>
// CHECK: memref.alloca() : memref<4xf32>
// CHECK: scf.for
// CHECK: memref.store %{{.*}} : memref<32xf32>
// CHECK: llvm.call
// CHECK: memref.load %{{.*}} : memref<32xf32>
// CHECK: scf.if
// CHECK: llvm.call
// CHECK-NOT: #gpu.address_space
// CHECK: llvm.mlir.global external constant @zero_host_thread_tiles_shared(144 : i64)
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    gpu.func @tiles(%a: memref<128xf32>, %c: i1)
        workgroup(%w: memref<3xf32, #gpu.address_space<workgroup>>,
                  %s: memref<32xf32, #gpu.address_space<workgroup>>)
        private(%p: memref<4xf32, #gpu.address_space<private>>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %t = gpu.thread_id x
      scf.for %i = %c0 to %c4 step %c1 {
        %x = memref.load %a[%t] : memref<128xf32>
        memref.store %x, %s[%t] : memref<32xf32, #gpu.address_space<workgroup>>
        gpu.barrier
        %y = memref.load %s[%c0] : memref<32xf32, #gpu.address_space<workgroup>>
        memref.store %y, %p[%i] : memref<4xf32, #gpu.address_space<private>>
        memref.store %y, %w[%c0] : memref<3xf32, #gpu.address_space<workgroup>>
      }
      scf.if %c {
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

// A shuffle passes its value's 32 bits, offset, width and mode (xor 0,
// up 1, down 2, idx 3) to the context's second slot, and reads the value
// in the low 32 bits of what comes back, whether it is valid in bit 32.
// The lane is the thread's place in its warp, x fastest.
// CHECK-LABEL: func.func @zero_host_thread_shuffle(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %[[CTX:[^:]*]]: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[BX:[^:]*]]: i64, %[[BY:[^:]*]]: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %[[TX:[^:]*]]: i64, %[[TY:[^:]*]]: i64, %[[TZ:[^:]*]]: i64)
// CHECK-DAG: %[[IBX:.*]] = arith.index_cast %[[BX]] : i64 to index
// CHECK-DAG: %[[IBY:.*]] = arith.index_cast %[[BY]] : i64 to index
// CHECK-DAG: %[[ITX:.*]] = arith.index_cast %[[TX]] : i64 to index
// CHECK-DAG: %[[ITY:.*]] = arith.index_cast %[[TY]] : i64 to index
// CHECK-DAG: %[[ITZ:.*]] = arith.index_cast %[[TZ]] : i64 to index
// CHECK: %[[ZY:.*]] = arith.muli %[[IBY]], %[[ITZ]] : index
// CHECK: %[[YZ:.*]] = arith.addi %[[ITY]], %[[ZY]] : index
// CHECK: %[[XYZ:.*]] = arith.muli %[[IBX]], %[[YZ]] : index
// CHECK: %[[LIN:.*]] = arith.addi %[[ITX]], %[[XYZ]] : index
// CHECK: %[[LANE:.*]] = arith.remui %[[LIN]], %c32 : index
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[CTX]][1]
// CHECK: %[[FN:.*]] = llvm.load %[[AT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK: %[[MODE:.*]] = arith.constant 2 : i32
// CHECK: %[[R:.*]] = llvm.call %[[FN]](%[[CTX]], %[[BITS]], %{{.*}}, %{{.*}}, %[[MODE]]) : !llvm.ptr, (!llvm.ptr, i32, i32, i32, i32) -> i64
// CHECK: %[[LOW:.*]] = arith.trunci %[[R]] : i64 to i32
// CHECK: %[[V:.*]] = arith.bitcast %[[LOW]] : i32 to f32
// CHECK: %[[HI:.*]] = arith.shrui %[[R]], %{{.*}} : i64
// CHECK: %[[OK:.*]] = arith.trunci %[[HI]] : i64 to i1
// CHECK: arith.select %[[OK]], %[[V]]
// CHECK: memref.store %{{.*}}[%[[LANE]]]
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    gpu.func @shuffle(%a: memref<32xf32>) kernel {
      %t = gpu.thread_id x
      %lane = gpu.lane_id
      %one = arith.constant 1 : i32
      %width = arith.constant 32 : i32
      %zero = arith.constant 0.0 : f32
      %x = memref.load %a[%t] : memref<32xf32>
      %y, %ok = gpu.shuffle down %x, %one, %width : f32
      %z = arith.select %ok, %y, %zero : f32
      memref.store %z, %a[%lane] : memref<32xf32>
      gpu.return
    }
  }
}

// -----

// A warp matrix product: the thread's registers of A, B and C in buffers
// made once at the entry for every product (rows in order), the context's third slot given
// them, D's buffer and the kind (0: bf16, 1: f16); D read back by rows.
// On the device, bf16 becomes nvvm.mma.sync on 32-bit registers.
// CHECK-LABEL: func.func @zero_host_thread_mma(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %[[CTX:[^:]*]]: !llvm.ptr
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[CTX]][2]
// CHECK: %[[FN:.*]] = llvm.load %[[AT]] : !llvm.ptr -> !llvm.ptr
// CHECK-DAG: %[[A:.*]] = memref.alloca() : memref<8xbf16>
// CHECK-DAG: %[[B:.*]] = memref.alloca() : memref<4xbf16>
// CHECK-DAG: %[[C:.*]] = memref.alloca() : memref<4xf32>
// CHECK-DAG: %[[D:.*]] = memref.alloca() : memref<4xf32>
// CHECK: cf.br
// CHECK: scf.for
// CHECK: %[[A0:.*]] = vector.extract %{{.*}}[0] : vector<2xbf16> from vector<4x2xbf16>
// CHECK: vector.store %[[A0]], %[[A]][%c0{{.*}}] : memref<8xbf16>, vector<2xbf16>
// CHECK: vector.store %{{.*}}, %[[A]][%c6{{.*}}] : memref<8xbf16>, vector<2xbf16>
// CHECK: vector.store %{{.*}}, %[[B]][%c2{{.*}}] : memref<4xbf16>, vector<2xbf16>
// CHECK: vector.store %{{.*}}, %[[C]][%c2{{.*}}] : memref<4xf32>, vector<2xf32>
// CHECK: %[[KIND:.*]] = arith.constant 0 : i32
// CHECK: llvm.call %[[FN]](%[[CTX]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[KIND]]) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> ()
// CHECK: vector.load %[[D]][%c0{{.*}}] : memref<4xf32>, vector<2xf32>
// CHECK: vector.load %[[D]][%c2{{.*}}] : memref<4xf32>, vector<2xf32>
// The loop's second product stores into the same buffers.
// CHECK-NOT: memref.alloca
// CHECK: vector.store %{{.*}}, %[[A]][%c0{{.*}}] : memref<8xbf16>, vector<2xbf16>
// CHECK: llvm.call %[[FN]]
// CHECK: vector.load %[[D]][%c0{{.*}}] : memref<4xf32>, vector<2xf32>
// CHECK-NOT: nvgpu.mma.sync
// CHECK: return
// LLVM-LABEL: gpu.module @zero_kernels
// LLVM: nvvm.mma.sync A[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// LLVM-LABEL: llvm.func @zero_host_thread_mma(
// LLVM-COUNT-4: llvm.alloca
// LLVM-NOT: llvm.alloca
// LLVM: llvm.call
// LLVM-NOT: vector.
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    gpu.func @mma(%a: memref<32x8xbf16>, %b: memref<32x4xbf16>, %c: memref<32x4xf32>, %n: index) kernel {
      %l = gpu.lane_id
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %pb = arith.constant 0.0 : bf16
      %pf = arith.constant 0.0 : f32
      %va = vector.transfer_read %a[%l, %c0], %pb {in_bounds = [true]} : memref<32x8xbf16>, vector<8xbf16>
      %vb = vector.transfer_read %b[%l, %c0], %pb {in_bounds = [true]} : memref<32x4xbf16>, vector<4xbf16>
      %vc = vector.transfer_read %c[%l, %c0], %pf {in_bounds = [true]} : memref<32x4xf32>, vector<4xf32>
      %A = vector.shape_cast %va : vector<8xbf16> to vector<4x2xbf16>
      %B = vector.shape_cast %vb : vector<4xbf16> to vector<2x2xbf16>
      %C = vector.shape_cast %vc : vector<4xf32> to vector<2x2xf32>
      %D = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %C) -> vector<2x2xf32> {
        %once = nvgpu.mma.sync (%A, %B, %acc) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
        %next = nvgpu.mma.sync (%A, %B, %once) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
        scf.yield %next : vector<2x2xf32>
      }
      %vd = vector.shape_cast %D : vector<2x2xf32> to vector<4xf32>
      vector.transfer_write %vd, %c[%l, %c0] {in_bounds = [true]} : vector<4xf32>, memref<32x4xf32>
      gpu.return
    }
  }
}

// -----

// A body of several blocks: the entry branches to the kernel's first,
// each gpu.return returns.
// CHECK-LABEL: func.func @zero_host_thread_branches(
// CHECK: cf.br ^[[FIRST:.*]]
// CHECK: ^[[FIRST]]:
// CHECK: cf.cond_br %{{.*}}, ^[[B1:.*]], ^[[B2:.*]]
// CHECK: ^[[B1]]:
// CHECK-NEXT: return
// CHECK: ^[[B2]]:
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    gpu.func @branches(%a: memref<8xf32>, %c: i1) kernel {
      cf.cond_br %c, ^bb1, ^bb2
    ^bb1:
      gpu.return
    ^bb2:
      gpu.return
    }
  }
}
