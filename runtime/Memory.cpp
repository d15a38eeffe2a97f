//===- Memory.cpp - bytes allocated per category ---------------*- C++ -*-===//
#include "zero-rt/Memory.h"

#include <algorithm>
#include <cstring>

using namespace zero::rt;

static MemStats stats;

static const char *const names[ZERO_RT_MEM_NUM_CATEGORIES] = {
    "parameters",  "gradients", "optimizer_state",
    "activations", "buffers",   "other"};

const char *zero::rt::memoryCategoryName(int category) {
  return category >= 0 && category < ZERO_RT_MEM_NUM_CATEGORIES
             ? names[category]
             : "other";
}

int zero::rt::memoryCategoryOf(const std::string &name) {
  for (int c = 0; c < ZERO_RT_MEM_NUM_CATEGORIES; ++c)
    if (name == names[c])
      return c;
  return -1;
}

void zero::rt::memTrack(int category, int64_t bytes) {
  if (category < 0 || category >= ZERO_RT_MEM_NUM_CATEGORIES)
    category = ZERO_RT_MEM_OTHER;
  stats.live[category] += bytes;
  stats.peak[category] = std::max(stats.peak[category], stats.live[category]);
  stats.total += bytes;
  stats.totalPeak = std::max(stats.totalPeak, stats.total);
}

void zero::rt::memUntrack(int category, int64_t bytes) {
  if (category < 0 || category >= ZERO_RT_MEM_NUM_CATEGORIES)
    category = ZERO_RT_MEM_OTHER;
  stats.live[category] -= bytes;
  stats.total -= bytes;
}

const MemStats &zero::rt::memStats() { return stats; }

extern "C" void zero_rt_mem_alloc(int32_t category, int64_t bytes) {
  memTrack(category, bytes);
}

extern "C" void zero_rt_mem_free(int32_t category, int64_t bytes) {
  memUntrack(category, bytes);
}
