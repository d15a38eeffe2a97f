//===- Pipeline.h - the compile's stages, model to LLVM ---------*- C++ -*-===//
//
// Import, training step and CPU lowering as the driver runs them, with the
// compile's settings (flags and ds_config) turned into the pipelines'
// typed options. Tools and test drivers compile exactly the same way.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DRIVER_PIPELINE_H
#define ZERO_OPT_DRIVER_PIPELINE_H

#include "zero-opt/Dialect/Zero/Transforms/Pipelines.h"
#include "zero-opt/Driver/Config.h"
#include "zero-opt/Import/ONNX/ONNXImporter.h"
#include "zero-opt/Target/CPU/CPUTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

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
  /// Folder of compiled objects reused across compiles; empty: none.
  std::string objectCache;
  unsigned compileThreads = 0; ///< 0: one per hardware thread
  /// Print the compile's phases and passes with their times, and the
  /// kernel counts (--time-report).
  bool timeReport = false;
  /// Kernels as the CUDA target maps them, run on the CPU (--simulate-gpu).
  bool simulateGPU = false;
  /// Code for an NVIDIA GPU (--target=cuda) instead of the CPU, with the
  /// kernels assembled for `gpuArch` (sm_80, sm_90).
  bool cuda = false;
  std::string gpuArch = "sm_80";
  /// With cuda: the step also holds a host copy of every kernel, which
  /// the CUDA host emulator runs (--host-kernels).
  bool hostKernels = false;
  /// Where the phases are timed; set by compileModel, null: not timed.
  TimingScope *timing = nullptr;
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

/// The plan's name for a step function (`main` is `forward`).
std::string planName(func::FuncOp fn);

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
/// --memory-budget: plans the step at activation budgets until it finds
/// the largest one whose planned per-rank peak fits, and sets
/// options.training.activationBudget; an error names the least budget
/// that works when none does.
LogicalResult fitMemoryBudget(ModuleOp module, CompileOptions &options);

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

} // namespace mlir::zero

#endif
