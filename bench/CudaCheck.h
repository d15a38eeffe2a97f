//===- CudaCheck.h - end a GPU bench at its first failed call -*- C++ -*-===//
#ifndef ZERO_OPT_BENCH_CUDACHECK_H
#define ZERO_OPT_BENCH_CUDACHECK_H

#include <cstdio>
#include <cstdlib>

/// Evaluates a CUDA runtime or cuBLAS call; any status but 0 ends the run
/// with the status and the line.
#define CHECK(x)                                                               \
  do {                                                                         \
    auto err_ = (x);                                                           \
    if (err_) {                                                                \
      std::printf("error %d at %s:%d\n", (int)err_, __FILE__, __LINE__);       \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#endif // ZERO_OPT_BENCH_CUDACHECK_H
