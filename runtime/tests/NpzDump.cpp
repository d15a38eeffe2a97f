//===- NpzDump.cpp - Print or copy .npy/.npz files ------------------------===//
//
// Helper for npz_numpy_check.py.
//
//   NpzDump FILE...        For every array, print one tab-separated line:
//                          name, dtype, shape, sum, CRC-32 of the C-order data.
//   NpzDump --copy IN OUT  Read IN and write its arrays to OUT (.npz, or .npy
//                          when OUT ends in .npy and IN holds one array).
//   NpzDump --many N OUT   Write an .npz with N small int32 arrays a0..aN-1,
//                          where a<i> = [i, -i].
//
// Exits with status 1 and a message on stderr if anything fails.
//
//===----------------------------------------------------------------------===//

#include "zero-rt/Float16.h"
#include "zero-rt/Npz.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace zero::rt;

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

static bool readAny(const std::string &path, std::vector<Array> &arrays,
                    std::string &error) {
  if (!endsWith(path, ".npy"))
    return readNpz(path, arrays, error);
  Array array;
  if (!readNpy(path, array, error))
    return false;
  arrays = {std::move(array)};
  return true;
}

static uint32_t crc32(const std::vector<uint8_t> &data) {
  uint32_t crc = 0xffffffffu;
  for (uint8_t byte : data) {
    crc ^= byte;
    for (int i = 0; i < 8; ++i)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

template <class T> static double sumAs(const Array &array) {
  double sum = 0;
  const T *p = array.as<T>();
  for (int64_t i = 0, e = array.numel(); i < e; ++i)
    sum += static_cast<double>(p[i]);
  return sum;
}

static double sum(const Array &array) {
  switch (array.dtype) {
  case DType::F32:
    return sumAs<float>(array);
  case DType::F64:
    return sumAs<double>(array);
  case DType::F16:
  case DType::BF16: {
    double sum = 0;
    const uint16_t *p = array.as<uint16_t>();
    for (int64_t i = 0, e = array.numel(); i < e; ++i)
      sum += array.dtype == DType::F16 ? f16ToFloat(p[i]) : bf16ToFloat(p[i]);
    return sum;
  }
  case DType::I8:
    return sumAs<int8_t>(array);
  case DType::I16:
    return sumAs<int16_t>(array);
  case DType::I32:
    return sumAs<int32_t>(array);
  case DType::I64:
    return sumAs<int64_t>(array);
  case DType::U8:
  case DType::Bool:
    return sumAs<uint8_t>(array);
  case DType::U16:
    return sumAs<uint16_t>(array);
  case DType::U32:
    return sumAs<uint32_t>(array);
  case DType::U64:
    return sumAs<uint64_t>(array);
  }
  return NAN;
}

static int fail(const std::string &error) {
  std::fprintf(stderr, "NpzDump: %s\n", error.c_str());
  return 1;
}

int main(int argc, char **argv) {
  std::string error;
  if (argc == 4 && std::strcmp(argv[1], "--copy") == 0) {
    std::vector<Array> arrays;
    if (!readAny(argv[2], arrays, error))
      return fail(error);
    std::string out = argv[3];
    if (!endsWith(out, ".npy"))
      return writeNpz(out, arrays, error) ? 0 : fail(error);
    if (arrays.size() != 1)
      return fail(out + ": a .npy file holds exactly one array");
    return writeNpy(out, arrays[0], error) ? 0 : fail(error);
  }
  if (argc == 4 && std::strcmp(argv[1], "--many") == 0) {
    long count = std::strtol(argv[2], nullptr, 10);
    std::vector<Array> arrays(static_cast<size_t>(count));
    for (long i = 0; i < count; ++i) {
      Array &a = arrays[i];
      a.name = "a" + std::to_string(i);
      a.dtype = DType::I32;
      a.shape = {2};
      a.data.resize(8);
      a.as<int32_t>()[0] = static_cast<int32_t>(i);
      a.as<int32_t>()[1] = static_cast<int32_t>(-i);
    }
    return writeNpz(argv[3], arrays, error) ? 0 : fail(error);
  }
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: NpzDump FILE... | --copy IN OUT | "
                         "--many N OUT\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    std::vector<Array> arrays;
    if (!readAny(argv[i], arrays, error))
      return fail(error);
    for (const Array &array : arrays) {
      std::string shape = "[";
      for (size_t d = 0; d < array.shape.size(); ++d)
        shape += (d ? "," : "") + std::to_string(array.shape[d]);
      shape += "]";
      std::printf("%s\t%s\t%s\t%.17g\t%08x\n", array.name.c_str(),
                  dtypeName(array.dtype), shape.c_str(), sum(array),
                  crc32(array.data));
    }
  }
  return 0;
}
