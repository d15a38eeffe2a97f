//===- Step.h - loading and calling a compiled step -------------*- C++ -*-===//
//
// Reads OUT/plan.json, loads OUT/step.so and calls its entry with one
// buffer per argument and result, in the plan's order.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_STEP_H
#define ZERO_RT_STEP_H

#include "zero-rt/Npz.h"

#include <string>
#include <vector>

namespace zero::rt {

struct BufferSpec {
  std::string name;
  std::string role;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t numel() const;
  size_t bytes() const { return numel() * itemSize(dtype); }
};

class Step {
public:
  Step() = default;
  Step(const Step &) = delete;
  Step &operator=(const Step &) = delete;
  ~Step();

  /// Loads the compiled step in folder `dir`; false with `error` set.
  bool load(const std::string &dir, std::string &error);

  const std::vector<BufferSpec> &arguments() const { return args; }
  const std::vector<BufferSpec> &results() const { return results_; }
  const std::string &dir() const { return dir_; }
  int worldSize() const { return worldSize_; }

  /// Calls the step. `buffers` holds arguments then results, each sized as
  /// its spec.
  void run(void **buffers) const { entry(buffers); }

  /// Initial parameters from OUT/params.npz, by argument index.
  bool loadParameters(std::vector<Array> &params, std::string &error) const;

private:
  std::string dir_;
  std::vector<BufferSpec> args, results_;
  std::string paramsFile;
  int worldSize_ = 1;
  void *handle = nullptr;
  void (*entry)(void **) = nullptr;
};

/// An Array shaped and typed as `spec`, zero-filled.
Array makeArray(const BufferSpec &spec);

} // namespace zero::rt

#endif
