//===- RuntimeFunctions.cpp - the runtime's C ABI, declared once -*- C++ -*-===//
#include "zero-opt/Conversion/RuntimeFunctions.h"

#include "zero-opt/Conversion/RuntimeTypes.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-rt/Runtime.h"

using namespace mlir;
using namespace mlir::zero;

// The dialect's enums are the runtime's numbers.
static_assert(int(CollectiveKind::all_reduce) == ZERO_RT_ALL_REDUCE &&
              int(CollectiveKind::reduce_scatter) == ZERO_RT_REDUCE_SCATTER &&
              int(CollectiveKind::all_gather) == ZERO_RT_ALL_GATHER);
static_assert(int(MemoryCategory::parameters) == ZERO_RT_MEM_PARAMETERS &&
              int(MemoryCategory::gradients) == ZERO_RT_MEM_GRADIENTS &&
              int(MemoryCategory::optimizer_state) ==
                  ZERO_RT_MEM_OPTIMIZER_STATE &&
              int(MemoryCategory::activations) == ZERO_RT_MEM_ACTIVATIONS &&
              int(MemoryCategory::buffers) == ZERO_RT_MEM_BUFFERS &&
              int(MemoryCategory::other) == ZERO_RT_MEM_OTHER &&
              ZERO_RT_MEM_NUM_CATEGORIES == 6);

StringRef mlir::zero::runtimeFunctionName(RuntimeFunction fn) {
  switch (fn) {
  case RuntimeFunction::Sgemm:
    return "zero_rt_sgemm";
  case RuntimeFunction::Gemm16:
    return "zero_rt_gemm16";
  case RuntimeFunction::Dgemm:
    return "zero_rt_dgemm";
  case RuntimeFunction::CommStart:
    return "zero_rt_comm_start";
  case RuntimeFunction::CommWait:
    return "zero_rt_comm_wait";
  case RuntimeFunction::Rank:
    return "zero_rt_rank";
  case RuntimeFunction::MemAlloc:
    return "zero_rt_mem_alloc";
  case RuntimeFunction::MemFree:
    return "zero_rt_mem_free";
  case RuntimeFunction::CudaSgemm:
    return "zero_rt_cuda_sgemm";
  case RuntimeFunction::CudaGemm16:
    return "zero_rt_cuda_gemm16";
  case RuntimeFunction::CudaDgemm:
    return "zero_rt_cuda_dgemm";
  case RuntimeFunction::CudaCheckGemm:
    return "zero_rt_cuda_check_gemm";
  case RuntimeFunction::CudaCommStart:
    return "zero_rt_cuda_comm_start";
  case RuntimeFunction::CudaCommWait:
    return "zero_rt_cuda_comm_wait";
  case RuntimeFunction::CudaArena:
    return "zero_rt_cuda_arena";
  case RuntimeFunction::CudaArenaClaim:
    return "zero_rt_cuda_arena_claim";
  case RuntimeFunction::CudaNode:
    return "zero_rt_cuda_node";
  }
  llvm_unreachable("unknown runtime function");
}

static FunctionType runtimeFunctionType(Builder &b, RuntimeFunction fn) {
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  switch (fn) {
  case RuntimeFunction::Sgemm:
  case RuntimeFunction::Dgemm:
    return b.getFunctionType(SmallVector<Type>(24, i64), {});
  case RuntimeFunction::Gemm16: {
    SmallVector<Type> args = {i32, i32};
    args.append(24, i64);
    return b.getFunctionType(args, {});
  }
  case RuntimeFunction::CommStart:
    return b.getFunctionType({i32, i32, i64, i64, i64, i64}, {i64});
  case RuntimeFunction::CommWait:
    return b.getFunctionType({i64}, {});
  case RuntimeFunction::Rank:
    return b.getFunctionType({}, {i64});
  case RuntimeFunction::MemAlloc:
  case RuntimeFunction::MemFree:
    return b.getFunctionType({i32, i64}, {});
  case RuntimeFunction::CudaSgemm:
  case RuntimeFunction::CudaDgemm:
    return b.getFunctionType(SmallVector<Type>(24, i64), {i32});
  case RuntimeFunction::CudaGemm16: {
    SmallVector<Type> args = {i32, i32};
    args.append(24, i64);
    return b.getFunctionType(args, {i32});
  }
  case RuntimeFunction::CudaCheckGemm:
    return b.getFunctionType({i32}, {});
  case RuntimeFunction::CudaCommStart:
    return b.getFunctionType({i32, i32, i64, i64, i64, i64}, {i64});
  case RuntimeFunction::CudaCommWait:
    return b.getFunctionType({i64}, {});
  case RuntimeFunction::CudaArena:
    return b.getFunctionType({i64}, {i64});
  case RuntimeFunction::CudaArenaClaim:
    return b.getFunctionType({i64}, {i32});
  case RuntimeFunction::CudaNode:
    return b.getFunctionType({i64}, {});
  }
  llvm_unreachable("unknown runtime function");
}

func::FuncOp mlir::zero::lookupOrDeclareRuntimeFunction(ModuleOp module,
                                                  RuntimeFunction fn) {
  StringRef name = runtimeFunctionName(fn);
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b(module.getBodyRegion());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                runtimeFunctionType(b, fn));
  f.setPrivate();
  return f;
}

std::optional<::zero::rt::DType> mlir::zero::runtimeDType(Type t) {
  using ::zero::rt::DType;
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isInteger(1))
    return DType::Bool;
  auto i = dyn_cast<IntegerType>(t);
  if (!i)
    return std::nullopt;
  // Signless integers are the signed ones of ONNX.
  bool u = i.isUnsigned();
  switch (i.getWidth()) {
  case 8:
    return u ? DType::U8 : DType::I8;
  case 16:
    return u ? DType::U16 : DType::I16;
  case 32:
    return u ? DType::U32 : DType::I32;
  case 64:
    return u ? DType::U64 : DType::I64;
  }
  return std::nullopt;
}

int32_t mlir::zero::runtimeDataType(Type elementType) {
  std::optional<::zero::rt::DType> d = runtimeDType(elementType);
  if (d == ::zero::rt::DType::F32)
    return ZERO_RT_F32;
  if (d == ::zero::rt::DType::F64)
    return ZERO_RT_F64;
  if (d == ::zero::rt::DType::F16)
    return ZERO_RT_F16;
  if (d == ::zero::rt::DType::BF16)
    return ZERO_RT_BF16;
  return -1;
}
