//===- OutputFolder.h - OUT/: step.so, plan.json, params.npz ----*- C++ -*-===//
//
// The compiler's output folder, the contract with zero-run and users.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DRIVER_OUTPUTFOLDER_H
#define ZERO_OPT_DRIVER_OUTPUTFOLDER_H

#include "zero-opt/Driver/Pipeline.h"

#include "llvm/Support/Error.h"

namespace mlir::zero {

/// Writes OUT/: step.so from the lowered module, plan.json from the step
/// functions' signatures (taken before lowering) and params.npz. The
/// folder is built under a temporary name and renamed into place; an
/// existing `outDir` is replaced only if it is empty or an earlier output.
llvm::Error writeOutputFolder(ModuleOp lowered, ModuleOp signatures,
                              const ParamValues &params,
                              const CompileOptions &options,
                              StringRef modelPath, StringRef outDir);

} // namespace mlir::zero

#endif
