// RUN: zero-opt %s --zero-gpu-arena -split-input-file | FileCheck %s

// Constants first, in blocks nothing else uses, filled on the compute
// stream only when the step's claim on the arena says they may be gone; a
// freed block is reused by the next buffer that fits; deallocations go.
// The layout the views use is the one recorded for plan.json.
// CHECK: zero.memory = {train_step = {arena = {alignment = 256 : i64, buffers = [{bytes = 16 : i64, category = "constant", offset = 0 : i64}, {bytes = 32 : i64, category = "other", offset = 256 : i64}, {bytes = 400 : i64, category = "other", offset = 512 : i64}, {bytes = 32 : i64, category = "other", offset = 256 : i64}], bytes = 1024 : i64}}}
// CHECK: memref.global "private" @__zero_arena_owner_train_step : memref<i8> = dense<0>
// CHECK-LABEL: func.func @train_step
// CHECK: %[[BASE:.*]] = call @zero_rt_cuda_arena(%c1024_i64) : (i64) -> i64
// CHECK: llvm.inttoptr %[[BASE]]
// CHECK: %[[ARENA:.*]] = builtin.unrealized_conversion_cast {{.*}} to memref<1024xi8>
// CHECK: %[[HOST:.*]] = memref.get_global @__constant_4xf32
// CHECK: %[[CONST:.*]] = memref.view %[[ARENA]][%c0][] : memref<1024xi8> to memref<4xf32>
// CHECK: %[[OWNER:.*]] = memref.get_global @__zero_arena_owner_train_step : memref<i8>
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[OWNER]]
// CHECK: %[[ID:.*]] = arith.index_cast %[[PTR]] : index to i64
// CHECK: %[[CLAIM:.*]] = call @zero_rt_cuda_arena_claim(%[[ID]]) : (i64) -> i32
// CHECK: %[[CHANGED:.*]] = arith.cmpi ne, %[[CLAIM]], %{{.*}} : i32
// CHECK: scf.if %[[CHANGED]] {
// CHECK-NEXT: %[[S:.*]] = gpu.wait async
// CHECK-NEXT: gpu.memcpy async [%[[S]]] %[[CONST]], %[[HOST]]
// CHECK-NEXT: }
// CHECK: %[[A:.*]] = memref.view %[[ARENA]][%c256][] : memref<1024xi8> to memref<8xf32>
// CHECK: call @k(%[[CONST]], %[[A]])
// CHECK: memref.view %[[ARENA]][%c512][] : memref<1024xi8> to memref<100xf32>
// CHECK: %[[D:.*]] = memref.view %[[ARENA]][%c256{{.*}}][] : memref<1024xi8> to memref<8xf32>
// CHECK: call @k(%arg0, %[[D]])
// CHECK-NOT: memref.dealloc
// CHECK: return
module {
  memref.global "private" constant @__constant_4xf32 : memref<4xf32> = dense<1.0>
  func.func private @k(memref<4xf32>, memref<8xf32>)
  func.func @train_step(%arg0: memref<4xf32>) attributes {zero.entry} {
    %c = memref.get_global @__constant_4xf32 : memref<4xf32>
    %a = memref.alloc() : memref<8xf32>
    func.call @k(%c, %a) : (memref<4xf32>, memref<8xf32>) -> ()
    %b = memref.alloc() : memref<100xf32>
    memref.dealloc %a : memref<8xf32>
    %d = memref.alloc() : memref<8xf32>
    func.call @k(%arg0, %d) : (memref<4xf32>, memref<8xf32>) -> ()
    memref.dealloc %d : memref<8xf32>
    memref.dealloc %b : memref<100xf32>
    return
  }
}

// -----

// First fit in program order leaves a hole: %a (256 B) at 0, %b (512 B)
// at 256, %a freed, %c (512 B) does not fit the 256-byte hole and goes to
// 768: 1280 B. The most bytes live at once are %b and %c, 1024 B; placed
// first, largest first, they lie end to end, and %a, which %c never meets,
// shares %c's block: a 1024-byte arena, the plan's peak.
// CHECK: zero.memory = {train_step = {arena = {alignment = 256 : i64, buffers = [{bytes = 256 : i64, category = "other", offset = 512 : i64}, {bytes = 512 : i64, category = "other", offset = 0 : i64}, {bytes = 512 : i64, category = "other", offset = 512 : i64}], bytes = 1024 : i64}}}
// CHECK-LABEL: func.func @train_step
// CHECK: call @zero_rt_cuda_arena(%c1024_i64)
module {
  func.func private @use(memref<64xf32>, memref<128xf32>)
  func.func @train_step(%arg0: memref<64xf32>) attributes {zero.entry} {
    %a = memref.alloc() : memref<64xf32>
    %b = memref.alloc() : memref<128xf32>
    func.call @use(%a, %b) : (memref<64xf32>, memref<128xf32>) -> ()
    memref.dealloc %a : memref<64xf32>
    %c = memref.alloc() : memref<128xf32>
    func.call @use(%arg0, %c) : (memref<64xf32>, memref<128xf32>) -> ()
    memref.dealloc %c : memref<128xf32>
    memref.dealloc %b : memref<128xf32>
    return
  }
}
