//===- Float16.h - bfloat16 and IEEE half conversions -----------*- C++ -*-===//
//
// Bit-exact conversions between f32 and the two 16-bit float formats the
// runtime stores: widening is exact, narrowing rounds to nearest even (NaN
// stays NaN), as the compiled steps round.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_FLOAT16_H
#define ZERO_RT_FLOAT16_H

#include <cstdint>
#include <cstring>

namespace zero::rt {

inline float bf16ToFloat(uint16_t x) {
  uint32_t bits = uint32_t(x) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

inline float f16ToFloat(uint16_t x) {
  _Float16 h;
  std::memcpy(&h, &x, 2);
  return float(h);
}

inline uint16_t floatToF16(float f) {
  _Float16 h = _Float16(f);
  uint16_t x;
  std::memcpy(&x, &h, 2);
  return x;
}

} // namespace zero::rt

#endif
