//===- ObjectEmitter.cpp - LLVM dialect to a shared library ----*- C++ -*-===//
#include "zero-opt/Target/CPU/CPUTarget.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>> hostMachine() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target)
    return makeError("no LLVM target for " + triple.str() + ": " + err);
  llvm::SubtargetFeatures features;
  for (auto &f : llvm::sys::getHostCPUFeatures())
    features.AddFeature(f.first(), f.second);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(), options,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return makeError("cannot create a target machine for " + triple.str());
  return std::move(tm);
}

/// The C compiler driver that links the object; it knows the system's
/// linker and C library paths.
static llvm::Expected<std::string> findLinkerDriver() {
  for (const char *name : {"cc", "gcc", "clang-22", "clang"})
    if (auto p = llvm::sys::findProgramByName(name))
      return *p;
  if (auto p = llvm::sys::findProgramByName("clang", {"/usr/lib/llvm-22/bin"}))
    return *p;
  return makeError("no C compiler driver (cc) found to link the step");
}

llvm::Error zero::cpu::emitSharedLibrary(ModuleOp module, StringRef soPath,
                                         unsigned optLevel) {
  registerBuiltinDialectTranslation(*module->getContext());
  registerLLVMDialectTranslation(*module->getContext());

  auto tm = hostMachine();
  if (!tm)
    return tm.takeError();

  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmCtx, "zero_step");
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");
  llvmModule->setTargetTriple((*tm)->getTargetTriple());
  llvmModule->setDataLayout((*tm)->createDataLayout());

  auto transformer = makeOptimizingTransformer(optLevel, 0, tm->get());
  if (llvm::Error e = transformer(llvmModule.get()))
    return e;

  // Object and library go to temporary names next to the target.
  llvm::SmallString<256> objPath, tmpSo;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(soPath + ".%%%%%%.o", objPath))
    return makeError("cannot create " + objPath + ": " + ec.message());
  tmpSo = (soPath + ".tmp").str();
  auto cleanup = llvm::scope_exit([&] {
    llvm::sys::fs::remove(objPath);
    llvm::sys::fs::remove(tmpSo);
  });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objPath, ec, llvm::sys::fs::OF_None);
    if (ec)
      return makeError("cannot write " + objPath + ": " + ec.message());
    llvm::legacy::PassManager pm;
    if ((*tm)->addPassesToEmitFile(pm, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
      return makeError("the target cannot emit object files");
    pm.run(*llvmModule);
    os.flush();
    if (os.has_error())
      return makeError("write error on " + objPath);
  }

  auto driver = findLinkerDriver();
  if (!driver)
    return driver.takeError();
  std::string objStr = objPath.str().str(), soStr = tmpSo.str().str();
  // Runtime symbols (zero_rt_*) resolve against the loading process.
  llvm::SmallVector<llvm::StringRef> args = {*driver, "-shared", "-o",
                                             soStr,   objStr,    "-lm"};
  std::string errMsg;
  int rc =
      llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, {}, 0, 0, &errMsg);
  if (rc != 0)
    return makeError("linking " + soPath + " with " + *driver +
                     " failed (exit " + llvm::Twine(rc) + ") " + errMsg);
  if (std::error_code ec = llvm::sys::fs::rename(tmpSo, soPath))
    return makeError("cannot rename " + tmpSo + " to " + soPath + ": " +
                     ec.message());
  return llvm::Error::success();
}
