//===- Batches.cpp - slicing data arrays into step batches -----*- C++ -*-===//
#include "zero-rt/Batches.h"

#include <algorithm>
#include <cstring>

using namespace zero::rt;

static std::string shapeStr(const std::vector<int64_t> &s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

bool Batches::bind(const Function &fn, std::vector<Array> data,
                   std::string &error) {
  arrays = std::move(data);
  argToData.assign(fn.arguments.size(), -1);
  n = -1;
  batch = -1;
  for (size_t i = 0; i < fn.arguments.size(); ++i) {
    const BufferSpec &spec = fn.arguments[i];
    if (spec.role != "input")
      continue;
    auto it = std::find_if(arrays.begin(), arrays.end(),
                           [&](const Array &a) { return a.name == spec.name; });
    if (it == arrays.end()) {
      error = "the data has no array '" + spec.name +
              "' for the input of "
              "that name";
      return false;
    }
    if (spec.shape.empty()) {
      error = "input '" + spec.name +
              "' is a scalar; it has no batch "
              "dimension to slice";
      return false;
    }
    std::vector<int64_t> want(spec.shape.begin() + 1, spec.shape.end());
    if (it->dtype != spec.dtype || it->shape.empty() ||
        std::vector<int64_t>(it->shape.begin() + 1, it->shape.end()) != want) {
      std::string trail;
      for (int64_t d : want)
        trail += ", " + std::to_string(d);
      error = "data array '" + spec.name + "' is " + dtypeName(it->dtype) +
              " " + shapeStr(it->shape) + " but the input needs " +
              dtypeName(spec.dtype) + " (samples" + trail + ")";
      return false;
    }
    if (it->shape[0] == 0) {
      error = "data array '" + spec.name + "' has no samples";
      return false;
    }
    if (n >= 0 && it->shape[0] != n) {
      error = "data arrays disagree on the number of samples (" +
              std::to_string(n) + " and " + std::to_string(it->shape[0]) +
              " for '" + spec.name + "')";
      return false;
    }
    if (batch >= 0 && spec.shape[0] != batch) {
      error = "inputs disagree on the batch size";
      return false;
    }
    n = it->shape[0];
    batch = spec.shape[0];
    argToData[i] = it - arrays.begin();
  }
  if (n < 0) {
    error = "the step has no data inputs";
    return false;
  }
  return true;
}

void Batches::copyRows(size_t i, int64_t first, int64_t count,
                       void *dst) const {
  const Array &a = arrays[i];
  size_t row = a.numel() / a.shape[0] * a.itemSize();
  char *out = static_cast<char *>(dst);
  for (int64_t r = 0; r < count; ++r) {
    int64_t src = (first + r) % n;
    std::memcpy(out + r * row, a.data.data() + src * row, row);
  }
}
