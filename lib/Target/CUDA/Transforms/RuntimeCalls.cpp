//===- RuntimeCalls.cpp - the step's work on the CUDA streams --*- C++ -*-===//
//
// The schedule's order is the order work is queued: kernels and GEMMs on
// the compute stream, collectives on communication streams, and between
// them only events (a collective's start waits for the compute stream, a
// zero.wait makes the compute stream wait for the collective). The host
// never blocks inside a step, and the overlap the schedule built is the
// overlap the GPU runs.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Conversion/RuntimeFunctions.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPURUNTIMECALLS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;
using namespace mlir::zero;

/// The CUDA runtime's cuBLAS GEMM for a call of the CPU runtime's GEMM
/// `callee`, if it is one.
static std::optional<RuntimeFunction> cublasGemm(StringRef callee) {
  using F = RuntimeFunction;
  for (auto [cpu, cuda] :
       {std::pair(F::Sgemm, F::CudaSgemm), std::pair(F::Gemm16, F::CudaGemm16),
        std::pair(F::Dgemm, F::CudaDgemm)})
    if (callee == runtimeFunctionName(cpu))
      return cuda;
  return std::nullopt;
}

namespace {

struct ZeroGPURuntimeCallsPass
    : zero::cuda::impl::ZeroGPURuntimeCallsBase<ZeroGPURuntimeCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) { calls.push_back(call); });
    auto name = [](RuntimeFunction f) { return runtimeFunctionName(f); };
    for (func::CallOp call : calls) {
      StringRef callee = call.getCallee();
      OpBuilder b(call);
      Location loc = call.getLoc();
      auto to = [&](RuntimeFunction f) {
        return lookupOrDeclareRuntimeFunction(module, f);
      };
      std::optional<RuntimeFunction> gemm = cublasGemm(callee);
      if (gemm) {
        auto status =
            func::CallOp::create(b, loc, to(*gemm), call.getOperands());
        func::CallOp::create(b, loc, to(RuntimeFunction::CudaCheckGemm),
                             status.getResults());
        call.erase();
      } else if (callee == name(RuntimeFunction::CommStart)) {
        auto start = func::CallOp::create(
            b, loc, to(RuntimeFunction::CudaCommStart), call.getOperands());
        call.replaceAllUsesWith(start.getResults());
        call.erase();
      } else if (callee == name(RuntimeFunction::CommWait)) {
        func::CallOp::create(b, loc, to(RuntimeFunction::CudaCommWait),
                             call.getOperands());
        call.erase();
      }
    }
    // The CPU runtime's declarations are no longer called.
    for (RuntimeFunction f :
         {RuntimeFunction::Sgemm, RuntimeFunction::Gemm16,
          RuntimeFunction::Dgemm, RuntimeFunction::CommStart,
          RuntimeFunction::CommWait})
      if (auto decl = module.lookupSymbol<func::FuncOp>(name(f)))
        if (decl.isExternal() && decl.symbolKnownUseEmpty(module))
          decl.erase();

    // Launches: queued on the compute stream, never waited for by the host.
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp l) {
      if (!l.getAsyncToken())
        launches.push_back(l);
    });
    auto tokenTy = gpu::AsyncTokenType::get(&getContext());
    for (gpu::LaunchFuncOp l : launches) {
      OpBuilder b(l);
      Value stream = gpu::WaitOp::create(b, l.getLoc(), tokenTy, ValueRange{})
                         .getAsyncToken();
      gpu::KernelDim3 grid{l.getGridSizeX(), l.getGridSizeY(),
                           l.getGridSizeZ()};
      gpu::KernelDim3 block{l.getBlockSizeX(), l.getBlockSizeY(),
                            l.getBlockSizeZ()};
      gpu::LaunchFuncOp::create(b, l.getLoc(), l.getKernelAttr(), grid, block,
                                l.getDynamicSharedMemorySize(),
                                l.getKernelOperands(), tokenTy,
                                ValueRange{stream});
      l.erase();
    }
  }
};

} // namespace
