//===- GemmTest.cpp - the CPU GEMMs against a reference loop ------------===//
//
// Every operand layout the compiler passes (row-major, transposed, no unit
// stride, permuted batch dimensions, broadcast batches), with and without
// accumulation, against a triple loop over the same strides in a wider
// type. Exits non-zero on any mismatch.
//
//===----------------------------------------------------------------------===//

#include "zero-rt/Float16.h"
#include "zero-rt/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

namespace {
/// A view: element (i, j, r, c) is at off + i*s[0] + j*s[1] + r*s[2] + c*s[3].
struct View {
  int64_t off, s[4];
  int64_t at(int64_t i, int64_t j, int64_t r, int64_t c) const {
    return off + i * s[0] + j * s[1] + r * s[2] + c * s[3];
  }
};

/// The strides of a dense buffer holding (b0, b1, rows, cols) in the
/// storage order `order` (outermost first, a permutation of 0..3), with
/// `pad` unused elements after each innermost run (a leading dimension
/// larger than the extent) and the outer batch broadcast (stride 0) when
/// `broadcast0`. Returns the buffer's size in elements.
int64_t layout(const int64_t (&ext)[4], const int (&order)[4], bool broadcast0,
               int64_t pad, View &v) {
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

/// A random GEMM: batch loops, sizes, accumulation, and each operand's
/// view in one of the storage orders (padded, A's and B's outer batch
/// sometimes broadcast) with its buffer's size in elements.
struct Problem {
  int64_t b0, b1, m, n, k;
  bool accumulate;
  View va, vb, vc;
  int64_t sa, sb, sc;
};

Problem randomProblem(std::mt19937 &rng) {
  static const int orders[][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 1, 3},
                                  {0, 3, 1, 2}, {2, 0, 1, 3}, {0, 2, 3, 1},
                                  {3, 2, 1, 0}};
  const int nOrders = sizeof(orders) / sizeof(orders[0]);
  Problem p;
  p.b0 = 1 + rng() % 3;
  p.b1 = 1 + rng() % 3;
  p.m = 1 + rng() % 7;
  p.n = 1 + rng() % 7;
  p.k = 1 + rng() % 7;
  p.accumulate = rng() % 2;
  int64_t aExt[4] = {p.b0, p.b1, p.m, p.k}, bExt[4] = {p.b0, p.b1, p.k, p.n},
          cExt[4] = {p.b0, p.b1, p.m, p.n};
  p.sa = layout(aExt, orders[rng() % nOrders], rng() % 4 == 0, rng() % 3, p.va);
  p.sb = layout(bExt, orders[rng() % nOrders], rng() % 4 == 0, rng() % 3, p.vb);
  // The product's batches are never broadcast: each is written once.
  p.sc = layout(cExt, orders[rng() % nOrders], false, rng() % 3, p.vc);
  return p;
}

using GemmFn = void (*)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                        int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);

/// 400 random problems of element type T through `gemm`, against sums in
/// `Wide`; returns the number of mismatches (relative tolerance `tol`).
template <typename T, typename Wide>
int checkGemm(const char *name, GemmFn gemm, T tol) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<T> val(-1, 1);
  int failures = 0, cases = 0;
  for (int trial = 0; trial < 400; ++trial) {
    auto [b0, b1, m, n, k, accumulate, va, vb, vc, sa, sb, sc] =
        randomProblem(rng);
    std::vector<T> A(sa), B(sb), C(sc);
    for (T &x : A)
      x = val(rng);
    for (T &x : B)
      x = val(rng);
    for (T &x : C)
      x = val(rng);
    std::vector<T> expect = C;
    for (int64_t i = 0; i < b0; ++i)
      for (int64_t j = 0; j < b1; ++j)
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < n; ++c) {
            Wide sum = accumulate ? C[vc.at(i, j, r, c)] : 0;
            for (int64_t l = 0; l < k; ++l)
              sum += Wide(A[va.at(i, j, r, l)]) * B[vb.at(i, j, l, c)];
            expect[vc.at(i, j, r, c)] = T(sum);
          }
    gemm(b0, b1, m, n, k, reinterpret_cast<int64_t>(A.data()), va.off, va.s[0],
         va.s[1], va.s[2], va.s[3], reinterpret_cast<int64_t>(B.data()), vb.off,
         vb.s[0], vb.s[1], vb.s[2], vb.s[3],
         reinterpret_cast<int64_t>(C.data()), vc.off, vc.s[0], vc.s[1], vc.s[2],
         vc.s[3], accumulate);
    ++cases;
    for (int64_t e = 0; e < sc; ++e)
      if (std::fabs(C[e] - expect[e]) > tol * (1 + std::fabs(expect[e]))) {
        std::fprintf(stderr,
                     "%s trial %d: element %lld is %.17g, expected %.17g "
                     "(batch %lld x %lld, m %lld n %lld k %lld, accumulate "
                     "%d)\n",
                     name, trial, (long long)e, double(C[e]), double(expect[e]),
                     (long long)b0, (long long)b1, (long long)m, (long long)n,
                     (long long)k, int(accumulate));
        ++failures;
        break;
      }
  }
  std::printf("%s: %d of %d layouts agree with the reference\n", name,
              cases - failures, cases);
  return failures;
}
/// `x` rounded to `type` (ZERO_RT_BF16 or _F16) and widened back.
float round16(float x, int32_t type) {
  return type == ZERO_RT_BF16 ? zero::rt::bf16ToFloat(zero::rt::floatToBF16(x))
                              : zero::rt::f16ToFloat(zero::rt::floatToF16(x));
}

/// 400 random problems through zero_rt_gemm16 with A and B of `abType` and
/// C of `cType` (f32, or `abType`: the f32 sums rounded once), against
/// double sums; returns the number of mismatches.
int checkGemm16(const char *name, int32_t abType, int32_t cType) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> val(-1, 1);
  bool wide = cType == ZERO_RT_F32;
  int failures = 0, cases = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Problem p = randomProblem(rng);
    const int64_t b0 = p.b0, b1 = p.b1, m = p.m, n = p.n, k = p.k;
    const bool accumulate = p.accumulate;
    const View &va = p.va, &vb = p.vb, &vc = p.vc;
    std::vector<uint16_t> A(p.sa), B(p.sb), C16(p.sc);
    std::vector<float> a(p.sa), b(p.sb), c(p.sc), C32(p.sc);
    auto fill = [&](std::vector<float> &f, std::vector<uint16_t> &h,
                    int32_t type) {
      for (size_t e = 0; e < f.size(); ++e) {
        f[e] = round16(val(rng), type);
        h[e] = type == ZERO_RT_BF16 ? zero::rt::floatToBF16(f[e])
                                    : zero::rt::floatToF16(f[e]);
      }
    };
    fill(a, A, abType);
    fill(b, B, abType);
    if (wide)
      for (size_t e = 0; e < c.size(); ++e)
        C32[e] = c[e] = val(rng);
    else
      fill(c, C16, cType);
    zero_rt_gemm16(abType, cType, b0, b1, m, n, k,
                   reinterpret_cast<int64_t>(A.data()), va.off, va.s[0],
                   va.s[1], va.s[2], va.s[3],
                   reinterpret_cast<int64_t>(B.data()), vb.off, vb.s[0],
                   vb.s[1], vb.s[2], vb.s[3],
                   wide ? reinterpret_cast<int64_t>(C32.data())
                        : reinterpret_cast<int64_t>(C16.data()),
                   vc.off, vc.s[0], vc.s[1], vc.s[2], vc.s[3], accumulate);
    ++cases;
    // The first element off the f32 sums rounded once to 16 bits (half an
    // ulp), or -1.
    auto firstWrong = [&]() -> int64_t {
      for (int64_t i = 0; i < b0; ++i)
        for (int64_t j = 0; j < b1; ++j)
          for (int64_t r = 0; r < m; ++r)
            for (int64_t col = 0; col < n; ++col) {
              int64_t e = vc.at(i, j, r, col);
              double sum = accumulate ? c[e] : 0.0;
              for (int64_t l = 0; l < k; ++l)
                sum += double(a[va.at(i, j, r, l)]) * b[vb.at(i, j, l, col)];
              double got = wide ? C32[e]
                           : cType == ZERO_RT_BF16
                               ? zero::rt::bf16ToFloat(C16[e])
                               : zero::rt::f16ToFloat(C16[e]);
              double ulp = wide ? 0 : cType == ZERO_RT_BF16 ? 0x1p-8 : 0x1p-11;
              if (std::fabs(got - sum) >
                  1e-5 * (1 + std::fabs(sum)) + ulp * std::fabs(sum))
                return e;
            }
      return -1;
    };
    if (int64_t e = firstWrong(); e >= 0) {
      std::fprintf(stderr,
                   "%s trial %d: element %lld wrong (batch %lld x %lld, m "
                   "%lld n %lld k %lld, accumulate %d)\n",
                   name, trial, (long long)e, (long long)b0, (long long)b1,
                   (long long)m, (long long)n, (long long)k, int(accumulate));
      ++failures;
    }
  }
  std::printf("%s: %d of %d layouts agree with the reference\n", name,
              cases - failures, cases);
  return failures;
}
} // namespace

int main() {
  int failures =
      checkGemm<float, double>("zero_rt_sgemm", zero_rt_sgemm, 1e-5f);
  // f64 to f64 rounding: f32 products would be off by about 1e-8.
  failures +=
      checkGemm<double, long double>("zero_rt_dgemm", zero_rt_dgemm, 1e-13);
  failures +=
      checkGemm16("zero_rt_gemm16 bf16 -> f32", ZERO_RT_BF16, ZERO_RT_F32);
  failures +=
      checkGemm16("zero_rt_gemm16 bf16 -> bf16", ZERO_RT_BF16, ZERO_RT_BF16);
  failures +=
      checkGemm16("zero_rt_gemm16 f16 -> f16", ZERO_RT_F16, ZERO_RT_F16);
  return failures ? 1 : 0;
}
