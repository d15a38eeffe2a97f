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

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::rt {
struct ArrayView;
} // namespace zero::rt

namespace onnx {
class ModelProto;
class TensorProto;
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

/// Where a tensor's external data lies: ONNX's location, offset and length
/// keys (length -1 when not given).
struct ExternalData {
  std::string location;
  int64_t offset = 0, length = -1;
};
/// Reads the external_data keys of `t`. An offset or length that is not a
/// non-negative integer returns false with `badKey` naming it.
bool readExternalData(const onnx::TensorProto &t, ExternalData &out,
                      std::string &badKey);

/// Where exportModel puts the initializers' data.
enum class ExternalDataMode {
  /// In the model file, unless it would pass protobuf's 2 GB limit.
  Auto,
  /// In a data file beside the model (ONNX external data).
  Always,
};

/// The `--external-data` choices of zero-run and zero-opt --consolidate.
llvm::cl::ValuesClass externalDataValues();

/// Writes the model at `modelPath` to `outPath` with the initializers named
/// in `weights` holding those arrays (converted to the initializer's float
/// type; shapes must match). With external data, initializers of 1 KiB or
/// more go to `outPath` + ".data", referenced relative to the model, each
/// streamed through in pieces, so memory stays bounded whatever the
/// model's size. Both files are written under temporary names and renamed
/// once whole. A non-empty `expectedHash` must equal the model's
/// structureHash. False with a one-line `error`.
bool exportModel(const std::string &modelPath,
                 const std::vector<rt::ArrayView> &weights,
                 const std::string &outPath, ExternalDataMode external,
                 const std::string &expectedHash, std::string &error);

} // namespace zero::onnx_file

#endif
