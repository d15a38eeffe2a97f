//===- Float16Builtins.cpp - bf16 helpers the host's libgcc lacks -*- C++
//-*-===//
//
// x86 without AVX512-BF16 keeps bf16 values in f32 registers and stores
// them through a compiler-runtime helper, __truncsfbf2, which GCC 13's
// libgcc has and Debian 12's does not. Generated host code that moves bf16
// vectors (the CUDA target's host copies of its attention kernels) calls
// it; the value is always a bf16 already, so the rounding is exact.
//
//===----------------------------------------------------------------------===//
#include "zero-rt/Float16.h"

#include <cstring>

extern "C" __attribute__((weak, visibility("default"))) __bf16
__truncsfbf2(float f) {
  uint16_t bits = zero::rt::floatToBF16(f);
  __bf16 r;
  std::memcpy(&r, &bits, sizeof r);
  return r;
}
