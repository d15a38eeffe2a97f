//===- Compiler.cpp - the model compilation pipeline -----------*- C++ -*-===//
#include "zero-opt/Driver/Compiler.h"

#include "zero-opt/Conversion/Passes.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Target/CPU/CPUTarget.h"
#include "zero-opt/Target/CPU/Passes.h"
#include "zero-rt/Npz.h"
#include "zero-rt/Runtime.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;
using namespace mlir::zero;

void mlir::zero::registerCompilerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<ZeroDialect>();
}

void mlir::zero::registerCompilerPasses() {
  registerAllPasses();
  registerZeroConversionPasses();
  cpu::registerZeroCPUPasses();
  cpu::registerCPUPipelines();
}

OwningOpRef<ModuleOp> mlir::zero::buildStep(MLIRContext *ctx,
                                            StringRef modelPath,
                                            const ONNXImportOptions &options,
                                            ParamValues &params) {
  OwningOpRef<ModuleOp> module =
      importONNXModel(ctx, modelPath, options, &params);
  if (!module)
    return nullptr;
  PassManager pm(ctx);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

LogicalResult mlir::zero::lowerStepToLLVM(ModuleOp module, StringRef funcName) {
  PassManager pm(module.getContext());
  std::string err;
  llvm::raw_string_ostream os(err);
  if (failed(parsePassPipeline(cpu::lowerToLLVMPipeline(funcName), pm, os)))
    return module.emitError() << "internal error: " << err;
  return pm.run(module);
}

static const char *dtypeName(Type t) {
  if (t.isF32())
    return "float32";
  if (t.isF64())
    return "float64";
  if (t.isF16())
    return "float16";
  if (t.isBF16())
    return "bfloat16";
  if (t.isInteger(64))
    return "int64";
  if (t.isInteger(32))
    return "int32";
  if (t.isInteger(16))
    return "int16";
  if (t.isInteger(8))
    return "int8";
  if (t.isInteger(1))
    return "bool";
  return nullptr;
}

static void writeBuffer(llvm::json::OStream &j, StringRef name, StringRef role,
                        RankedTensorType t) {
  j.object([&] {
    j.attribute("name", name);
    j.attribute("role", role);
    j.attribute("dtype", dtypeName(t.getElementType()));
    j.attributeArray("shape", [&] {
      for (int64_t d : t.getShape())
        j.value(d);
    });
  });
}

/// plan.json: what zero-run needs to call the step and what users read.
static bool writePlan(StringRef path, StringRef model, func::FuncOp fn,
                      std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path.str() + ": " + ec.message();
    return false;
  }
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("format", "zero-opt-plan");
    j.attribute("version", 1);
    j.attribute("model", model);
    j.attribute("world_size", 1);
    j.attribute("stage", 0);
    j.attribute("dtype", "float32");
    j.attribute("runtime_abi", ZERO_RT_ABI_VERSION);
    j.attribute("library", "step.so");
    j.attribute("entry", (fn.getName() + "_entry").str());
    j.attribute("parameters", "params.npz");
    j.attributeArray("arguments", [&] {
      for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
        auto name = fn.getArgAttrOfType<StringAttr>(i, kNameAttr);
        auto role = fn.getArgAttrOfType<RoleAttr>(i, kRoleAttr);
        writeBuffer(j, name.getValue(), stringifyRole(role.getValue()),
                    cast<RankedTensorType>(fn.getArgumentTypes()[i]));
      }
    });
    j.attributeArray("results", [&] {
      for (unsigned i = 0; i < fn.getNumResults(); ++i) {
        auto name = fn.getResultAttrOfType<StringAttr>(i, kNameAttr);
        writeBuffer(j, name.getValue(), "output",
                    cast<RankedTensorType>(fn.getResultTypes()[i]));
      }
    });
  });
  os << "\n";
  return true;
}

static bool writeParams(StringRef path, const ParamValues &params,
                        std::string &error) {
  std::vector<::zero::rt::Array> arrays;
  for (const auto &[name, value] : params) {
    ::zero::rt::Array a;
    a.name = name;
    Type elt = value.getElementType();
    if (elt.isF32())
      a.dtype = ::zero::rt::DType::F32;
    else if (elt.isF64())
      a.dtype = ::zero::rt::DType::F64;
    else if (elt.isF16())
      a.dtype = ::zero::rt::DType::F16;
    else {
      error = "parameter '" + name +
              "' has an element type params.npz "
              "cannot hold";
      return false;
    }
    auto type = value.getType();
    a.shape.assign(type.getShape().begin(), type.getShape().end());
    ArrayRef<char> raw = value.getRawData();
    size_t bytes = type.getNumElements() * a.itemSize();
    a.data.resize(bytes);
    if (value.isSplat()) {
      for (size_t off = 0; off < bytes; off += raw.size())
        std::memcpy(a.data.data() + off, raw.data(), raw.size());
    } else {
      std::memcpy(a.data.data(), raw.data(), bytes);
    }
    arrays.push_back(std::move(a));
  }
  return ::zero::rt::writeNpz(path.str(), arrays, error);
}

llvm::Error mlir::zero::writeOutputFolder(ModuleOp lowered,
                                          func::FuncOp signature,
                                          const ParamValues &params,
                                          StringRef modelPath,
                                          StringRef outDir) {
  auto err = [](const Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  SmallString<256> out(outDir);
  llvm::sys::path::remove_dots(out, true);
  while (out.size() > 1 && llvm::sys::path::is_separator(out.back()))
    out.pop_back();
  if (llvm::sys::fs::exists(out)) {
    // Only ever replace an earlier output folder (or an empty one).
    std::error_code ec;
    bool empty = llvm::sys::fs::is_directory(out) &&
                 llvm::sys::fs::directory_iterator(out, ec) ==
                     llvm::sys::fs::directory_iterator();
    if (!empty && !llvm::sys::fs::exists(out + "/plan.json"))
      return err(out + " exists and is not a zero-opt output folder; "
                       "choose another -o");
  }
  SmallString<256> tmp;
  if (auto ec = llvm::sys::fs::createUniqueDirectory(out + ".partial", tmp))
    return err("cannot create a folder next to " + out + ": " + ec.message());
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(tmp); });
  auto inTmp = [&](StringRef f) {
    SmallString<256> p(tmp);
    llvm::sys::path::append(p, f);
    return std::string(p);
  };
  if (llvm::Error e = cpu::emitSharedLibrary(lowered, inTmp("step.so")))
    return e;
  std::string error;
  if (!writeParams(inTmp("params.npz"), params, error) ||
      !writePlan(inTmp("plan.json"), modelPath, signature, error))
    return err(error);
  if (llvm::sys::fs::exists(out))
    if (auto ec = llvm::sys::fs::remove_directories(out))
      return err("cannot replace " + out + ": " + ec.message());
  if (auto ec = llvm::sys::fs::rename(tmp, out))
    return err("cannot move the output to " + out + ": " + ec.message());
  return llvm::Error::success();
}

LogicalResult mlir::zero::compileModel(MLIRContext *ctx, StringRef modelPath,
                                       const ONNXImportOptions &options,
                                       StringRef outDir) {
  ParamValues params;
  OwningOpRef<ModuleOp> module = buildStep(ctx, modelPath, options, params);
  if (!module)
    return failure();
  auto signature =
      cast<func::FuncOp>(module->lookupSymbol(options.funcName)->clone());
  llvm::scope_exit eraseSignature([&] { signature->erase(); });
  if (failed(lowerStepToLLVM(*module, options.funcName)))
    return failure();
  if (llvm::Error e =
          writeOutputFolder(*module, signature, params, modelPath, outDir))
    return emitError(FileLineColLoc::get(ctx, modelPath, 0, 0))
           << llvm::toString(std::move(e));
  return success();
}
