//===- zero-opt.cpp - the zero-opt compiler driver -------------*- C++ -*-===//
//
// On an ONNX model, zero-opt compiles it into an output folder for zero-run.
// On anything else it behaves like mlir-opt, so each pass runs alone.
//
//===----------------------------------------------------------------------===//
#include "CompileDriver.h"

#include "zero-opt/Driver/Compiler.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

using namespace mlir;

int main(int argc, char **argv) {
  if (zero::isListOpsInvocation(argc, argv))
    return zero::listOpsMain();
  if (zero::isConsolidateInvocation(argc, argv))
    return zero::consolidateMain(argc, argv);
  if (zero::isModelInvocation(argc, argv) ||
      zero::isHelpInvocation(argc, argv))
    return zero::compileMain(argc, argv);
  // mlir-opt's own list of options, passes and pipelines.
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef(argv[i]) == "--help-mlir")
      argv[i] = const_cast<char *>("--help");

  zero::registerCompilerPasses();
  DialectRegistry registry;
  zero::registerCompilerDialects(registry);
  return asMainReturnCode(
      MlirOptMain(argc, argv, "zero-opt: ZeRO training compiler\n", registry));
}
