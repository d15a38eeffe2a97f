//===- GemmLayouts.h - operand layouts for the CUDA GEMM tests --*- C++ -*-===//
//
// The strided operands the compiler may pass (every storage order of batch
// and matrix dimensions, padding, broadcast batches), the documented rule
// for which of them the CUDA runtime accepts, and a double reference loop
// over the same strides.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_TESTS_GEMM_LAYOUTS_H
#define ZERO_RT_TESTS_GEMM_LAYOUTS_H

#include "zero-rt/Float16.h"
#include "zero-rt/RuntimeCUDA.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace zero::rt::test {

/// Element (i, j, r, c) at off + i*s[0] + j*s[1] + r*s[2] + c*s[3].
struct View {
  int64_t off, s[4];
  int64_t at(int64_t i, int64_t j, int64_t r, int64_t c) const {
    return off + i * s[0] + j * s[1] + r * s[2] + c * s[3];
  }
};

/// Storage orders (outermost first) of (batch0, batch1, rows, cols).
inline const int kOrders[][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3},
                                 {0, 3, 1, 2}, {2, 0, 1, 3}, {0, 2, 3, 1},
                                 {3, 2, 1, 0}};
inline const int kNumOrders = sizeof(kOrders) / sizeof(kOrders[0]);

/// A dense buffer of `ext` stored in `order` with `pad` elements after each
/// innermost run; batch 0 broadcast when asked. Returns its elements.
inline int64_t layout(const int64_t (&ext)[4], const int (&order)[4],
                      bool broadcast0, int64_t pad, View &v) {
  int64_t stride = 1;
  for (int d = 3; d >= 0; --d) {
    v.s[order[d]] = stride;
    stride *= ext[order[d]];
    if (d == 3)
      stride += pad;
  }
  v.off = 3;
  if (broadcast0)
    v.s[0] = 0;
  return v.off + stride;
}

/// RuntimeCUDA.h's rule: a unit stride along one matrix dimension and a
/// stride along the other of at least that one's extent (size-1
/// dimensions need neither).
inline bool supported(int64_t rows, int64_t cols, int64_t sRow, int64_t sCol) {
  return ((sCol == 1 || cols <= 1) && (rows <= 1 || sRow >= cols)) ||
         ((sRow == 1 || rows <= 1) && (cols <= 1 || sCol >= rows));
}

/// `x` rounded to `type` (ZERO_RT_F64 and _F32 keep it).
inline float roundTo(float x, int32_t type) {
  if (type == ZERO_RT_BF16)
    return bf16ToFloat(floatToBF16(x));
  if (type == ZERO_RT_F16)
    return f16ToFloat(floatToF16(x));
  return x;
}

/// How far a 16-bit C of `type` may be from the reference `ref` rounded
/// alike: a unit in the last place (f32 sums in another order may round
/// the other way; an f16 subnormal's included), else 0.
inline double roundingSlack(int32_t type, double ref) {
  if (type == ZERO_RT_BF16)
    return std::fabs(ref) * 0x1p-7 + 0x1p-133;
  if (type == ZERO_RT_F16)
    return std::fabs(ref) * 0x1p-10 + 0x1p-24;
  return 0;
}

struct GemmCase {
  int64_t b0, b1, m, n, k;
  View va, vb, vc;
  int64_t sa, sb, sc; ///< buffer sizes in elements
  bool accumulate;

  bool isSupported() const {
    bool c = supported(m, n, vc.s[2], vc.s[3]);
    if (k == 0)
      return c;
    return c && supported(m, k, va.s[2], va.s[3]) &&
           supported(k, n, vb.s[2], vb.s[3]);
  }

  /// C after the GEMM, batch by batch in order (a C batch stride of 0
  /// accumulates every batch), each product's result rounded to C's
  /// `cType`, and per element the sum of the magnitudes that bounds its
  /// rounding error.
  void reference(const std::vector<float> &A, const std::vector<float> &B,
                 const std::vector<float> &C, std::vector<double> &out,
                 std::vector<double> &bound,
                 int32_t cType = ZERO_RT_F64) const {
    out.assign(C.begin(), C.end());
    bound.assign(C.size(), 0.0);
    for (int64_t i = 0; i < b0; ++i)
      for (int64_t j = 0; j < b1; ++j)
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < n; ++c) {
            int64_t e = vc.at(i, j, r, c);
            double sum = accumulate ? out[e] : 0.0;
            double mag = accumulate ? std::fabs(out[e]) + bound[e] : 0.0;
            for (int64_t l = 0; l < k; ++l) {
              double p = double(A[va.at(i, j, r, l)]) * B[vb.at(i, j, l, c)];
              sum += p;
              mag += std::fabs(p);
            }
            out[e] = cType == ZERO_RT_BF16 || cType == ZERO_RT_F16
                         ? roundTo(float(sum), cType)
                         : sum;
            bound[e] = mag;
          }
  }
};

/// A random case from `next` (a uniform integer source).
template <typename Rng> GemmCase randomCase(Rng &next, int64_t maxDim) {
  GemmCase g;
  g.b0 = 1 + next() % 3;
  g.b1 = 1 + next() % 3;
  g.m = 1 + next() % maxDim;
  g.n = 1 + next() % maxDim;
  g.k = 1 + next() % maxDim;
  g.accumulate = next() % 2;
  int64_t aExt[4] = {g.b0, g.b1, g.m, g.k}, bExt[4] = {g.b0, g.b1, g.k, g.n},
          cExt[4] = {g.b0, g.b1, g.m, g.n};
  g.sa = layout(aExt, kOrders[next() % kNumOrders], next() % 4 == 0, next() % 3,
                g.va);
  g.sb = layout(bExt, kOrders[next() % kNumOrders], next() % 4 == 0, next() % 3,
                g.vb);
  // The product's batches are never broadcast: each is written once.
  g.sc = layout(cExt, kOrders[next() % kNumOrders], false, next() % 3, g.vc);
  return g;
}

/// Fixed cases: large row- and column-major operands with padding and a
/// broadcast B, every batch into one C, and k = 0.
inline std::vector<GemmCase> fixedCases() {
  std::vector<GemmCase> cases;
  const int rowMajor[4] = {0, 1, 2, 3}, colMajor[4] = {0, 1, 3, 2};
  for (int variant = 0; variant < 4; ++variant) {
    GemmCase g;
    g.b0 = variant == 3 ? 2 : 1;
    g.b1 = variant == 3 ? 3 : 1;
    g.m = 131;
    g.n = 97;
    g.k = 263;
    g.accumulate = variant % 2;
    int64_t aExt[4] = {g.b0, g.b1, g.m, g.k}, bExt[4] = {g.b0, g.b1, g.k, g.n},
            cExt[4] = {g.b0, g.b1, g.m, g.n};
    g.sa = layout(aExt, variant == 1 ? colMajor : rowMajor, false, 5, g.va);
    g.sb =
        layout(bExt, variant == 1 ? colMajor : rowMajor, variant == 3, 0, g.vb);
    if (variant == 3)
      g.vb.s[1] = 0; // broadcast over both batch loops
    g.sc = layout(cExt, variant == 2 ? colMajor : rowMajor, false, 3, g.vc);
    cases.push_back(g);
  }
  {
    GemmCase g{2, 3, 17, 19, 23, {}, {}, {}, 0, 0, 0, true};
    int64_t aExt[4] = {2, 3, 17, 23}, bExt[4] = {2, 3, 23, 19},
            cExt[4] = {1, 1, 17, 19};
    g.sa = layout(aExt, rowMajor, false, 0, g.va);
    g.sb = layout(bExt, rowMajor, false, 0, g.vb);
    g.sc = layout(cExt, rowMajor, false, 0, g.vc);
    g.vc.s[0] = g.vc.s[1] = 0;
    cases.push_back(g);
  }
  for (int acc = 0; acc < 2; ++acc) {
    GemmCase g{1, 1, 5, 7, 0, {}, {}, {}, 0, 0, 0, acc == 1};
    int64_t aExt[4] = {1, 1, 5, 0}, bExt[4] = {1, 1, 0, 7},
            cExt[4] = {1, 1, 5, 7};
    g.sa = layout(aExt, rowMajor, false, 0, g.va);
    g.sb = layout(bExt, rowMajor, false, 0, g.vb);
    g.sc = layout(cExt, rowMajor, false, 0, g.vc);
    cases.push_back(g);
  }
  return cases;
}

/// `v` stored as `type` (ZERO_RT_F64, _F32, _BF16, _F16), each value
/// rounded to it.
inline std::vector<char> encode(const std::vector<float> &v, int32_t type) {
  size_t es = type == ZERO_RT_F64 ? 8 : type == ZERO_RT_F32 ? 4 : 2;
  std::vector<char> out(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    char *p = out.data() + i * es;
    if (type == ZERO_RT_F64) {
      double d = v[i];
      std::memcpy(p, &d, 8);
    } else if (type == ZERO_RT_F32) {
      std::memcpy(p, &v[i], 4);
    } else {
      uint16_t h = type == ZERO_RT_BF16 ? floatToBF16(v[i]) : floatToF16(v[i]);
      std::memcpy(p, &h, 2);
    }
  }
  return out;
}

/// `g` through the CUDA runtime's GEMM for `type` (sgemm, dgemm, or gemm16
/// for bf16 and f16 with C of `cType`) on the buffers at `a`, `b` and `c`;
/// its status.
inline int32_t runCudaGemm(const GemmCase &g, int32_t type, int64_t a,
                           int64_t b, int64_t c, int32_t cType = ZERO_RT_F32) {
  if (type == ZERO_RT_BF16 || type == ZERO_RT_F16)
    return zero_rt_cuda_gemm16(type, cType, g.b0, g.b1, g.m, g.n, g.k, a,
                               g.va.off, g.va.s[0], g.va.s[1], g.va.s[2],
                               g.va.s[3], b, g.vb.off, g.vb.s[0], g.vb.s[1],
                               g.vb.s[2], g.vb.s[3], c, g.vc.off, g.vc.s[0],
                               g.vc.s[1], g.vc.s[2], g.vc.s[3], g.accumulate);
  auto run = type == ZERO_RT_F64 ? zero_rt_cuda_dgemm : zero_rt_cuda_sgemm;
  return run(g.b0, g.b1, g.m, g.n, g.k, a, g.va.off, g.va.s[0], g.va.s[1],
             g.va.s[2], g.va.s[3], b, g.vb.off, g.vb.s[0], g.vb.s[1], g.vb.s[2],
             g.vb.s[3], c, g.vc.off, g.vc.s[0], g.vc.s[1], g.vc.s[2], g.vc.s[3],
             g.accumulate);
}

} // namespace zero::rt::test

#endif
