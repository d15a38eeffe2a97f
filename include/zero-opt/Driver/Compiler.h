//===- Compiler.h - the model compilation pipeline --------------*- C++ -*-===//
//
// The stages zero-opt runs on a model, as a library so that tools and test
// drivers compile exactly the same way.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DRIVER_COMPILER_H
#define ZERO_OPT_DRIVER_COMPILER_H

#include "zero-opt/Import/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace mlir::zero {

/// Registers every dialect, interface model and pass the pipeline uses.
void registerCompilerDialects(DialectRegistry &registry);
void registerCompilerPasses();

/// Imports the model and cleans it up into the tensor-level step.
OwningOpRef<ModuleOp> buildStep(MLIRContext *ctx, StringRef modelPath,
                                const ONNXImportOptions &options,
                                ParamValues &params);

/// Lowers the step (function `funcName`) to the LLVM dialect.
LogicalResult lowerStepToLLVM(ModuleOp module, StringRef funcName);

/// Writes OUT/: step.so from the lowered module, plan.json from the step's
/// signature (taken before lowering) and params.npz. The folder is built
/// under a temporary name and renamed into place; an existing `outDir` is
/// replaced only if it is empty or an earlier output.
llvm::Error writeOutputFolder(ModuleOp lowered, func::FuncOp signature,
                              const ParamValues &params, StringRef modelPath,
                              StringRef outDir);

/// Whole pipeline: model to OUT/. Errors are reported as diagnostics.
LogicalResult compileModel(MLIRContext *ctx, StringRef modelPath,
                           const ONNXImportOptions &options, StringRef outDir);

} // namespace mlir::zero

#endif
