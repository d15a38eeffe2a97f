//===- ModelFile.h - ONNX model files without MLIR ---------------*- C++
//-*-===//
//
// What zero-opt and zero-run do with an ONNX file besides importing it:
// identify its graph (checkpoints record which model they belong to) and
// write it back with trained weights. No MLIR: zero-run links this.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_EXPORT_ONNX_MODELFILE_H
#define ZERO_OPT_EXPORT_ONNX_MODELFILE_H

#include <string>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace zero::onnx_file {

/// SHA-256 (hex, first 16 bytes) of what makes the model this model: its
/// opsets, nodes, graph inputs and outputs (names and element types; not
/// shapes, whose batch dimension a compile may fix), and initializers
/// (names, element types, dimensions; not values).
std::string structureHash(const onnx::ModelProto &model);

/// Whether a model file's content is ONNX text syntax (the `<...>` model
/// header first, after blanks and # comments) rather than a binary
/// ModelProto.
bool looksLikeText(const std::string &content);

/// Reads a binary or text model file; false with a one-line `error`.
bool readModel(const std::string &path, onnx::ModelProto &model,
               std::string &error);

} // namespace zero::onnx_file

#endif
