//===- RuntimeFunctions.h - the runtime's C ABI, declared once -*- C++ -*-===//
//
// Generated code calls the runtime (runtime/include/zero-rt/Runtime.h) only
// through these declarations; every conversion that emits a runtime call
// takes its callee from here.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_CONVERSION_RUNTIMEFUNCTIONS_H
#define ZERO_OPT_CONVERSION_RUNTIMEFUNCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero {

enum class RuntimeFunction {
  Sgemm,     ///< zero_rt_sgemm(batch, m, n, k, 3 x (ptr, off, 3 strides))
  Gemm16,    ///< zero_rt_gemm16(abType, cType, the arguments of zero_rt_sgemm)
  Dgemm,     ///< zero_rt_dgemm(the arguments of zero_rt_sgemm), f64
  CommStart, ///< zero_rt_comm_start(kind, dtype, send, recv, count, stream)
  CommWait,  ///< zero_rt_comm_wait(handle)
  Rank,      ///< zero_rt_rank()
  MemAlloc,  ///< zero_rt_mem_alloc(category, bytes)
  MemFree,   ///< zero_rt_mem_free(category, bytes)
  // The CUDA runtime (zero-rt/RuntimeCUDA.h).
  CudaSgemm,      ///< zero_rt_cuda_sgemm(sgemm's arguments) -> status
  CudaGemm16,     ///< zero_rt_cuda_gemm16(gemm16's arguments) -> status
  CudaDgemm,      ///< zero_rt_cuda_dgemm(dgemm's arguments) -> status
  CudaCheckGemm,  ///< zero_rt_cuda_check_gemm(status)
  CudaCommStart,  ///< zero_rt_cuda_comm_start(comm_start's arguments)
  CudaCommWait,   ///< zero_rt_cuda_comm_wait(handle)
  CudaArena,      ///< zero_rt_cuda_arena(bytes) -> base address
  CudaArenaClaim, ///< zero_rt_cuda_arena_claim(owner) -> contents changed
  CudaNode,       ///< zero_rt_cuda_node(name): the trace's node from here
};

/// The C symbol of a runtime function.
StringRef runtimeFunctionName(RuntimeFunction fn);
/// Its declaration in `module`, added (private) on first use.
func::FuncOp lookupOrDeclareRuntimeFunction(ModuleOp module,
                                            RuntimeFunction fn);
/// The communication ABI's code for a collective's element type
/// (ZERO_RT_F32, ZERO_RT_F64, ZERO_RT_F16, ZERO_RT_BF16), or -1 when
/// collectives cannot carry it.
int32_t runtimeDataType(Type elementType);

} // namespace mlir::zero

#endif
