//===- Compiler.h - the model compilation pipeline --------------*- C++ -*-===//
//
// zero-opt's whole job, model to OUT/, from its three layers: the pipeline
// (Pipeline.h), the reports (Reports.h) and the output writer
// (OutputFolder.h).
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DRIVER_COMPILER_H
#define ZERO_OPT_DRIVER_COMPILER_H

#include "zero-opt/Driver/OutputFolder.h"
#include "zero-opt/Driver/Pipeline.h"
#include "zero-opt/Driver/Reports.h"

namespace mlir::zero {

/// Whole pipeline: model to OUT/. Errors are reported as diagnostics.
/// With options.memoryReport it prints the memory table instead and
/// writes only OUT/plan.json (when `outDir` is not empty).
LogicalResult compileModel(MLIRContext *ctx, StringRef modelPath,
                           const CompileOptions &options, StringRef outDir);

} // namespace mlir::zero

#endif
