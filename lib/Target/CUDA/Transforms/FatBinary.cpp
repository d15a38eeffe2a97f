//===- FatBinary.cpp - one object for several GPU architectures -*- C++ -*-===//
//
// gpu-module-to-binary makes one cubin per target, and the embedding picks
// one of them when the host code is compiled. A fat binary of all of them
// (the toolkit's fatbinary, as nvcc does) lets the driver pick the cubin
// of the GPU present when the module is loaded: one build for A100 and
// H100 nodes alike.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUFATBINARY
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

struct ZeroGPUFatBinaryPass
    : zero::cuda::impl::ZeroGPUFatBinaryBase<ZeroGPUFatBinaryPass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto binary : getOperation().getOps<gpu::BinaryOp>())
      if (failed(merge(binary)))
        return signalPassFailure();
  }

  LogicalResult merge(gpu::BinaryOp binary) {
    SmallVector<gpu::ObjectAttr> cubins;
    for (Attribute a : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(a);
      if (!isa<NVVM::NVVMTargetAttr>(object.getTarget()) ||
          object.getFormat() != gpu::CompilationTarget::Binary)
        return binary.emitError()
               << "zero-gpu-fat-binary needs cubins (gpu-module-to-binary "
                  "format=bin) for NVVM targets";
      cubins.push_back(object);
    }
    if (cubins.size() < 2)
      return success();
    SmallString<128> tool(toolkit);
    llvm::sys::path::append(tool, "bin", "fatbinary");
    if (toolkit.empty() || !llvm::sys::fs::can_execute(tool))
      return binary.emitError() << "no fatbinary under the CUDA toolkit '"
                                << toolkit << "' (set the toolkit option)";
    SmallString<128> dir;
    if (llvm::sys::fs::createUniqueDirectory("zero-fatbin", dir))
      return binary.emitError() << "cannot create a temporary folder";
    auto cleanup =
        llvm::scope_exit([&] { llvm::sys::fs::remove_directories(dir); });
    SmallVector<std::string> args = {tool.str().str(), "--64"};
    for (gpu::ObjectAttr cubin : cubins) {
      StringRef chip = cast<NVVM::NVVMTargetAttr>(cubin.getTarget()).getChip();
      if (!chip.consume_front("sm_"))
        return binary.emitError()
               << "unknown GPU architecture "
               << cast<NVVM::NVVMTargetAttr>(cubin.getTarget()).getChip();
      SmallString<128> file(dir);
      llvm::sys::path::append(file, ("sm_" + chip + ".cubin").str());
      std::error_code ec;
      llvm::raw_fd_ostream os(file, ec);
      if (ec)
        return binary.emitError() << "cannot write " << file;
      os << cubin.getObject().getValue();
      os.close();
      args.push_back(("--image3=kind=elf,sm=" + chip + ",file=" + file).str());
    }
    SmallString<128> out(dir);
    llvm::sys::path::append(out, "kernels.fatbin");
    args.push_back(("--create=" + out).str());
    SmallVector<StringRef> argRefs(args.begin(), args.end());
    std::string message;
    if (llvm::sys::ExecuteAndWait(tool, argRefs, std::nullopt, {}, 0, 0,
                                  &message) != 0)
      return binary.emitError() << "fatbinary failed: " << message;
    auto data = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
    if (!data)
      return binary.emitError() << "fatbinary wrote no " << out;
    // The first target stands for all: the fat binary holds every cubin.
    // It comes first, the object the embedding selects; the cubins stay
    // after it for the output folder.
    auto fat = gpu::ObjectAttr::get(
        cubins.front().getTarget(), gpu::CompilationTarget::Fatbin,
        StringAttr::get(&getContext(), (*data)->getBuffer()),
        cubins.front().getProperties(), cubins.front().getKernels());
    SmallVector<Attribute> objects = {fat};
    objects.append(cubins.begin(), cubins.end());
    binary.setObjectsAttr(ArrayAttr::get(&getContext(), objects));
    return success();
  }
};

} // namespace
