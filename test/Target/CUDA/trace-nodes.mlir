// RUN: zero-opt %s -split-input-file --zero-gpu-trace-nodes | FileCheck %s

// Launches and GEMMs of one block: a node is set when it changes (the two
// GEMMs of MatMul_1 share one), an unnamed kernel sets none (0), and a
// name's constant is made once.

// CHECK-DAG: memref.global "private" constant @[[LN:__zero_node[_0-9]*]] : memref<5xi8> = dense<[47, 108, 110, 49, 0]>
// CHECK-DAG: memref.global "private" constant @[[MM:__zero_node[_0-9]*]] : memref<10xi8> = dense<[47, 77, 97, 116, 77, 117, 108, 95, 49, 0]>
// CHECK-LABEL: func.func @train_step
// CHECK:       %[[G0:.*]] = memref.get_global @[[LN]] : memref<5xi8>
// CHECK-NEXT:  %[[P0:.*]] = memref.extract_aligned_pointer_as_index %[[G0]]
// CHECK-NEXT:  %[[A0:.*]] = arith.index_cast %[[P0]] : index to i64
// CHECK-NEXT:  call @zero_rt_cuda_node(%[[A0]]) : (i64) -> ()
// CHECK-NEXT:  call @kernel_0_generic
// CHECK-NEXT:  call @kernel_1_row_group
// CHECK-NEXT:  %[[G1:.*]] = memref.get_global @[[MM]] : memref<10xi8>
// CHECK:       call @zero_rt_cuda_node
// CHECK-NEXT:  call @zero_rt_cuda_gemm16
// CHECK-NEXT:  call @zero_rt_cuda_check_gemm
// CHECK-NEXT:  call @zero_rt_cuda_gemm16
// CHECK-NEXT:  call @zero_rt_cuda_check_gemm
// CHECK-NEXT:  %[[NONE:.*]] = arith.constant 0 : i64
// CHECK-NEXT:  call @zero_rt_cuda_node(%[[NONE]]) : (i64) -> ()
// CHECK-NEXT:  call @kernel_0_generic
// CHECK-NEXT:  %[[G2:.*]] = memref.get_global @[[LN]] : memref<5xi8>
// CHECK:       call @zero_rt_cuda_node
// CHECK-NEXT:  call @kernel_0_generic
// CHECK-NEXT:  return
// The kernel functions launch; they set nothing.
// CHECK-LABEL: func.func private @kernel_0_generic
// CHECK-NOT:   zero_rt_cuda_node
// CHECK:       return

func.func private @zero_rt_cuda_gemm16(i32, i32, i64) -> i32
func.func private @zero_rt_cuda_check_gemm(i32)

func.func @train_step(%a: memref<4xf32>, %g: i64) {
  %c0 = arith.constant 0 : i32
  call @kernel_0_generic(%a) : (memref<4xf32>) -> () loc("/ln1")
  call @kernel_1_row_group(%a) : (memref<4xf32>) -> () loc(fused["/ln1", "step.mlir":3:1])
  %s0 = call @zero_rt_cuda_gemm16(%c0, %c0, %g) : (i32, i32, i64) -> i32 loc("/MatMul_1")
  call @zero_rt_cuda_check_gemm(%s0) : (i32) -> () loc("/MatMul_1")
  %s1 = call @zero_rt_cuda_gemm16(%c0, %c0, %g) : (i32, i32, i64) -> i32 loc("/MatMul_1")
  call @zero_rt_cuda_check_gemm(%s1) : (i32) -> () loc("/MatMul_1")
  call @kernel_0_generic(%a) : (memref<4xf32>) -> () loc("step.mlir":9:1)
  call @kernel_0_generic(%a) : (memref<4xf32>) -> () loc("/ln1")
  return
}

func.func private @kernel_0_generic(%a: memref<4xf32>) attributes {zero.kernel = "linalg.generic"} {
  return
}
func.func private @kernel_1_row_group(%a: memref<4xf32>) attributes {zero.kernel = "zero.row_group"} {
  return
}

// -----

// Each block starts with no node known, and a call of a function of the
// step (which may set others) forgets the last: the node is set again.

// CHECK-LABEL: func.func @blocks
// CHECK:       call @zero_rt_cuda_node
// CHECK-NEXT:  call @kernel_0_generic
// CHECK-NEXT:  call @forward
// CHECK:       call @zero_rt_cuda_node
// CHECK-NEXT:  call @kernel_0_generic
// CHECK-NEXT:  cf.br ^bb1
// CHECK:       ^bb1:
// CHECK:       call @zero_rt_cuda_node
// CHECK-NEXT:  call @kernel_0_generic
// CHECK-LABEL: func.func @forward
// CHECK-NOT:   zero_rt_cuda_node
// CHECK:       return

func.func @blocks(%a: memref<4xf32>) {
  call @kernel_0_generic(%a) : (memref<4xf32>) -> () loc("/ln1")
  call @forward() : () -> ()
  call @kernel_0_generic(%a) : (memref<4xf32>) -> () loc("/ln1")
  cf.br ^bb1
^bb1:
  call @kernel_0_generic(%a) : (memref<4xf32>) -> () loc("/ln1")
  return
}

func.func @forward() {
  return
}

func.func private @kernel_0_generic(%a: memref<4xf32>) attributes {zero.kernel = "linalg.generic"} {
  return
}
