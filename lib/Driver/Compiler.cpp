//===- Compiler.cpp - model to OUT/ ---------------------------------------===//
#include "zero-opt/Driver/Compiler.h"

#include "zero-opt/Target/CUDA/CUDATarget.h"

#include "mlir/Support/Timing.h"

using namespace mlir;
using namespace mlir::zero;

LogicalResult mlir::zero::compileModel(MLIRContext *ctx, StringRef modelPath,
                                       const CompileOptions &requested,
                                       StringRef outDir) {
  // Training settings are resolved against the model (derived batch sizes).
  CompileOptions options = requested;
  if (options.cuda && !options.memoryReport) {
    StringRef runtimeDir = ZERO_CUDA_RUNTIME_DIR;
    std::string toolkit = cuda::defaultToolkitDir();
    if (runtimeDir.empty() || toolkit.empty())
      return emitError(FileLineColLoc::get(ctx, modelPath, 0, 0))
             << "--target=cuda: zero-opt was built without the CUDA "
                "toolkit, NCCL or cuBLAS (see the CMake configure "
                "messages); rebuild where they are installed, or use "
                "--target=cpu";
  }
  // --time-report: the phases' and passes' times, printed when done.
  DefaultTimingManager timing;
  timing.setEnabled(options.timeReport);
  TimingScope root = timing.getRootScope();
  options.timing = &root;
  ParamValues params;
  OwningOpRef<ModuleOp> module = buildStep(ctx, modelPath, options, params);
  if (!module)
    return failure();
  auto fail = [&](llvm::Error e) {
    return emitError(FileLineColLoc::get(ctx, modelPath, 0, 0))
           << llvm::toString(std::move(e));
  };
  // The output folder is checked before the long part, and params.npz is
  // written while the step is lowered.
  std::unique_ptr<OutputFolder> folder;
  if (!outDir.empty()) {
    auto begun =
        OutputFolder::begin(outDir, options.memoryReport ? nullptr : &params);
    if (!begun)
      return fail(begun.takeError());
    folder = std::move(*begun);
  }
  // Signatures (names, roles, in-place updates) before lowering erases them.
  OwningOpRef<ModuleOp> signatures = ModuleOp::create(module->getLoc());
  if (Attribute hash = (*module)->getAttr(kModelHashAttr))
    (*signatures)->setAttr(kModelHashAttr, hash);
  OpBuilder b(signatures->getBodyRegion());
  for (auto fn : module->getOps<func::FuncOp>())
    if (fn->hasAttr(kEntryAttr)) {
      auto decl = func::FuncOp::create(b, fn.getLoc(), fn.getName(),
                                       fn.getFunctionType());
      decl->setAttrs(fn->getAttrs());
      decl.setPrivate();
    }
  if (options.memoryReport) {
    if (failed(planStepMemory(*module, options)))
      return failure();
    if (options.timelineReport) {
      if (failed(predictTimeline(*module, options)))
        return failure();
      printTimelineReport(llvm::outs(), *module, options);
    } else {
      printMemoryReport(llvm::outs(), *module, options);
    }
    if (outDir.empty())
      return success();
  } else if (failed(lowerStepToLLVM(*module, options))) {
    return failure();
  }
  if (!folder)
    return emitError(FileLineColLoc::get(ctx, modelPath, 0, 0))
           << "no output folder given; pass -o OUT";
  if (llvm::Error e = folder->commit(*module, *signatures, options, modelPath))
    return fail(std::move(e));
  return success();
}
