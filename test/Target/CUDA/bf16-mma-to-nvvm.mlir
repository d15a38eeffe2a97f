// RUN: zero-opt %s --zero-gpu-bf16-mma-to-nvvm -split-input-file | FileCheck %s
// RUN: zero-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(zero-gpu-bf16-mma-to-nvvm,convert-nvgpu-to-nvvm,convert-gpu-to-nvvm,reconcile-unrealized-casts))" | FileCheck %s --check-prefix=NVVM

// A bf16 product: each row of A (4) and B (2) one i32 register, its two
// values' bits as they lie (the first low), C's four accumulators in row
// order, D's rows from the result struct.
// CHECK-LABEL: gpu.func @bf16
// CHECK-SAME: (%[[A:[^:]*]]: vector<4x2xbf16>, %[[B:[^:]*]]: vector<2x2xbf16>, %[[C:[^:]*]]: vector<2x2xf32>
// CHECK: %[[A0:.*]] = vector.extract %[[A]][0] : vector<2xbf16> from vector<4x2xbf16>
// CHECK: %[[W0:.*]] = vector.bitcast %[[A0]] : vector<2xbf16> to vector<1xi32>
// CHECK: %[[R0:.*]] = vector.extract %[[W0]][0] : i32 from vector<1xi32>
// CHECK: vector.extract %[[A]][3] : vector<2xbf16> from vector<4x2xbf16>
// CHECK: vector.extract %[[B]][1] : vector<2xbf16> from vector<2x2xbf16>
// CHECK: %[[C00:.*]] = vector.extract %[[C]][0, 0] : f32 from vector<2x2xf32>
// CHECK: %[[C01:.*]] = vector.extract %[[C]][0, 1] : f32 from vector<2x2xf32>
// CHECK: %[[C10:.*]] = vector.extract %[[C]][1, 0] : f32 from vector<2x2xf32>
// CHECK: %[[C11:.*]] = vector.extract %[[C]][1, 1] : f32 from vector<2x2xf32>
// CHECK: %[[D:.*]] = nvvm.mma.sync A[%[[R0]], %{{.*}}, %{{.*}}, %{{.*}}] B[%{{.*}}, %{{.*}}] C[%[[C00]], %[[C01]], %[[C10]], %[[C11]]] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[D0:.*]] = llvm.extractvalue %[[D]][0]
// CHECK: %[[D1:.*]] = llvm.extractvalue %[[D]][1]
// CHECK: %[[D2:.*]] = llvm.extractvalue %[[D]][2]
// CHECK: %[[D3:.*]] = llvm.extractvalue %[[D]][3]
// CHECK: %[[V:.*]] = vector.from_elements %[[D0]], %[[D1]], %[[D2]], %[[D3]] : vector<2x2xf32>
// CHECK: vector.transfer_write %[[V]]
// CHECK-NOT: nvgpu.mma.sync
// Whole, PTX's bf16 mma intrinsic on the device.
// NVVM-LABEL: llvm.func @bf16
// NVVM: nvvm.mma.sync {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>
// NVVM-NOT: nvgpu.
gpu.module @kernels {
  gpu.func @bf16(%a: vector<4x2xbf16>, %b: vector<2x2xbf16>, %c: vector<2x2xf32>, %out: memref<2x2xf32>) {
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    vector.transfer_write %d, %out[%c0, %c0] {in_bounds = [true, true]} : vector<2x2xf32>, memref<2x2xf32>
    gpu.return
  }
}

// -----

// f16 is upstream's to convert (`convert-nvgpu-to-nvvm`): its registers
// are vectors of two f16.
// CHECK-LABEL: gpu.func @f16
// CHECK: nvgpu.mma.sync
// CHECK-NOT: nvvm.mma.sync
// NVVM-LABEL: llvm.func @f16
// NVVM: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
gpu.module @kernels {
  gpu.func @f16(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %c: vector<2x2xf32>, %out: memref<2x2xf32>) {
    %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %c0 = arith.constant 0 : index
    vector.transfer_write %d, %out[%c0, %c0] {in_bounds = [true, true]} : vector<2x2xf32>, memref<2x2xf32>
    gpu.return
  }
}
