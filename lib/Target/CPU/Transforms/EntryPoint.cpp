//===- EntryPoint.cpp - C ABI entry for a compiled step --------*- C++ -*-===//
//
// Adds `void <func>_entry(void **buffers)`. The runtime knows every buffer's
// static shape from plan.json, so it only passes raw pointers; this entry
// rebuilds the memref descriptors from the static types.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUENTRYPOINT
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
struct ZeroCPUEntryPointPass
    : zero::cpu::impl::ZeroCPUEntryPointBase<ZeroCPUEntryPointPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> steps;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr("zero.entry"))
        steps.push_back(fn);
    if (steps.empty()) {
      module.emitError() << "no function is marked zero.entry";
      return signalPassFailure();
    }
    for (func::FuncOp fn : steps)
      if (failed(addEntry(fn)))
        return signalPassFailure();
  }

  LogicalResult addEntry(func::FuncOp fn) {
    if (fn.getNumResults() != 0)
      return fn.emitError() << "entry function must return its results "
                               "through out-parameters (run "
                               "buffer-results-to-out-params)";
    for (Type t : fn.getArgumentTypes()) {
      auto mt = dyn_cast<MemRefType>(t);
      if (!mt || !mt.hasStaticShape() || !mt.getLayout().isIdentity())
        return fn.emitError() << "entry argument of type " << t
                              << " is not a static identity-layout memref";
    }
    if (auto want = fn->getAttrOfType<IntegerAttr>("zero.abi_buffers"))
      if (want.getInt() != fn.getNumArguments())
        return fn.emitError()
               << "takes " << fn.getNumArguments() << " buffers where "
               << want.getInt()
               << " were planned: an in-place update could not be done in "
                  "place";

    MLIRContext *ctx = &getContext();
    LLVMTypeConverter converter(ctx);
    OpBuilder b(ctx);
    b.setInsertionPointAfter(fn);
    Location loc = fn.getLoc();
    auto ptrTy = LLVM::LLVMPointerType::get(ctx);
    auto entry = func::FuncOp::create(b, loc, (fn.getName() + "_entry").str(),
                                      b.getFunctionType({ptrTy}, {}));
    Block *body = entry.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value table = body->getArgument(0);
    SmallVector<Value> args;
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
      auto mt = cast<MemRefType>(t);
      Value slot = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy, table,
                                       ArrayRef<LLVM::GEPArg>{(int32_t)i});
      Value ptr = LLVM::LoadOp::create(b, loc, ptrTy, slot);
      Value desc =
          MemRefDescriptor::fromStaticShape(b, loc, converter, mt, ptr);
      args.push_back(
          UnrealizedConversionCastOp::create(b, loc, mt, desc).getResult(0));
    }
    func::CallOp::create(b, loc, fn, args);
    func::ReturnOp::create(b, loc);
    return success();
  }
};
} // namespace
