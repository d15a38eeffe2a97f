//===- NpzTest.cpp - Tests for the .npy/.npz reader and writer ------------===//
//
// Self-contained: round-trips arrays through memory and files, then feeds
// malformed inputs and checks each fails with a one-line message. Exits
// non-zero if any check fails.
//
//===----------------------------------------------------------------------===//

#include "zero-rt/Npz.h"

#include <zip.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using namespace zero::rt;
namespace fs = std::filesystem;

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,    \
                   #cond);                                                     \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/// Checks that an operation failed with a one-line message that starts with
/// `prefix` and contains `needle`.
#define CHECK_ERROR(ok, error, prefix, needle)                                 \
  checkError((ok), (error), (prefix), (needle), __FILE__, __LINE__)

static void checkError(bool ok, const std::string &error,
                       const std::string &prefix, const std::string &needle,
                       const char *file, int line) {
  bool good = !ok && error.rfind(prefix, 0) == 0 &&
              error.find(needle) != std::string::npos &&
              error.find('\n') == std::string::npos;
  if (!good) {
    std::fprintf(stderr,
                 "%s:%d: expected failure starting with '%s' containing '%s'; "
                 "got ok=%d error='%s'\n",
                 file, line, prefix.c_str(), needle.c_str(), ok, error.c_str());
    ++failures;
  }
}

static std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

static void writeBytes(const std::string &path, const void *data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char *>(data),
            static_cast<std::streamsize>(size));
}

static void writeBytes(const std::string &path,
                       const std::vector<uint8_t> &bytes) {
  writeBytes(path, bytes.data(), bytes.size());
}

/// An array whose bytes follow a pattern that depends on `seed`.
static Array makeArray(const std::string &name, DType dtype,
                       std::vector<int64_t> shape, unsigned seed) {
  Array array;
  array.name = name;
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.data.resize(static_cast<size_t>(array.numel()) * array.itemSize());
  for (size_t i = 0; i < array.data.size(); ++i)
    array.data[i] = static_cast<uint8_t>(i * 31 + seed * 7 + 1);
  // NumPy bools are 0 or 1.
  if (dtype == DType::Bool)
    for (uint8_t &b : array.data)
      b &= 1;
  return array;
}

static bool sameArray(const Array &a, const Array &b) {
  return a.name == b.name && a.dtype == b.dtype && a.shape == b.shape &&
         a.data == b.data;
}

/// A .npy image with a hand-written header dict, padded like NumPy does.
static std::vector<uint8_t> rawNpy(const std::string &dict,
                                   const std::vector<uint8_t> &data,
                                   unsigned major = 1) {
  size_t lenBytes = major == 1 ? 2 : 4;
  std::string header = dict;
  while ((6 + 2 + lenBytes + header.size() + 1) % 64 != 0)
    header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {
      0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (size_t i = 0; i < lenBytes; ++i)
    out.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

/// Writes a zip with arbitrary member contents, bypassing writeNpz's checks.
static bool writeRawZip(
    const std::string &path,
    const std::vector<std::pair<std::string, std::vector<uint8_t>>> &members,
    bool deflate) {
  fs::remove(path);
  int code = 0;
  zip_t *archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  if (!archive)
    return false;
  for (const auto &[name, bytes] : members) {
    zip_source_t *source =
        zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    zip_int64_t index =
        source ? zip_file_add(archive, name.c_str(), source, 0) : -1;
    if (index < 0 ||
        zip_set_file_compression(
            archive, index, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) != 0) {
      zip_discard(archive);
      return false;
    }
  }
  return zip_close(archive) == 0;
}

static const DType kWritable[] = {
    DType::F32, DType::F64, DType::F16, DType::I8,  DType::I16, DType::I32,
    DType::I64, DType::U8,  DType::U16, DType::U32, DType::U64, DType::Bool};

static const std::vector<std::vector<int64_t>> kShapes = {
    {}, {0}, {3, 0, 2}, {5}, {2, 3, 4}, {1, 1, 1, 1, 7}};

static void testDTypes() {
  struct Case {
    DType dtype;
    size_t size;
    const char *name;
    const char *descr;
  };
  const Case cases[] = {
      {DType::F32, 4, "float32", "<f4"}, {DType::F64, 8, "float64", "<f8"},
      {DType::F16, 2, "float16", "<f2"}, {DType::BF16, 2, "bfloat16", nullptr},
      {DType::I8, 1, "int8", "|i1"},     {DType::I16, 2, "int16", "<i2"},
      {DType::I32, 4, "int32", "<i4"},   {DType::I64, 8, "int64", "<i8"},
      {DType::U8, 1, "uint8", "|u1"},    {DType::U16, 2, "uint16", "<u2"},
      {DType::U32, 4, "uint32", "<u4"},  {DType::U64, 8, "uint64", "<u8"},
      {DType::Bool, 1, "bool", "|b1"},
  };
  for (const Case &c : cases) {
    CHECK(itemSize(c.dtype) == c.size);
    CHECK(std::string(dtypeName(c.dtype)) == c.name);
    if (c.descr) {
      CHECK(numpyDescr(c.dtype) && std::string(numpyDescr(c.dtype)) == c.descr);
      CHECK(dtypeFromNumpyDescr(c.descr) == c.dtype);
    } else {
      CHECK(numpyDescr(c.dtype) == nullptr);
    }
  }
  // Byte order does not matter for single bytes.
  CHECK(dtypeFromNumpyDescr("<u1") == DType::U8);
  CHECK(dtypeFromNumpyDescr("|i1") == DType::I8);
  for (const char *bad : {">f4", "=f4", "|f4", "<f4 ", "f4", "", "|O", "<c8",
                          "<U5", "|V8", "<M8", "<b2", "<f16"})
    CHECK(!dtypeFromNumpyDescr(bad));

  Array a;
  CHECK(a.numel() == 1);
  a.shape = {3, 0, 5};
  CHECK(a.numel() == 0);
  a.shape = {4, 5};
  CHECK(a.numel() == 20);
  a.shape = {2, -1};
  CHECK(a.numel() == -1);
  a.shape = {INT64_MAX, 2};
  CHECK(a.numel() == -1);
}

static void testMemoryRoundTrip() {
  unsigned seed = 0;
  for (DType dtype : kWritable) {
    for (const auto &shape : kShapes) {
      Array in = makeArray("x", dtype, shape, ++seed);
      std::vector<uint8_t> bytes;
      std::string error;
      CHECK(serializeNpy(in, bytes, error));
      CHECK(error.empty());
      // Data starts on a 64-byte boundary, as with NumPy.
      CHECK((bytes.size() - in.data.size()) % 64 == 0);
      Array out;
      out.name = "x";
      CHECK(parseNpy(bytes.data(), bytes.size(), out, error));
      CHECK(sameArray(in, out));
    }
  }

  // Header text matches what NumPy writes.
  std::vector<uint8_t> bytes;
  std::string error;
  CHECK(serializeNpy(makeArray("s", DType::F32, {}, 1), bytes, error));
  std::string text(bytes.begin(), bytes.end());
  CHECK(text.find("{'descr': '<f4', 'fortran_order': False, 'shape': (), }") ==
        10);
  CHECK(serializeNpy(makeArray("v", DType::I64, {5}, 1), bytes, error));
  text.assign(bytes.begin(), bytes.end());
  CHECK(text.find("'shape': (5,), }") != std::string::npos);

  // Typed access.
  Array f = makeArray("f", DType::F32, {3}, 0);
  f.as<float>()[0] = 1.5f;
  f.as<float>()[1] = -2.0f;
  f.as<float>()[2] = 3.25f;
  CHECK(serializeNpy(f, bytes, error));
  Array g;
  CHECK(parseNpy(bytes.data(), bytes.size(), g, error));
  const Array &cg = g;
  CHECK(cg.as<float>()[0] == 1.5f && cg.as<float>()[1] == -2.0f &&
        cg.as<float>()[2] == 3.25f);
}

static void testHeaderVariants() {
  std::vector<uint8_t> data = {1, 0, 0, 0, 2, 0, 0, 0};
  std::string error;
  // Versions 2.0 and 3.0 use a 4-byte header length.
  for (unsigned major : {1u, 2u, 3u}) {
    auto bytes = rawNpy("{'descr': '<i4', 'fortran_order': False, "
                        "'shape': (2,), }",
                        data, major);
    Array a;
    CHECK(parseNpy(bytes.data(), bytes.size(), a, error));
    CHECK(a.dtype == DType::I32 && a.shape == std::vector<int64_t>{2});
    CHECK(a.as<int32_t>()[0] == 1 && a.as<int32_t>()[1] == 2);
  }
  // Other spellings Python's literal syntax allows.
  auto bytes = rawNpy("{\"shape\":(1,2L),\"descr\":\"<i4\",\"fortran_order\":"
                      "False}",
                      data);
  Array a;
  CHECK(parseNpy(bytes.data(), bytes.size(), a, error));
  CHECK((a.shape == std::vector<int64_t>{1, 2}));

  // Fortran order is reordered into C order.
  std::vector<uint8_t> fdata;
  std::vector<int64_t> shape = {2, 3, 4};
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i) {
        int32_t v = i * 100 + j * 10 + k;
        fdata.insert(fdata.end(), reinterpret_cast<uint8_t *>(&v),
                     reinterpret_cast<uint8_t *>(&v) + 4);
      }
  bytes = rawNpy("{'descr': '<i4', 'fortran_order': True, "
                 "'shape': (2, 3, 4), }",
                 fdata);
  CHECK(parseNpy(bytes.data(), bytes.size(), a, error));
  CHECK(a.shape == shape);
  bool ordered = a.data.size() == 96;
  for (int i = 0; ordered && i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        ordered &= a.as<int32_t>()[(i * 3 + j) * 4 + k] == i * 100 + j * 10 + k;
  CHECK(ordered);
}

static void testMalformedNpy() {
  std::string error;
  Array a;
  std::vector<uint8_t> data(8, 0);
  auto parse = [&](const std::vector<uint8_t> &bytes) {
    error.clear();
    return parseNpy(bytes.data(), bytes.size(), a, error, "t.npy");
  };
  auto header = [&](const std::string &dict) {
    return parse(rawNpy(dict, data));
  };

  CHECK_ERROR(parse({}), error, "t.npy: ", "truncated .npy header");
  CHECK_ERROR(parse({'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'}),
              error, "t.npy: ", "bad magic");
  CHECK_ERROR(parse({0x93, 'N', 'U', 'M'}), error,
              "t.npy: ", "truncated .npy header");
  CHECK_ERROR(parse({0x93, 'N', 'U', 'M', 'P', 'Y', 4, 0, 0, 0}), error,
              "t.npy: ", "unsupported .npy format version 4.0");
  CHECK_ERROR(parse({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0xff, 0x00}), error,
              "t.npy: ", "truncated header (expected 255 bytes, found 0)");
  CHECK_ERROR(parse({0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0, 0, 0, 0x10}),
              error, "t.npy: ", "header too large");

  CHECK_ERROR(header("not a dict"), error, "t.npy: ", "malformed .npy header");
  CHECK_ERROR(header("{'descr': '<f4', 'fortran_order': False}"), error,
              "t.npy: ", "missing key 'shape'");
  CHECK_ERROR(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                     "'extra': 1}"),
              error, "t.npy: ", "unexpected key 'extra'");
  CHECK_ERROR(header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': "
                     "False, 'shape': (2,)}"),
              error, "t.npy: ", "duplicate key 'descr'");
  CHECK_ERROR(header("{'descr': '<f4', 'fortran_order': maybe, 'shape': ()}"),
              error, "t.npy: ", "expected True or False");
  CHECK_ERROR(header("{'descr': '<f4, 'fortran_order': False, 'shape': ()}"),
              error, "t.npy: ", "malformed .npy header");
  CHECK_ERROR(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,"),
              error, "t.npy: ", "malformed .npy header");
  CHECK_ERROR(header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}"
                     " junk"),
              error, "t.npy: ", "unexpected text after the header dict");
  CHECK_ERROR(header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}"),
              error, "t.npy: ", "big-endian dtype '>f4' is not supported");
  CHECK_ERROR(header("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}"),
              error, "t.npy: ", "object arrays");
  CHECK_ERROR(header("{'descr': [('a', '<i4'), ('b', '<i4')], "
                     "'fortran_order': False, 'shape': (1,)}"),
              error, "t.npy: ", "structured dtypes are not supported");
  CHECK_ERROR(header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}"),
              error, "t.npy: ", "unsupported dtype '<c8'");
  CHECK_ERROR(
      header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}"), error,
      "t.npy: ", "negative dimension");
  CHECK_ERROR(header("{'descr': '<f4', 'fortran_order': False, "
                     "'shape': (99999999999999999999,)}"),
              error, "t.npy: ", "dimension too large");
  // Overflow in numel * itemsize, including alongside a zero dimension.
  CHECK_ERROR(header("{'descr': '<f8', 'fortran_order': False, "
                     "'shape': (4294967296, 4294967296)}"),
              error, "t.npy: ", "is too large");
  CHECK_ERROR(header("{'descr': '<f8', 'fortran_order': False, "
                     "'shape': (0, 4611686018427387904)}"),
              error, "t.npy: ", "is too large");
  // A huge but representable shape must not be allocated.
  CHECK_ERROR(header("{'descr': '<f4', 'fortran_order': False, "
                     "'shape': (1000000000000,)}"),
              error, "t.npy: ",
              "truncated data (expected 4000000000000 bytes, found 8)");
  CHECK_ERROR(header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}"),
              error, "t.npy: ",
              "data size does not match shape (1,) (expected 4 bytes, found "
              "8)");

  // Every truncation of a valid image fails cleanly.
  std::vector<uint8_t> bytes;
  CHECK(serializeNpy(makeArray("x", DType::F64, {3, 4}, 3), bytes, error));
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + len);
    bool ok = parse(cut);
    CHECK(!ok && error.rfind("t.npy: ", 0) == 0);
    if (len >= 128)
      CHECK(error == "t.npy: truncated data (expected 96 bytes, found " +
                         std::to_string(len - 128) + ")");
  }

  // A failed parse leaves the output untouched.
  Array keep = makeArray("keep", DType::U8, {2}, 1);
  Array before = keep;
  CHECK(!parseNpy(data.data(), data.size(), keep, error));
  CHECK(sameArray(keep, before));
}

static void testFiles(const std::string &dir) {
  std::string error;
  // .npy files.
  for (const auto &shape : kShapes) {
    Array in = makeArray("weights", DType::F32, shape, 5);
    std::string path = dir + "/weights.npy";
    CHECK(writeNpy(path, in, error));
    CHECK(!fs::exists(path + ".tmp"));
    Array out;
    CHECK(readNpy(path, out, error));
    CHECK(sameArray(in, out));
  }

  // .npz archives keep member order and every dtype and shape.
  std::vector<Array> arrays;
  unsigned seed = 0;
  const char *names[] = {"zeta", "alpha", "m/id", "b"};
  for (DType dtype : kWritable) {
    for (const auto &shape : kShapes) {
      std::string name = names[seed % 4] + ("_" + std::to_string(seed));
      arrays.push_back(makeArray(name, dtype, shape, seed));
      ++seed;
    }
  }
  std::string npz = dir + "/all.npz";
  CHECK(writeNpz(npz, arrays, error));
  CHECK(!fs::exists(npz + ".tmp"));
  std::vector<Array> back;
  CHECK(readNpz(npz, back, error));
  CHECK(back.size() == arrays.size());
  bool same = back.size() == arrays.size();
  for (size_t i = 0; same && i < arrays.size(); ++i)
    same = sameArray(arrays[i], back[i]);
  CHECK(same);

  // The same archive from memory.
  std::vector<uint8_t> image = readBytes(npz);
  back.clear();
  CHECK(parseNpz(image.data(), image.size(), back, error, "mem.npz"));
  CHECK(back.size() == arrays.size());

  // Members are stored uncompressed.
  int code = 0;
  zip_t *archive = zip_open(npz.c_str(), ZIP_RDONLY, &code);
  CHECK(archive);
  if (archive) {
    zip_stat_t st;
    CHECK(zip_stat_index(archive, 0, 0, &st) == 0);
    CHECK(st.comp_method == ZIP_CM_STORE);
    CHECK(std::string(st.name) == arrays[0].name + ".npy");
    zip_discard(archive);
  }

  // Deflated members (np.savez_compressed) are read too.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> raw;
  for (size_t i = 0; i < 4; ++i) {
    std::vector<uint8_t> bytes;
    CHECK(serializeNpy(arrays[i * 7], bytes, error));
    raw.emplace_back(arrays[i * 7].name + ".npy", bytes);
  }
  std::string deflated = dir + "/deflated.npz";
  CHECK(writeRawZip(deflated, raw, /*deflate=*/true));
  CHECK(readNpz(deflated, back, error));
  CHECK(back.size() == 4);
  for (size_t i = 0; i < 4 && back.size() == 4; ++i)
    CHECK(sameArray(back[i], arrays[i * 7]));

  // An archive with no members, as np.savez() writes it.
  std::string empty = dir + "/empty.npz";
  CHECK(writeNpz(empty, std::vector<Array>{}, error));
  CHECK(fs::file_size(empty) == 22);
  back.push_back(arrays[0]);
  CHECK(readNpz(empty, back, error));
  CHECK(back.empty());

  // Views write the caller's buffers: the same archive as from arrays.
  std::vector<ArrayView> views;
  for (const Array &a : arrays)
    views.push_back(
        {a.name, a.dtype, a.shape, a.data.data(), a.data.size(), false, {}});
  std::string viewed = dir + "/views.npz";
  CHECK(writeNpz(viewed, views, error));
  CHECK(readNpz(viewed, back, error));
  CHECK(back.size() == arrays.size());
  for (size_t i = 0; i < arrays.size() && back.size() == arrays.size(); ++i)
    CHECK(sameArray(back[i], arrays[i]));
  // A splat view repeats its one element.
  Array big;
  big.name = "big";
  big.dtype = DType::F64;
  big.shape = {3, 100001};
  big.data.resize(big.numel() * 8);
  double v = -1.25;
  for (int64_t i = 0; i < big.numel(); ++i)
    std::memcpy(big.data.data() + 8 * i, &v, 8);
  std::vector<ArrayView> splat = {
      {"big", DType::F64, big.shape, &v, big.data.size(), /*splat=*/true, {}}};
  CHECK(writeNpz(viewed, splat, error));
  CHECK(readNpz(viewed, back, error));
  CHECK(back.size() == 1 && sameArray(back[0], big));
  views[0].size += 1;
  CHECK_ERROR(writeNpz(viewed, views, error), error, viewed + ": member '",
              "data size does not match shape");

  // Overwriting replaces the old contents.
  CHECK(writeNpz(npz, {arrays[5]}, error));
  CHECK(readNpz(npz, back, error));
  CHECK(back.size() == 1 && sameArray(back[0], arrays[5]));
}

/// NpzReader reads parts of members; a streamed view is written from its
/// callback, and a failing callback fails the write with its message.
static void testRandomAccess(const std::string &dir) {
  std::string error;
  Array a;
  a.name = "w/exp_avg";
  a.dtype = DType::F32;
  a.shape = {7, 13};
  a.data.resize(a.numel() * 4);
  for (size_t i = 0; i < a.data.size(); ++i)
    a.data[i] = uint8_t(i * 13 + 5);
  std::string path = dir + "/access.npz";
  CHECK(writeNpz(path, std::vector<Array>{a}, error));
  NpzReader reader;
  CHECK(reader.open(path, error));
  const NpzReader::Member *m = reader.find("w/exp_avg");
  CHECK(m && m->dtype == DType::F32 && m->shape == a.shape &&
        m->bytes == a.data.size());
  if (!m)
    return;
  std::vector<uint8_t> part(40);
  CHECK(reader.read(*m, 100, part.data(), part.size(), error));
  CHECK(std::equal(part.begin(), part.end(), a.data.begin() + 100));
  CHECK_ERROR(reader.read(*m, a.data.size() - 8, part.data(), 40, error), error,
              path + ": member 'w/exp_avg.npy'", "past the end");
  Array whole;
  CHECK(reader.readArray(*m, whole, error) && sameArray(whole, a));
  CHECK(!reader.find("missing"));

  // Streamed: the callback is asked for every byte, in pieces.
  ArrayView streamed{"s", a.dtype, a.shape, nullptr, a.data.size(), false, {}};
  uint64_t asked = 0;
  streamed.read = [&](uint64_t off, void *out, size_t len, std::string &) {
    std::memcpy(out, a.data.data() + off, len);
    asked += len;
    return true;
  };
  std::vector<Array> back;
  CHECK(writeNpz(path, std::vector<ArrayView>{streamed}, error));
  CHECK(asked == a.data.size());
  CHECK(readNpz(path, back, error) && back.size() == 1);
  if (back.size() == 1) {
    back[0].name = a.name;
    CHECK(sameArray(back[0], a));
  }
  streamed.read = [](uint64_t, void *, size_t, std::string &err) {
    err = "shard 3 is gone";
    return false;
  };
  CHECK_ERROR(writeNpz(path, std::vector<ArrayView>{streamed}, error), error,
              "shard 3", "is gone");
  // The failed write left the earlier archive.
  CHECK(readNpz(path, back, error) && back.size() == 1);

  // A truncated archive does not open.
  std::string cut = dir + "/cut.npz";
  fs::copy_file(path, cut, fs::copy_options::overwrite_existing);
  fs::resize_file(cut, fs::file_size(cut) - 30);
  CHECK_ERROR(reader.open(cut, error), error, cut + ": ",
              "cannot open archive");
}

static void testMalformedFiles(const std::string &dir) {
  std::string error;
  std::vector<Array> arrays;
  Array array;

  std::string missing = dir + "/missing.npz";
  CHECK_ERROR(readNpz(missing, arrays, error), error, missing + ": ",
              "No such file");
  CHECK_ERROR(readNpy(dir + "/missing.npy", array, error), error,
              dir + "/missing.npy: ", "No such file");
  CHECK_ERROR(readNpz(dir, arrays, error), error, dir + ": ",
              "not a regular file");

  std::string garbage = dir + "/garbage.npz";
  writeBytes(garbage, "this is not a zip archive at all", 32);
  CHECK_ERROR(readNpz(garbage, arrays, error), error, garbage + ": ",
              "cannot open archive");
  CHECK_ERROR(readNpy(garbage, array, error), error, garbage + ": ",
              "bad magic");
  std::string empty = dir + "/zero.npz";
  writeBytes(empty, "", 0);
  CHECK_ERROR(readNpz(empty, arrays, error), error, empty + ": ",
              "cannot open archive");
  CHECK_ERROR(parseNpz("", 0, arrays, error, "m.npz"), error,
              "m.npz: ", "cannot open archive");

  // Every truncation of a valid archive fails cleanly.
  std::string npz = dir + "/t.npz";
  CHECK(writeNpz(npz,
                 {makeArray("a", DType::F32, {4, 4}, 1),
                  makeArray("b", DType::I64, {3}, 2)},
                 error));
  std::vector<uint8_t> image = readBytes(npz);
  std::string cut = dir + "/cut.npz";
  for (size_t len = 0; len < image.size(); ++len) {
    writeBytes(cut, image.data(), len);
    CHECK_ERROR(readNpz(cut, arrays, error), error, cut + ": ", "");
    CHECK_ERROR(parseNpz(image.data(), len, arrays, error, "m.npz"), error,
                "m.npz: ", "");
  }

  // A member whose data is shorter than its shape says.
  std::vector<uint8_t> shortData(12, 0);
  std::string data = dir + "/data.npz";
  for (bool deflate : {false, true}) {
    CHECK(writeRawZip(
        data,
        {{"x.npy", rawNpy("{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (4, 4), }",
                          shortData)}},
        deflate));
    CHECK(!readNpz(data, arrays, error));
    CHECK(error == data + ": member 'x.npy': truncated data (expected 64 "
                          "bytes, found 12)");
  }

  // A member that is not .npy at all.
  CHECK(writeRawZip(data, {{"notes.txt", {'h', 'i'}}}, false));
  CHECK_ERROR(readNpz(data, arrays, error), error,
              data + ": member 'notes.txt': ", "bad magic");
  CHECK(writeRawZip(
      data,
      {{"ok.npy", rawNpy("{'descr': '<f4', 'fortran_order': False, "
                         "'shape': (1,), }",
                         {0, 0, 0x80, 0x3f})},
       {"bad.npy", rawNpy("{'descr': '>f4', 'fortran_order': False, "
                          "'shape': (1,), }",
                          {0, 0, 0x80, 0x3f})}},
      false));
  CHECK_ERROR(readNpz(data, arrays, error), error,
              data + ": member 'bad.npy': ", "big-endian");

  // Corrupted member data is caught by the CRC check.
  Array victim = makeArray("v", DType::U8, {200}, 9);
  CHECK(writeNpz(npz, {victim}, error));
  image = readBytes(npz);
  auto at = std::search(image.begin(), image.end(), victim.data.begin(),
                        victim.data.end());
  CHECK(at != image.end());
  if (at != image.end()) {
    at[50] ^= 0xff;
    writeBytes(npz, image);
    CHECK_ERROR(readNpz(npz, arrays, error), error,
                npz + ": member 'v.npy': ", "CRC");
  }
}

static void testWriteErrors(const std::string &dir) {
  std::string error;
  std::string path = dir + "/w.npz";
  Array good = makeArray("good", DType::F32, {2, 2}, 1);
  CHECK(writeNpz(path, {good}, error));
  auto original = readBytes(path);

  Array bf16 = makeArray("h", DType::BF16, {2}, 1);
  CHECK_ERROR(writeNpz(path, {good, bf16}, error), error,
              path + ": member 'h.npy': ", "bfloat16 has no NumPy equivalent");
  std::vector<uint8_t> bytes;
  CHECK_ERROR(serializeNpy(bf16, bytes, error), error,
              "<memory>: ", "bfloat16");
  CHECK_ERROR(writeNpy(dir + "/h.npy", bf16, error), error,
              dir + "/h.npy: ", "bfloat16");
  CHECK(!fs::exists(dir + "/h.npy"));

  Array wrongSize = good;
  wrongSize.data.pop_back();
  CHECK_ERROR(writeNpz(path, {wrongSize}, error), error,
              path + ": member 'good.npy': ",
              "data size does not match shape (2, 2) of float32 (expected 16 "
              "bytes, found 15)");
  Array negative = good;
  negative.shape = {-1, 2};
  CHECK_ERROR(writeNpz(path, {negative}, error), error, path + ": ",
              "invalid shape (-1, 2)");
  CHECK_ERROR(writeNpz(path, {good, good}, error), error,
              path + ": member 'good.npy': ", "duplicate array name");
  Array unnamed = good;
  unnamed.name.clear();
  CHECK_ERROR(writeNpz(path, {unnamed}, error), error, path + ": ",
              "empty name");
  Array invalid = good;
  invalid.dtype = static_cast<DType>(99);
  CHECK_ERROR(writeNpz(path, {invalid}, error), error, path + ": ",
              "invalid dtype");

  // Failed writes leave the existing file alone and no temporary behind.
  CHECK(readBytes(path) == original);
  CHECK(!fs::exists(path + ".tmp"));

  std::string noDir = dir + "/no/such/dir/x.npz";
  CHECK_ERROR(writeNpz(noDir, {good}, error), error, noDir + ": ", "");
  CHECK_ERROR(writeNpy(dir + "/no/such/dir/x.npy", good, error), error,
              dir + "/no/such/dir/x.npy: ", "No such file");

  // The rename onto a directory fails after the data was written.
  std::string target = dir + "/adir";
  fs::create_directory(target);
  fs::create_directory(target + "/keep");
  CHECK_ERROR(writeNpz(target, {good}, error), error, target + ": ",
              "cannot rename");
  CHECK(!fs::exists(target + ".tmp"));
  CHECK_ERROR(writeNpy(target, good, error), error, target + ": ",
              "cannot rename");
  CHECK(!fs::exists(target + ".tmp"));
}

/// Random corruption must produce errors, never crashes.
static void testFuzz() {
  std::mt19937 rng(1234);
  std::vector<uint8_t> npy;
  std::string error;
  CHECK(serializeNpy(makeArray("f", DType::I16, {3, 5}, 2), npy, error));
  std::vector<Array> arrays;
  Array array;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> bytes = npy;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i)
      bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    if (!parseNpy(bytes.data(), bytes.size(), array, error))
      CHECK(!error.empty() && error.find('\n') == std::string::npos);
  }
}

static void testFuzzNpz(const std::string &dir) {
  std::string error;
  std::string path = dir + "/fuzz.npz";
  CHECK(writeNpz(path,
                 {makeArray("a", DType::F32, {4}, 1),
                  makeArray("b", DType::U8, {3, 2}, 2)},
                 error));
  std::vector<uint8_t> image = readBytes(path);
  std::mt19937 rng(99);
  std::vector<Array> arrays;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> bytes = image;
    int flips = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < flips; ++i)
      bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    if (!parseNpz(bytes.data(), bytes.size(), arrays, error, "f.npz"))
      CHECK(error.rfind("f.npz: ", 0) == 0 &&
            error.find('\n') == std::string::npos);
  }
}

int main() {
  char pattern[] = "/tmp/npztest.XXXXXX";
  if (!mkdtemp(pattern)) {
    std::perror("mkdtemp");
    return 2;
  }
  std::string dir = pattern;

  testDTypes();
  testMemoryRoundTrip();
  testHeaderVariants();
  testMalformedNpy();
  testFiles(dir);
  testRandomAccess(dir);
  testMalformedFiles(dir);
  testWriteErrors(dir);
  testFuzz();
  testFuzzNpz(dir);

  std::error_code ec;
  fs::remove_all(dir, ec);
  if (failures) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("all npz tests passed\n");
  return 0;
}
