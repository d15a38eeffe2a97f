//===- Memory.h - bytes allocated per category ------------------*- C++ -*-===//
#ifndef ZERO_RT_MEMORY_H
#define ZERO_RT_MEMORY_H

#include "zero-rt/Runtime.h"

#include <array>
#include <cstdint>
#include <string>

namespace zero::rt {

struct MemStats {
  std::array<int64_t, ZERO_RT_MEM_NUM_CATEGORIES> live{}, peak{};
  int64_t total = 0, totalPeak = 0;
};

/// The plan's name of a category ("parameters", ...), and back (-1 when
/// unknown).
const char *memoryCategoryName(int category);
int memoryCategoryOf(const std::string &name);

/// Counts buffers the host allocates for a step (its arguments and
/// results); the step itself counts its temporaries.
void memTrack(int category, int64_t bytes);
void memUntrack(int category, int64_t bytes);
const MemStats &memStats();

} // namespace zero::rt

#endif
