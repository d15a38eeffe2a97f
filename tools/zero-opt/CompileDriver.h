//===- CompileDriver.h - zero-opt on an ONNX model --------------*- C++ -*-===//
#ifndef ZERO_OPT_TOOLS_COMPILEDRIVER_H
#define ZERO_OPT_TOOLS_COMPILEDRIVER_H

namespace mlir::zero {
/// True when the command line names an ONNX model (.onnx or ONNX text).
bool isModelInvocation(int argc, char **argv);
/// `--help` with no input file: the model options come first.
bool isHelpInvocation(int argc, char **argv);
/// `--list-ops` alone: the ONNX ops the importer lowers.
bool isListOpsInvocation(int argc, char **argv);
int listOpsMain();
/// `--consolidate DIR`: a checkpoint's full weights as one .npz.
bool isConsolidateInvocation(int argc, char **argv);
int consolidateMain(int argc, char **argv);
/// Compiles the model into an output folder for zero-run.
int compileMain(int argc, char **argv);
} // namespace mlir::zero

#endif
