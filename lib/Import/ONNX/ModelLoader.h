//===- ModelLoader.h - read, validate and shape-infer ONNX ------*- C++ -*-===//
//
// The only interface to libonnx. libonnx reports errors with C++ exceptions
// while the rest of the compiler is built without them, so ModelLoader.cpp
// is the one translation unit compiled with -fexceptions, and nothing
// thrown crosses it.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_LIB_IMPORT_ONNX_MODELLOADER_H
#define ZERO_OPT_LIB_IMPORT_ONNX_MODELLOADER_H

#include "zero-opt/Import/ONNX/ONNXImporter.h"

#include "onnx/onnx_pb.h"

#include <optional>
#include <string>
#include <vector>
#include <unordered_map>

namespace mlir::zero::onnx_import {

struct LoadedModel {
  onnx::ModelProto model;
  /// Values of small integer tensors that ONNX data propagation computed
  /// from shapes (Shape -> Gather -> Concat chains), by value name.
  std::unordered_map<std::string, onnx::TensorShapeProto> shapeData;
  /// Default-domain opset the model was imported at (after conversion).
  int64_t opset = 0;
  /// The opset the model was written for, before conversion.
  int64_t originalOpset = 0;
  /// For an ONNX training model: the inference graph followed by the
  /// training algorithm (TrainingInfoProto.algorithm), shape-inferred, and
  /// its update_binding (initializer <- algorithm output).
  std::optional<onnx::GraphProto> trainingGraph;
  std::vector<std::pair<std::string, std::string>> updateBinding;
  /// onnx_file::structureHash of the model as read.
  std::string structureHash;
};

/// Parses (binary or text), converts to kTargetOpset, fixes symbolic
/// dimensions from the options, checks and infers shapes. Returns false and
/// sets `error` to one message naming the file (and node, where known).
bool loadModel(const std::string &path, const ONNXImportOptions &options,
               LoadedModel &out, std::string &error);


/// Whether the ONNX schema registry knows this op in this domain at the
/// given opset. Used to tell an unknown op from one without a lowering.
bool isKnownONNXOp(const std::string &domain, const std::string &opType,
                   int64_t opset);

} // namespace mlir::zero::onnx_import

#endif
