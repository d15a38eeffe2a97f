//===- ModelFile.cpp - ONNX model files without MLIR ----------------------===//
#include "zero-opt/Export/ONNX/ModelFile.h"

#include "zero-rt/Checkpoint.h"
#include "zero-rt/Npz.h"

#include "onnx/defs/parser.h"
#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
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

bool onnx_file::readExternalData(const onnx::TensorProto &t, ExternalData &out,
                                 std::string &badKey) {
  for (const auto &kv : t.external_data()) {
    llvm::StringRef v(kv.value());
    bool bad = false;
    if (kv.key() == "location")
      out.location = kv.value();
    else if (kv.key() == "offset")
      bad = v.getAsInteger(10, out.offset) || out.offset < 0;
    else if (kv.key() == "length")
      bad = v.getAsInteger(10, out.length) || out.length < 0;
    if (bad) {
      badKey = kv.key() + " '" + kv.value() + "'";
      return false;
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Export
//===----------------------------------------------------------------------===//

using rt::ArrayView;
using rt::DType;

static std::optional<DType> floatDType(int32_t type) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  default:
    return std::nullopt;
  }
}

/// Passes the array's elements, converted to `to`, to `sink` in pieces of
/// at most 4M elements: an array never has to be whole in memory.
static bool streamConverted(
    const ArrayView &w, DType to, int64_t numel,
    const std::function<bool(const void *, size_t, std::string &)> &sink,
    std::string &error) {
  constexpr int64_t kChunk = int64_t(1) << 22;
  size_t si = rt::itemSize(w.dtype), di = rt::itemSize(to);
  std::vector<unsigned char> src, dst;
  for (int64_t first = 0; first < numel; first += kChunk) {
    int64_t n = std::min(kChunk, numel - first);
    const void *p;
    if (w.read || w.splat) {
      src.resize(n * si);
      if (w.splat)
        for (int64_t i = 0; i < n; ++i)
          std::memcpy(src.data() + i * si, w.data, si);
      else if (!w.read(first * si, src.data(), n * si, error))
        return false;
      p = src.data();
    } else {
      p = static_cast<const unsigned char *>(w.data) + first * si;
    }
    if (w.dtype != to) {
      dst.resize(n * di);
      rt::convertElements(p, w.dtype, dst.data(), to, n);
      p = dst.data();
    }
    if (!sink(p, n * di, error))
      return false;
  }
  return true;
}

namespace {
/// A file written under a temporary name and renamed once whole and synced.
class AtomicFile {
public:
  explicit AtomicFile(std::string path)
      : path(std::move(path)), tmp(this->path + ".tmp") {}
  ~AtomicFile() {
    if (f) {
      std::fclose(f);
      std::remove(tmp.c_str());
    }
  }
  bool open(std::string &error) {
    f = std::fopen(tmp.c_str(), "wb");
    if (!f)
      error = "cannot write " + path + ": " + std::strerror(errno);
    return f;
  }
  bool write(const void *p, size_t n, std::string &error) {
    if (n && std::fwrite(p, 1, n, f) != n)
      return fail(error);
    pos += n;
    return true;
  }
  /// Zeros up to the next multiple of `align`.
  bool pad(uint64_t align, std::string &error) {
    static const char zeros[4096] = {};
    uint64_t n = (align - pos % align) % align;
    return write(zeros, n, error);
  }
  uint64_t offset() const { return pos; }
  int fd() const { return fileno(f); }
  /// Flushes, syncs and renames into place.
  bool commit(std::string &error) {
    if (std::fflush(f) != 0 || fsync(fileno(f)) != 0)
      return fail(error);
    std::FILE *g = f;
    f = nullptr;
    if (std::fclose(g) != 0) {
      std::remove(tmp.c_str());
      error = "cannot write " + path + ": " + std::strerror(errno);
      return false;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      error =
          "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
      std::remove(tmp.c_str());
      return false;
    }
    return true;
  }

private:
  bool fail(std::string &error) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  std::string path, tmp;
  std::FILE *f = nullptr;
  uint64_t pos = 0;
};
} // namespace

/// Reads an initializer that stays as it is but keeps its data beside the
/// source model into the message.
static bool inlineExternal(onnx::TensorProto &t, llvm::StringRef modelDir,
                           std::string &error) {
  onnx_file::ExternalData ext;
  std::string badKey;
  std::string what = "initializer '" + t.name() + "': external data ";
  if (!onnx_file::readExternalData(t, ext, badKey)) {
    error = what + "has an invalid " + badKey;
    return false;
  }
  llvm::SmallString<256> file(modelDir);
  llvm::sys::path::append(file, ext.location);
  uint64_t size = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(file, size)) {
    error = what + "file " + std::string(file) + ": " + ec.message();
    return false;
  }
  if (ext.length < 0)
    ext.length = int64_t(size) - ext.offset;
  if (ext.offset + ext.length > int64_t(size)) {
    error = what + "runs past the end of " + std::string(file);
    return false;
  }
  auto buf = llvm::MemoryBuffer::getFileSlice(file, ext.length, ext.offset);
  if (!buf) {
    error = what + "cannot read " + std::string(file) + ": " +
            buf.getError().message();
    return false;
  }
  t.set_raw_data((*buf)->getBufferStart(), (*buf)->getBufferSize());
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto::DEFAULT);
  return true;
}

llvm::cl::ValuesClass onnx_file::externalDataValues() {
  return llvm::cl::values(
      clEnumValN(ExternalDataMode::Auto, "auto",
                 "in the model, or in FILE.data beside it when the model "
                 "would pass protobuf's 2 GB limit"),
      clEnumValN(ExternalDataMode::Always, "always",
                 "in FILE.data beside the model"));
}

bool onnx_file::exportModel(const std::string &modelPath,
                            const std::vector<ArrayView> &weights,
                            const std::string &outPath,
                            ExternalDataMode external,
                            const std::string &expectedHash,
                            std::string &error) {
  onnx::ModelProto model;
  if (!readModel(modelPath, model, error))
    return false;
  if (!expectedHash.empty() && structureHash(model) != expectedHash) {
    error = modelPath +
            ": not the model that was trained (its graph or "
            "initializers differ: structure hash " +
            structureHash(model) + ", the weights are of " + expectedHash + ")";
    return false;
  }
  std::map<std::string, const ArrayView *> byName;
  for (const ArrayView &w : weights)
    byName[w.name] = &w;

  struct Replaced {
    onnx::TensorProto *t;
    const ArrayView *w;
    DType to;
    int64_t numel;
  };
  std::vector<Replaced> replaced;
  uint64_t newBytes = 0;
  llvm::SmallString<256> modelDir(modelPath);
  llvm::sys::path::remove_filename(modelDir);
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer()) {
    auto it = byName.find(t.name());
    if (it == byName.end()) {
      if (t.data_location() == onnx::TensorProto::EXTERNAL &&
          !inlineExternal(t, modelDir, error)) {
        error = modelPath + ": " + error;
        return false;
      }
      continue;
    }
    const ArrayView &w = *it->second;
    std::optional<DType> to = floatDType(t.data_type());
    if (!to || !rt::isFloatType(w.dtype)) {
      error = modelPath + ": initializer '" + t.name() + "' is " +
              (to ? rt::dtypeName(*to) : "not floating point") +
              " and the weight " + rt::dtypeName(w.dtype) +
              ": only floating-point initializers take trained values";
      return false;
    }
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    if (dims != w.shape) {
      error = modelPath + ": initializer '" + t.name() + "' is " +
              rt::formatShape(dims) + ", the weight " +
              rt::formatShape(w.shape);
      return false;
    }
    int64_t numel = 1;
    for (int64_t d : dims)
      numel *= d;
    t.clear_float_data();
    t.clear_double_data();
    t.clear_int32_data();
    t.clear_raw_data();
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
    replaced.push_back({&t, &w, *to, numel});
    newBytes += numel * rt::itemSize(*to) + 16;
    byName.erase(it);
  }
  if (!byName.empty()) {
    error = modelPath + ": the weights hold '" + byName.begin()->first +
            "', which is not an initializer of the model";
    return false;
  }

  // Protobuf refuses messages of 2 GB or more: past that, the data goes
  // beside the model, as ONNX's external data.
  bool toFile = external == ExternalDataMode::Always ||
                model.ByteSizeLong() + newBytes >= uint64_t(INT_MAX);
  constexpr int64_t kInlineBelow = 1024; // ONNX's own size_threshold
  std::string dataPath = outPath + ".data";
  std::string location = llvm::sys::path::filename(dataPath).str();
  AtomicFile data(dataPath);
  if (toFile && !data.open(error))
    return false;
  for (const Replaced &r : replaced) {
    size_t bytes = r.numel * rt::itemSize(r.to);
    if (!toFile || int64_t(bytes) < kInlineBelow) {
      std::string &raw = *r.t->mutable_raw_data();
      raw.resize(bytes);
      size_t at = 0;
      auto sink = [&](const void *p, size_t n, std::string &) {
        std::memcpy(raw.data() + at, p, n);
        at += n;
        return true;
      };
      if (!streamConverted(*r.w, r.to, r.numel, sink, error))
        return false;
      continue;
    }
    // Aligned to pages, so a reader can map each tensor.
    if (!data.pad(4096, error))
      return false;
    uint64_t offset = data.offset();
    auto sink = [&](const void *p, size_t n, std::string &err) {
      return data.write(p, n, err);
    };
    if (!streamConverted(*r.w, r.to, r.numel, sink, error))
      return false;
    r.t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char *key, const std::string &value) {
      onnx::StringStringEntryProto *e = r.t->add_external_data();
      e->set_key(key);
      e->set_value(value);
    };
    add("location", location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(bytes));
  }
  if (toFile && !data.commit(error))
    return false;
  if (model.ByteSizeLong() >= uint64_t(INT_MAX)) {
    error = outPath + ": the model is " + std::to_string(model.ByteSizeLong()) +
            " bytes without its weights, past protobuf's 2 GB limit";
    return false;
  }
  AtomicFile out(outPath);
  if (!out.open(error))
    return false;
  {
    google::protobuf::io::FileOutputStream stream(out.fd());
    if (!model.SerializeToZeroCopyStream(&stream) || !stream.Flush()) {
      error = "cannot write " + outPath + ": " + std::strerror(errno);
      return false;
    }
  }
  return out.commit(error);
}
