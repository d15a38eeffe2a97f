//===- Compiler.h - the model compilation pipeline --------------*- C++ -*-===//
//
// The stages zero-opt runs on a model, as a library so that tools and test
// drivers compile exactly the same way.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DRIVER_COMPILER_H
#define ZERO_OPT_DRIVER_COMPILER_H

#include "zero-opt/Dialect/Zero/Transforms/Pipelines.h"
#include "zero-opt/Driver/Config.h"
#include "zero-opt/Import/ONNX/ONNXImporter.h"
#include "zero-opt/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

namespace mlir::zero {

enum class CompileMode {
  Auto,  ///< train if the model has a scalar floating-point output
  Train, ///< forward and training step; an error without a loss
  Infer, ///< forward only
};

struct CompileOptions {
  ONNXImportOptions import;
  CompileMode mode = CompileMode::Auto;
  std::string loss; ///< name of the loss output; empty: first scalar
  TrainingConfig training;
  unsigned optLevel = 2; ///< LLVM optimization level of the step library
  int64_t worldSize = 1; ///< data-parallel ranks the program runs on
  /// Plan memory only (--report=memory): no code, no parameter values;
  /// plan.json without a library.
  bool memoryReport = false;
  /// With memoryReport: also predict the step's timeline (--report=timeline)
  /// on the machine of `hardware`, matmuls at the `precision` peak.
  bool timelineReport = false;
  std::string hardware, precision = "fp32";
  /// Filled by predictTimeline: the Chrome trace of the predicted step.
  std::string timelineEvents;
};

/// Registers every dialect, interface model and pass the pipeline uses.
void registerCompilerDialects(DialectRegistry &registry);
void registerCompilerPasses();

/// Imports the model and cleans it up into the tensor-level module.
OwningOpRef<ModuleOp> importModel(MLIRContext *ctx, StringRef modelPath,
                                  const CompileOptions &options,
                                  ParamValues &params);

/// Adds the training step (autodiff, optimizer, accumulation, clipping)
/// when the options ask for one; `trained` tells whether it did. Batch
/// settings derived from the model are written back into `options`.
LogicalResult buildTraining(ModuleOp module, CompileOptions &options,
                            bool &trained);

/// importModel + buildTraining: the tensor-level program.
OwningOpRef<ModuleOp> buildStep(MLIRContext *ctx, StringRef modelPath,
                                CompileOptions &options, ParamValues &params);

/// The pipelines' options for a compile's settings (flags and ds_config).
void trainingPipelineOptions(const CompileOptions &options,
                             TrainingPipelineOptions &pipeline);
void cpuLoweringOptions(const CompileOptions &options,
                        cpu::CPULoweringOptions &lowering);

/// Lowers every step function to the LLVM dialect.
LogicalResult lowerStepToLLVM(ModuleOp module, const CompileOptions &options);

/// Bufferizes the step functions and records their memory plan (the module
/// attribute zero.memory), without generating code.
LogicalResult planStepMemory(ModuleOp module, const CompileOptions &options);

/// The per-rank memory table of each step function of a planned module.
void printMemoryReport(llvm::raw_ostream &os, ModuleOp planned,
                       const CompileOptions &options);

/// Simulates the planned step functions on options.hardware (module
/// attribute zero.timeline) and keeps the predicted trace in
/// options.timelineEvents.
LogicalResult predictTimeline(ModuleOp planned, CompileOptions &options);

/// The predicted step time, exposed communication and MFU of each step
/// function of a module predictTimeline ran on.
void printTimelineReport(llvm::raw_ostream &os, ModuleOp planned,
                         const CompileOptions &options);

/// Writes OUT/: step.so from the lowered module, plan.json from the step
/// functions' signatures (taken before lowering) and params.npz. The
/// folder is built under a temporary name and renamed into place; an
/// existing `outDir` is replaced only if it is empty or an earlier output.
llvm::Error writeOutputFolder(ModuleOp lowered, ModuleOp signatures,
                              const ParamValues &params,
                              const CompileOptions &options,
                              StringRef modelPath, StringRef outDir);

/// Whole pipeline: model to OUT/. Errors are reported as diagnostics.
/// With options.memoryReport it prints the memory table instead and
/// writes only OUT/plan.json (when `outDir` is not empty).
LogicalResult compileModel(MLIRContext *ctx, StringRef modelPath,
                           const CompileOptions &options, StringRef outDir);

} // namespace mlir::zero

#endif
