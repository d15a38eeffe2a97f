//===- Runtime.cpp - runtime-wide entry points -----------------*- C++ -*-===//
#include "zero-rt/Runtime.h"

extern "C" int32_t zero_rt_abi_version(void) { return ZERO_RT_ABI_VERSION; }
