//===- OutputFolder.h - OUT/: step.so, plan.json, params.npz ----*- C++ -*-===//
//
// The compiler's output folder, the contract with zero-run and users.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DRIVER_OUTPUTFOLDER_H
#define ZERO_OPT_DRIVER_OUTPUTFOLDER_H

#include "zero-opt/Driver/Pipeline.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <thread>

namespace mlir::zero {

/// OUT/: step.so from the lowered module, plan.json from the step
/// functions' signatures (taken before lowering) and params.npz. The
/// folder is built under a temporary name and renamed into place; an
/// existing `outDir` is replaced only if it is empty or an earlier output.
/// params.npz is written on a thread from `begin` on, so that a large
/// model's weights go to disk while its step is lowered.
class OutputFolder {
public:
  /// Checks that `outDir` may be replaced and creates the temporary
  /// folder; with `params` (kept alive by the caller until `commit`),
  /// starts writing params.npz.
  static llvm::Expected<std::unique_ptr<OutputFolder>>
  begin(StringRef outDir, const ParamValues *params);
  /// Waits for params.npz; removes the temporary folder unless committed.
  ~OutputFolder();

  /// Writes step.so (unless a memory report) and plan.json, waits for
  /// params.npz and renames the folder into place.
  llvm::Error commit(ModuleOp lowered, ModuleOp signatures,
                     const CompileOptions &options, StringRef modelPath);

private:
  OutputFolder() = default;
  std::string inTmp(StringRef file) const;
  /// --target=cuda: the cubins of the module's gpu.binary, one per chip.
  llvm::Error writeDeviceObjects(ModuleOp lowered);

  std::string out, tmp;
  std::thread paramsWriter;
  std::string paramsError;
  double paramsSeconds = 0;
  bool committed = false;
};

} // namespace mlir::zero

#endif
