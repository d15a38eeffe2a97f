// RUN: zero-opt %s --split-input-file --zero-cpu-memory-report --zero-cpu-track-memory | FileCheck %s

// Arguments count by role, temporaries by the category their location
// carries (other without one); the peak is of everything live together.
// CHECK: zero.memory = {step = {
// CHECK-SAME: arguments = {optimizer_state = 32 : i64, output = 16 : i64, parameter = 16 : i64}
// CHECK-SAME: at_peak = {activations = 16 : i64, buffers = 0 : i64, gradients = 64 : i64, optimizer_state = 32 : i64, other = 32 : i64, parameters = 16 : i64}
// CHECK-SAME: activations = {arguments = 0 : i64, peak = 80 : i64, temporaries_peak = 80 : i64}
// CHECK-SAME: gradients = {arguments = 0 : i64, peak = 64 : i64, temporaries_peak = 64 : i64}
// CHECK-SAME: other = {arguments = 16 : i64, peak = 32 : i64, temporaries_peak = 16 : i64}
// CHECK-SAME: model_states = {gradients = 8 : i64, optimizer_state = 32 : i64, parameters = 16 : i64}
// CHECK-SAME: peak = 160 : i64, peak_at = "(other)", peak_phase = "", temporaries_peak = 96 : i64
// CHECK-LABEL: func.func @step
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: %[[C3:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[N:.*]] = arith.constant 64 : i64
// CHECK-NEXT: call @zero_rt_mem_alloc(%[[C3]], %[[N]])
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: call @zero_rt_mem_alloc
// CHECK: %[[C3B:.*]] = arith.constant 3 : i32
// CHECK-NEXT: %[[NB:.*]] = arith.constant 64 : i64
// CHECK-NEXT: call @zero_rt_mem_free(%[[C3B]], %[[NB]])
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: func.func private @zero_rt_mem_alloc(i32, i64)
func.func @step(%w: memref<4xf32> {zero.role = #zero.role<parameter>},
                %m: memref<8xf32> {zero.role = #zero.role<optimizer_state>},
                %out: memref<4xf32>)
    attributes {zero.entry, zero.resident_gradients = 8 : i64} {
  %a = memref.alloc() : memref<16xf32> loc(fused<#zero.buffer<activations, forward>>["a"])
  %b = memref.alloc() : memref<4xf32> loc(fused<#zero.buffer<activations, forward>>["b"])
  memref.dealloc %a : memref<16xf32>
  %g = memref.alloc() : memref<8xf32> loc(fused<#zero.buffer<gradients, backward>>["g"])
  %g2 = memref.alloc() : memref<8xf32> loc(fused<#zero.buffer<gradients, backward>>["g2"("m.onnx":0:0)])
  %t = memref.alloc() : memref<4xf32>
  memref.dealloc %t : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  memref.dealloc %g : memref<8xf32>
  memref.dealloc %g2 : memref<8xf32>
  return
}

// -----

// RUN: zero-opt %s --split-input-file --zero-cpu-memory-report | FileCheck %s --check-prefix=NAMED
// The peak names the model node and phase of the allocation that reaches it.
// NAMED: peak_at = "g2", peak_phase = "backward"
func.func @named() attributes {zero.entry} {
  %g = memref.alloc() : memref<8xf32> loc(fused<#zero.buffer<gradients, backward>>["g"])
  memref.dealloc %g : memref<8xf32>
  %g2 = memref.alloc() : memref<16xf32> loc(fused<#zero.buffer<gradients, backward>>["g2"("m.onnx":0:0)])
  memref.dealloc %g2 : memref<16xf32>
  return
}
