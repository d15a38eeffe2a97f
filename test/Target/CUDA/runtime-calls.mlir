// RUN: zero-opt %s --zero-gpu-runtime-calls | FileCheck %s

// Collectives go to NCCL through the CUDA runtime in the schedule's order:
// the start where the schedule started it, its wait (an event the compute
// stream waits for) before the first kernel that reads the received
// buffer, and compute in between overlapping it. GEMMs go to cuBLAS with
// their status checked; every launch is queued on the compute stream
// without a host synchronization.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[H:.*]] = call @zero_rt_cuda_comm_start(%{{.*}}) : (i32, i32, i64, i64, i64, i64) -> i64
// CHECK: %[[S0:.*]] = gpu.wait async
// CHECK: gpu.launch_func async [%[[S0]]] @zero_kernels::@other_0 {{.*}} args(%arg1 : memref<4xf32>)
// CHECK: %[[RC:.*]] = call @zero_rt_cuda_sgemm(
// CHECK: call @zero_rt_cuda_check_gemm(%[[RC]]) : (i32) -> ()
// CHECK: call @zero_rt_cuda_comm_wait(%[[H]]) : (i64) -> ()
// CHECK: %[[S1:.*]] = gpu.wait async
// CHECK: gpu.launch_func async [%[[S1]]] @zero_kernels::@reads_0 {{.*}} args(%arg2 : memref<4xf32>)
// CHECK: %[[RC16:.*]] = call @zero_rt_cuda_gemm16(
// CHECK: call @zero_rt_cuda_check_gemm(%[[RC16]])
// CHECK: %[[RC64:.*]] = call @zero_rt_cuda_dgemm(
// CHECK: call @zero_rt_cuda_check_gemm(%[[RC64]])
// CHECK-NOT: gpu.wait [
// CHECK: return
// The CPU runtime's declarations go.
// CHECK-NOT: @zero_rt_comm_start
// CHECK-NOT: @zero_rt_sgemm
// CHECK-NOT: @zero_rt_dgemm
module attributes {gpu.container_module} {
  func.func private @zero_rt_comm_start(i32, i32, i64, i64, i64, i64) -> i64
  func.func private @zero_rt_comm_wait(i64)
  func.func private @zero_rt_sgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
  func.func private @zero_rt_gemm16(i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
  func.func private @zero_rt_dgemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
  gpu.module @zero_kernels {
    gpu.func @other_0(%a: memref<4xf32>) kernel { gpu.return }
    gpu.func @reads_0(%a: memref<4xf32>) kernel { gpu.return }
  }
  func.func @train_step(%send: memref<8xf32>, %x: memref<4xf32>, %recv: memref<4xf32>) attributes {zero.entry} {
    %c1 = arith.constant 1 : index
    %i1 = arith.constant 1 : i32
    %i0 = arith.constant 0 : i32
    %z = arith.constant 0 : i64
    %n = arith.constant 4 : i64
    %h = func.call @zero_rt_comm_start(%i1, %i0, %z, %z, %n, %z) : (i32, i32, i64, i64, i64, i64) -> i64
    gpu.launch_func @zero_kernels::@other_0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    func.call @zero_rt_sgemm(%z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    func.call @zero_rt_comm_wait(%h) : (i64) -> ()
    gpu.launch_func @zero_kernels::@reads_0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%recv : memref<4xf32>)
    func.call @zero_rt_gemm16(%i0, %i0, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z) : (i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    func.call @zero_rt_dgemm(%z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z, %z) : (i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) -> ()
    return
  }
}
