//===- ONNXImporter.h - ONNX to MLIR import ---------------------*- C++ -*-===//
#ifndef ZERO_OPT_IMPORT_ONNX_ONNXIMPORTER_H
#define ZERO_OPT_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir::zero {

struct ONNXImportOptions {
  /// Floating-point initializers to treat as constants (not trained).
  std::vector<std::string> freeze;
  /// Values for symbolic dimensions (dim_param), e.g. {"batch": 8}.
  std::map<std::string, int64_t> dims;
  /// Full static shapes for graph inputs, overriding the model's.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Size for a symbolic first dimension of every graph input (the
  /// micro-batch size of a training configuration); 0: none.
  int64_t batchSize = 0;
  /// Read only the shapes of the initializers that become trained
  /// parameters (for reports that need no values): their data, external
  /// data included, is never loaded, and they get no initial values.
  bool parameterShapesOnly = false;
  /// Name of the generated function.
  std::string funcName = "main";
  /// BatchNormalization in training mode takes its statistics over the
  /// micro-batches of all data-parallel ranks (SyncBatchNorm) instead of
  /// each rank's own.
  bool syncBatchNorm = false;
  /// Seed of the random masks (Dropout nodes without their own seed).
  uint64_t seed = 0;
};

/// The highest default-domain opset the importer lowers; older models are
/// converted up to it.
constexpr int64_t kTargetOpset = 17;

/// Imports an ONNX model, binary ModelProto or ONNX text syntax (by content),
/// into a module holding one function over tensors. Graph inputs come first,
/// then trainable parameters; arguments and results carry `zero.name` and
/// `zero.role`. On failure one error is emitted and null is returned.
/// Initial values of the initializers that params.npz carries: trainable
/// parameters, frozen floating-point initializers and the states of ONNX
/// training models, by name.
using ParamValues = std::vector<std::pair<std::string, DenseElementsAttr>>;

OwningOpRef<ModuleOp> importONNXModel(MLIRContext *ctx, llvm::StringRef path,
                                      const ONNXImportOptions &options,
                                      ParamValues *initialValues = nullptr);

/// Module attribute: onnx_file::structureHash of the imported model, which
/// plan.json and checkpoints record.
constexpr llvm::StringLiteral kModelHashAttr = "zero.model_hash";

/// The domain of ONNX's training ops (Gradient and the optimizers).
constexpr llvm::StringLiteral kTrainingDomain = "ai.onnx.preview.training";

/// Whether an op of `domain` ("" for the default) has a lowering.
bool isSupportedONNXOp(llvm::StringRef domain, llvm::StringRef opType);

/// The ops of `domain` ("" for the default) that have a lowering, sorted;
/// empty for a domain zero-opt does not lower.
std::vector<std::string> supportedONNXOps(llvm::StringRef domain);
/// Default-domain ops without a lowering that the importer evaluates when
/// their inputs are constants (shape arithmetic), sorted.
std::vector<std::string> compileTimeONNXOps();

/// Whether operand `index` of a default-domain op must be known at compile
/// time because it fixes a shape or axes (Reshape's shape, Slice's starts,
/// ...). Such operands must come from initializers, Constant nodes or shape
/// computations.
bool isCompileTimeOperand(llvm::StringRef opType, unsigned index);

/// Dialects the imported IR uses.
void registerONNXImportDialects(DialectRegistry &registry);

} // namespace mlir::zero

#endif
