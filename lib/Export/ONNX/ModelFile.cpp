//===- ModelFile.cpp - ONNX model files without MLIR ----------------------===//
#include "zero-opt/Export/ONNX/ModelFile.h"

#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

using namespace zero;

/// ONNX text syntax starts with the `<...>` model header; a binary
/// ModelProto starts with a protobuf tag byte.
bool onnx_file::looksLikeText(const std::string &content) {
  size_t i = 0;
  while (i < content.size()) {
    char c = content[i];
    if (c == '#') {
      while (i < content.size() && content[i] != '\n')
        ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else {
      return c == '<';
    }
  }
  return false;
}

std::string onnx_file::structureHash(const onnx::ModelProto &model) {
  onnx::ModelProto s;
  *s.mutable_opset_import() = model.opset_import();
  onnx::GraphProto &g = *s.mutable_graph();
  const onnx::GraphProto &in = model.graph();
  *g.mutable_node() = in.node();
  for (const auto *list : {&in.input(), &in.output()})
    for (const onnx::ValueInfoProto &v : *list) {
      onnx::ValueInfoProto &c =
          list == &in.input() ? *g.add_input() : *g.add_output();
      c.set_name(v.name());
      if (v.type().has_tensor_type())
        c.mutable_type()->mutable_tensor_type()->set_elem_type(
            v.type().tensor_type().elem_type());
    }
  for (const onnx::TensorProto &t : in.initializer()) {
    onnx::TensorProto &c = *g.add_initializer();
    c.set_name(t.name());
    c.set_data_type(t.data_type());
    *c.mutable_dims() = t.dims();
  }
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    s.SerializeToCodedStream(&coded);
  }
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest).take_front(16),
                     /*LowerCase=*/true);
}

bool onnx_file::readModel(const std::string &path, onnx::ModelProto &model,
                          std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/true);
  if (!buf) {
    error = path + ": " + buf.getError().message();
    return false;
  }
  llvm::StringRef content = (*buf)->getBuffer();
  if (looksLikeText(content.str())) {
    try {
      onnx::OnnxParser parser(content.data());
      auto status = parser.Parse(model);
      if (!status.IsOK()) {
        error = path + ": invalid ONNX text syntax: " + status.ErrorMessage();
        return false;
      }
    } catch (const std::exception &e) {
      error = path + ": invalid ONNX text syntax: " + e.what();
      return false;
    }
    return true;
  }
  if (content.empty() ||
      !model.ParseFromArray(content.data(), int(content.size()))) {
    error = path + ": not a valid ONNX model: the protobuf is truncated or "
                   "malformed";
    return false;
  }
  return true;
}
