//===- Checkpoint.cpp - sharded training checkpoints ----------------------===//
#include "zero-rt/Checkpoint.h"
#include "zero-rt/Files.h"
#include "zero-rt/Float16.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace zero::rt;
namespace json = llvm::json;
namespace fs = llvm::sys::fs;

static constexpr const char *kFormat = "zero-opt-checkpoint";
static constexpr const char *kManifest = "manifest.json";

int64_t CheckpointTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

const CheckpointTensor *
CheckpointManifest::masterOf(const std::string &param) const {
  for (const CheckpointTensor &t : tensors)
    if (t.role == "master_weight" && t.stateOf == param)
      return &t;
  return nullptr;
}

const CheckpointTensor *
CheckpointManifest::find(const std::string &name) const {
  for (const CheckpointTensor &t : tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

std::string zero::rt::checkpointTag(int64_t steps) {
  return llvm::formatv("step-{0:d8}", steps).str();
}

std::string zero::rt::rankFileName(int64_t rank) {
  return llvm::formatv("rank-{0:d5}.npz", rank).str();
}

DType zero::rt::storageType(DType t) {
  return t == DType::BF16 ? DType::U16 : t;
}

bool zero::rt::isFloatType(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 ||
         t == DType::BF16;
}

void zero::rt::convertElements(const void *in, DType from, void *out, DType to,
                               int64_t n) {
  if (from == to || !isFloatType(from) || !isFloatType(to)) {
    std::memmove(out, in, n * itemSize(to));
    return;
  }
  auto *src = static_cast<const unsigned char *>(in);
  auto *dst = static_cast<unsigned char *>(out);
  size_t si = itemSize(from), di = itemSize(to);
  for (int64_t i = 0; i < n; ++i) {
    const unsigned char *p = src + i * si;
    unsigned char *q = dst + i * di;
    double x;
    uint16_t h;
    float f;
    switch (from) {
    case DType::F64:
      std::memcpy(&x, p, 8);
      break;
    case DType::F16:
      std::memcpy(&h, p, 2);
      x = f16ToFloat(h);
      break;
    case DType::BF16:
      std::memcpy(&h, p, 2);
      x = bf16ToFloat(h);
      break;
    default:
      std::memcpy(&f, p, 4);
      x = f;
    }
    switch (to) {
    case DType::F64:
      std::memcpy(q, &x, 8);
      break;
    case DType::F16:
      h = floatToF16(float(x));
      std::memcpy(q, &h, 2);
      break;
    case DType::BF16:
      h = floatToBF16(float(x));
      std::memcpy(q, &h, 2);
      break;
    default:
      f = float(x);
      std::memcpy(q, &f, 4);
    }
  }
}

bool zero::rt::syncDirectory(const std::string &dir, std::string &error) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    error = "cannot sync folder " + dir + ": " + std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    return false;
  }
  ::close(fd);
  return true;
}

bool zero::rt::writeManifest(const std::string &dir,
                             const CheckpointManifest &m, std::string &error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream j(os, 2);
  j.object([&] {
    j.attribute("format", kFormat);
    j.attribute("version", 1);
    j.attribute("model", m.model);
    j.attribute("model_path", m.modelPath);
    j.attribute("model_hash", m.modelHash);
    j.attribute("world_size", m.worldSize);
    j.attribute("stage", m.stage);
    j.attribute("precision", m.precision);
    j.attribute("optimizer", m.optimizer);
    j.attribute("steps", m.steps);
    j.attribute("optimizer_steps", m.optimizerSteps);
    j.attribute("samples", m.samples);
    j.attributeObject("rng", [&] {
      j.attribute("algorithm", "philox4x32-10");
      j.attribute("seed", int64_t(m.seed));
    });
    if (const auto &s = m.lossScaler)
      j.attributeObject("loss_scaler", [&] {
        j.attribute("scale", s->scale);
        j.attribute("iter", s->iter);
        j.attribute("last_overflow", s->lastOverflow);
        j.attribute("hysteresis_left", s->hysteresisLeft);
      });
    j.attributeArray("files", [&] {
      for (size_t r = 0; r < m.fileBytes.size(); ++r)
        j.object([&] {
          j.attribute("name", rankFileName(r));
          j.attribute("bytes", int64_t(m.fileBytes[r]));
        });
    });
    j.attributeArray("tensors", [&] {
      for (const CheckpointTensor &t : m.tensors)
        j.object([&] {
          j.attribute("name", t.name);
          j.attribute("role", t.role);
          if (!t.stateOf.empty())
            j.attribute("state_of", t.stateOf);
          j.attribute("dtype", dtypeName(t.dtype));
          j.attributeArray("shape", [&] {
            for (int64_t d : t.shape)
              j.value(d);
          });
          if (t.sharded())
            j.attribute("shard_numel", t.shardNumel);
          else
            j.attribute("file", t.file);
        });
    });
  });
  os << "\n";
  std::string path = dir + "/" + kManifest, tmp = path + ".tmp";
  if (!writeTextFile(tmp, text, error))
    return false;
  int fd = ::open(tmp.c_str(), O_RDONLY | O_CLOEXEC);
  bool synced = fd >= 0 && ::fsync(fd) == 0;
  if (fd >= 0)
    ::close(fd);
  if (!synced || std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

static bool readManifest(const std::string &dir, CheckpointManifest &m,
                         std::string &error) {
  std::string path = dir + "/" + kManifest;
  json::Value parsed = nullptr;
  if (!readJsonFile(path, kFormat,
                    "(not a checkpoint folder written by zero-run "
                    "--save-checkpoint, or one whose writing was interrupted)",
                    parsed, error))
    return false;
  const json::Object *o = parsed.getAsObject();
  if (o->getInteger("version") != 1) {
    error = path + ": checkpoint format version " +
            std::to_string(o->getInteger("version").value_or(-1)) +
            " is not 1; this zero-run reads version 1";
    return false;
  }
  auto bad = [&](const std::string &what) {
    error = path + ": " + what;
    return false;
  };
  m.model = o->getString("model").value_or("").str();
  m.modelPath = o->getString("model_path").value_or("").str();
  m.modelHash = o->getString("model_hash").value_or("").str();
  m.worldSize = o->getInteger("world_size").value_or(0);
  m.stage = o->getInteger("stage").value_or(0);
  m.precision = o->getString("precision").value_or("fp32").str();
  m.optimizer = o->getString("optimizer").value_or("").str();
  auto steps = o->getInteger("steps"), taken = o->getInteger("optimizer_steps"),
       samples = o->getInteger("samples");
  if (!steps || !taken || !samples || *steps < 0 || *taken < 0 || *samples < 0)
    return bad("steps, optimizer_steps and samples must be integers >= 0");
  m.steps = *steps;
  m.optimizerSteps = *taken;
  m.samples = *samples;
  if (const json::Object *rng = o->getObject("rng"))
    m.seed = uint64_t(rng->getInteger("seed").value_or(0));
  if (const json::Object *ls = o->getObject("loss_scaler")) {
    LossScalerState s;
    auto scale = ls->getNumber("scale");
    auto iter = ls->getInteger("iter"), last = ls->getInteger("last_overflow"),
         left = ls->getInteger("hysteresis_left");
    if (!scale || !iter || !last || !left || *scale <= 0)
      return bad("malformed loss_scaler");
    s.scale = *scale;
    s.iter = *iter;
    s.lastOverflow = *last;
    s.hysteresisLeft = *left;
    m.lossScaler = s;
  }
  const json::Array *files = o->getArray("files");
  if (!files || int64_t(files->size()) != m.worldSize || m.worldSize < 1)
    return bad("'files' must list one file per rank of world_size");
  for (const json::Value &v : *files) {
    const json::Object *f = v.getAsObject();
    auto bytes = f ? f->getInteger("bytes") : std::nullopt;
    if (!bytes || *bytes < 0)
      return bad("malformed entry in 'files'");
    m.fileBytes.push_back(uint64_t(*bytes));
  }
  const json::Array *tensors = o->getArray("tensors");
  if (!tensors)
    return bad("missing 'tensors'");
  for (const json::Value &v : *tensors) {
    const json::Object *t = v.getAsObject();
    CheckpointTensor ct;
    auto name = t ? t->getString("name") : std::nullopt;
    auto role = t ? t->getString("role") : std::nullopt;
    auto dtype = t ? t->getString("dtype") : std::nullopt;
    const json::Array *shape = t ? t->getArray("shape") : nullptr;
    std::optional<DType> type = dtype ? dtypeFromName(*dtype) : std::nullopt;
    if (!name || !role || !type || !shape)
      return bad("malformed entry in 'tensors'");
    ct.dtype = *type;
    ct.name = name->str();
    ct.role = role->str();
    ct.stateOf = t->getString("state_of").value_or("").str();
    for (const json::Value &d : *shape) {
      auto i = d.getAsInteger();
      if (!i || *i < 0)
        return bad("bad shape of '" + ct.name + "'");
      ct.shape.push_back(*i);
    }
    ct.shardNumel = t->getInteger("shard_numel").value_or(0);
    ct.file = t->getInteger("file").value_or(0);
    if (ct.shardNumel < 0 || ct.file < 0 || ct.file >= m.worldSize ||
        (ct.sharded() && ct.shardNumel * m.worldSize < ct.numel()))
      return bad("bad layout of '" + ct.name + "'");
    m.tensors.push_back(std::move(ct));
  }
  return true;
}

/// ROOT's whole checkpoints (folders step-N with a manifest), oldest first.
static std::vector<std::string> wholeCheckpoints(const std::string &root) {
  std::vector<std::string> tags;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = llvm::sys::path::filename(it->path()).str();
    llvm::StringRef digits(name);
    if (!digits.consume_front("step-") || digits.empty() ||
        digits.find_first_not_of("0123456789") != llvm::StringRef::npos)
      continue;
    if (fs::exists(it->path() + "/" + kManifest))
      tags.push_back(name);
  }
  // Tags are zero-padded: names sort as step counts do.
  llvm::sort(tags);
  return tags;
}

bool zero::rt::publishCheckpoint(const std::string &tmp,
                                 const std::string &root,
                                 const std::string &tag, std::string &error) {
  if (!syncDirectory(tmp, error))
    return false;
  std::string final = root + "/" + tag, old = root + "/.del-" + tag;
  // An older checkpoint of the same name steps aside first: until the
  // rename, it is the one a resume finds.
  if (fs::exists(final) && std::rename(final.c_str(), old.c_str()) != 0) {
    error = "cannot replace " + final + ": " + std::strerror(errno);
    return false;
  }
  if (std::rename(tmp.c_str(), final.c_str()) != 0) {
    error =
        "cannot rename " + tmp + " to " + final + ": " + std::strerror(errno);
    return false;
  }
  if (!syncDirectory(root, error))
    return false;
  if (fs::exists(old))
    fs::remove_directories(old);
  return true;
}

bool zero::rt::pruneCheckpoints(const std::string &root, int64_t keep,
                                std::string &error) {
  std::error_code ec;
  std::vector<std::string> leftovers;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with(".tmp-step-") || name.starts_with(".del-step-"))
      leftovers.push_back(it->path());
  }
  std::vector<std::string> tags = wholeCheckpoints(root);
  for (size_t i = 0; keep > 0 && i + keep < tags.size(); ++i) {
    // Renamed away first, so that a half-removed folder is never taken
    // for a checkpoint.
    std::string from = root + "/" + tags[i], to = root + "/.del-" + tags[i];
    if (std::rename(from.c_str(), to.c_str()) != 0) {
      error = "cannot remove " + from + ": " + std::strerror(errno);
      return false;
    }
    leftovers.push_back(to);
  }
  for (const std::string &dir : leftovers)
    if (std::error_code rc = fs::remove_directories(dir)) {
      error = "cannot remove " + dir + ": " + rc.message();
      return false;
    }
  return true;
}

CheckpointReader::CheckpointReader() = default;
CheckpointReader::~CheckpointReader() = default;

bool CheckpointReader::open(const std::string &path, std::string &error) {
  if (!fs::is_directory(path)) {
    error = path + ": no such checkpoint folder";
    return false;
  }
  dir_ = path;
  if (!fs::exists(path + "/" + kManifest)) {
    std::vector<std::string> tags = wholeCheckpoints(path);
    if (tags.empty()) {
      error = path + ": no checkpoint here (neither a manifest.json nor a "
                     "step-N folder holding one)";
      return false;
    }
    dir_ = path + "/" + tags.back();
  }
  if (!readManifest(dir_, manifest_, error))
    return false;
  for (int64_t r = 0; r < manifest_.worldSize; ++r) {
    std::string f = dir_ + "/" + rankFileName(r);
    uint64_t size = 0;
    if (std::error_code ec = fs::file_size(f, size)) {
      error = f + ": " + ec.message() + " (the checkpoint lacks rank " +
              std::to_string(r) + "'s shard file)";
      return false;
    }
    if (size != manifest_.fileBytes[r]) {
      error = f + ": " + std::to_string(size) + " bytes, the manifest says " +
              std::to_string(manifest_.fileBytes[r]) +
              ": the shard file is truncated or damaged";
      return false;
    }
  }
  files.clear();
  files.resize(manifest_.worldSize);
  return true;
}

NpzReader *CheckpointReader::file(int64_t rank, std::string &error) {
  if (!files[rank]) {
    auto reader = std::make_unique<NpzReader>();
    if (!reader->open(dir_ + "/" + rankFileName(rank), error))
      return nullptr;
    files[rank] = std::move(reader);
  }
  return files[rank].get();
}

bool CheckpointReader::read(const CheckpointTensor &t, int64_t first,
                            int64_t count, DType to, void *out,
                            std::string &error) {
  size_t from = itemSize(t.dtype), dst = itemSize(to);
  if (t.dtype != to && !(isFloatType(t.dtype) && isFloatType(to))) {
    error = dir_ + ": '" + t.name + "' is " + dtypeName(t.dtype) +
            ", which does not convert to " + dtypeName(to);
    return false;
  }
  auto *bytes = static_cast<unsigned char *>(out);
  int64_t numel = t.numel();
  // Past the end: zero (the padding of a shard).
  int64_t inside = std::clamp<int64_t>(numel - first, 0, count);
  std::memset(bytes + inside * dst, 0, (count - inside) * dst);
  std::vector<unsigned char> raw;
  for (int64_t done = 0; done < inside;) {
    int64_t at = first + done;
    int64_t rank = t.sharded() ? at / t.shardNumel : t.file;
    int64_t offset = t.sharded() ? at - rank * t.shardNumel : at;
    int64_t end = t.sharded() ? (rank + 1) * t.shardNumel : numel;
    int64_t n = std::min(inside - done, end - at);
    NpzReader *f = file(rank, error);
    if (!f)
      return false;
    const NpzReader::Member *m = f->find(t.name);
    int64_t expect = t.sharded() ? t.shardNumel : numel;
    if (!m || m->dtype != storageType(t.dtype) ||
        int64_t(m->bytes) != expect * int64_t(from)) {
      error = dir_ + "/" + rankFileName(rank) + ": no " + dtypeName(t.dtype) +
              " array '" + t.name + "' of " + std::to_string(expect) +
              " elements, which the manifest places there";
      return false;
    }
    unsigned char *dest = bytes + done * dst;
    if (t.dtype == to) {
      if (!f->read(*m, offset * from, dest, n * from, error))
        return false;
    } else {
      raw.resize(n * from);
      if (!f->read(*m, offset * from, raw.data(), raw.size(), error))
        return false;
      convertElements(raw.data(), t.dtype, dest, to, n);
    }
    done += n;
  }
  return true;
}
