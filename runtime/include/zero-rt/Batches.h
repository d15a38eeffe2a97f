//===- Batches.h - slicing data arrays into step batches --------*- C++ -*-===//
#ifndef ZERO_RT_BATCHES_H
#define ZERO_RT_BATCHES_H

#include "zero-rt/Step.h"

namespace zero::rt {

/// The data arrays feeding a step's inputs, matched and checked by name.
class Batches {
public:
  /// Matches `data` to the step's inputs: one array per input with the
  /// input's dtype, trailing shape and a common number of samples.
  bool bind(const Function &fn, std::vector<Array> data, std::string &error);

  int64_t samples() const { return n; }
  int64_t batchSize() const { return batch; }
  /// Copies rows [first, first + count) modulo the sample count of input
  /// `i` into `dst`.
  void copyRows(size_t i, int64_t first, int64_t count, void *dst) const;
  /// Index of the data array bound to argument `arg`, or -1.
  int inputFor(size_t arg) const { return argToData[arg]; }

private:
  std::vector<Array> arrays;
  std::vector<int> argToData;
  int64_t n = 0, batch = 0;
};

} // namespace zero::rt

#endif
