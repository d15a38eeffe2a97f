//===- CudaCooperativeTest.cpp - kernels whose threads meet -------*- C++
//-*-===//
//
// Runs tests/cuda/cooperative.mlir's kernels (warp shuffles, barriers in a
// loop over workgroup memory, warp-wide bf16 and f16 matrix products, the
// CUDA target's attention kernels) and
// checks what they compute against plain C++. On a GPU the cubin runs;
// under the host emulator (LD_PRELOAD) their thread copies do, side by
// side, so the same checks hold the emulator to the hardware's semantics
// wherever a GPU is at hand. With a case name it runs only that kernel:
// the two that diverge where threads must meet, which the emulator
// refuses.
//
//   zero-cuda-cooperative-test libzero-cuda-coop-kernels.so [case]
//
//===----------------------------------------------------------------------===//
#include "zero-rt/Float16.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {
int failures = 0;

void expect(bool ok, const std::string &what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  failures += !ok;
}

template <typename T, int Rank> struct MemRef {
  T *allocated, *aligned;
  int64_t offset, sizes[Rank], strides[Rank];
};
template <typename T> MemRef<T, 1> view(std::vector<T> &v) {
  return {v.data(), v.data(), 0, {int64_t(v.size())}, {1}};
}
template <typename T>
MemRef<T, 2> view(std::vector<T> &v, int64_t rows, int64_t cols) {
  return {v.data(), v.data(), 0, {rows, cols}, {cols, 1}};
}

void *library = nullptr;
template <typename Fn> Fn entry(const char *name) {
  std::string symbol = std::string("_mlir_ciface_zero_coop_") + name;
  auto fn = reinterpret_cast<Fn>(dlsym(library, symbol.c_str()));
  if (!fn) {
    std::fprintf(stderr, "error: %s has no %s\n", "the kernel library",
                 symbol.c_str());
    std::exit(2);
  }
  return fn;
}

void warpSum() {
  std::vector<float> a(64), sums(3, -1.0f), down(64, -1.0f);
  std::vector<int32_t> valid(64, -1);
  for (int i = 0; i < 64; ++i)
    a[size_t(i)] = float(i % 7 - 3) + 0.25f * float(i);
  auto ma = view(a), ms = view(sums), md = view(down);
  auto mv = view(valid);
  entry<void (*)(MemRef<float, 1> *, MemRef<float, 1> *, MemRef<float, 1> *,
                 MemRef<int32_t, 1> *)>("warp_sum")(&ma, &ms, &md, &mv);
  float w0 = 0, w1 = 0;
  for (int i = 0; i < 32; ++i)
    w0 += a[size_t(i)], w1 += a[size_t(i) + 32];
  expect(sums[0] == w0 && sums[1] == w1 && sums[2] == w0 + w1,
         "warp_sum: each warp's butterfly sum (shuffle xor in a loop) and "
         "both through workgroup memory after a barrier");
  bool ok = true;
  for (int t = 0; t < 64; ++t) {
    bool last = t % 32 == 31;
    ok = ok && down[size_t(t)] == a[size_t(last ? t : t + 1)] &&
         valid[size_t(t)] == (last ? 0 : 1);
  }
  expect(ok, "warp_sum: shuffle down by 1 reads the next lane, the last "
             "lane its own value and not valid");
}

void reverseTiles() {
  std::vector<float> a(128), b(128, -1.0f);
  for (int i = 0; i < 128; ++i)
    a[size_t(i)] = float(i);
  auto ma = view(a), mb = view(b);
  entry<void (*)(MemRef<float, 1> *, MemRef<float, 1> *)>("reverse_tiles")(&ma,
                                                                           &mb);
  bool ok = true;
  for (int i = 0; i < 128; ++i)
    ok = ok && b[size_t(i)] == a[size_t(i / 32 * 32 + 31 - i % 32)];
  expect(ok, "reverse_tiles: barriers in a loop, workgroup memory reused");
}

template <bool BF16> void mma() {
  const char *name = BF16 ? "mma_bf16" : "mma_f16";
  auto to16 = [](float f) {
    return BF16 ? zero::rt::floatToBF16(f) : zero::rt::floatToF16(f);
  };
  auto from16 = [](uint16_t h) {
    return BF16 ? zero::rt::bf16ToFloat(h) : zero::rt::f16ToFloat(h);
  };
  // Multiples of 1/8 and 1/64: every product and sum exact in f32.
  std::vector<uint16_t> a(16 * 16), b(16 * 8);
  std::vector<float> c(16 * 8), d(16 * 8, -1.0f);
  for (int i = 0; i < 16 * 16; ++i)
    a[size_t(i)] = to16(float((i * 7) % 11 - 5) / 8);
  for (int i = 0; i < 16 * 8; ++i) {
    b[size_t(i)] = to16(float((i * 5) % 13 - 6) / 8);
    c[size_t(i)] = float(i % 9 - 4) / 64;
  }
  auto ma = view(a, 16, 16), mb = view(b, 16, 8);
  auto mc = view(c, 16, 8), md = view(d, 16, 8);
  entry<void (*)(MemRef<uint16_t, 2> *, MemRef<uint16_t, 2> *,
                 MemRef<float, 2> *, MemRef<float, 2> *)>(name)(&ma, &mb, &mc,
                                                                &md);
  double worst = 0;
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      double ref = c[size_t(m * 8 + n)];
      for (int k = 0; k < 16; ++k)
        ref += double(from16(a[size_t(m * 16 + k)])) *
               double(from16(b[size_t(k * 8 + n)]));
      worst = std::max(worst, std::fabs(ref - double(d[size_t(m * 8 + n)])));
    }
  char what[160];
  std::snprintf(what, sizeof what,
                "%s: D = A B + C, m16n8k16 in PTX's fragment layout (largest "
                "difference %.1e)",
                name, worst);
  expect(worst == 0, what);
}

/// A row-major memref of `shape` over `v`.
template <typename T, int Rank>
MemRef<T, Rank> shaped(std::vector<T> &v, const int64_t (&shape)[Rank]) {
  MemRef<T, Rank> m{v.data(), v.data(), 0, {}, {}};
  int64_t stride = 1;
  for (int d = Rank - 1; d >= 0; --d) {
    m.sizes[d] = shape[d];
    m.strides[d] = stride;
    stride *= shape[d];
  }
  return m;
}

/// zero.attention's kernel on `pairs` (batch, head) pairs of `rows`
/// queries and `keys` keys of depth `depth`, against attention in f64 from
/// the same 16-bit inputs: the output within the 16-bit rounding of the
/// probabilities and the result, the log-sum-exp within f32's.
template <bool BF16, int Rank>
void attention(const char *name, const int64_t (&qShape)[Rank],
               const int64_t (&kShape)[Rank], double scale, bool causal) {
  auto to16 = [](float f) {
    return BF16 ? zero::rt::floatToBF16(f) : zero::rt::floatToF16(f);
  };
  auto from16 = [](uint16_t h) {
    return BF16 ? zero::rt::bf16ToFloat(h) : zero::rt::f16ToFloat(h);
  };
  int64_t rows = qShape[Rank - 2], keys = kShape[Rank - 2];
  int64_t depth = qShape[Rank - 1], pairs = 1;
  for (int d = 0; d < Rank - 2; ++d)
    pairs *= qShape[d];
  std::vector<uint16_t> q(size_t(pairs * rows * depth)),
      k(size_t(pairs * keys * depth)), v(k.size()), o(q.size(), 0xffff);
  std::vector<float> lse(size_t(pairs * rows), -1.0f);
  // Scores spread over several units, so that the running maximum moves
  // and the probabilities are far from uniform.
  uint32_t seed = 12345;
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;
    return float(seed >> 8) / float(1 << 24) * 2 - 1;
  };
  for (auto &x : q)
    x = to16(2 * next());
  for (auto &x : k)
    x = to16(2 * next());
  for (auto &x : v)
    x = to16(next());
  int64_t lseShape[Rank - 1];
  for (int d = 0; d < Rank - 1; ++d)
    lseShape[d] = qShape[d];
  auto mq = shaped(q, qShape), mk = shaped(k, kShape), mv = shaped(v, kShape),
       mo = shaped(o, qShape);
  auto ml = shaped(lse, lseShape);
  using M = MemRef<uint16_t, Rank>;
  entry<void (*)(M *, M *, M *, M *, MemRef<float, Rank - 1> *)>(name)(
      &mq, &mk, &mv, &mo, &ml);
  double worstOut = 0, worstLse = 0;
  for (int64_t p = 0; p < pairs; ++p)
    for (int64_t i = 0; i < rows; ++i) {
      std::vector<double> s(static_cast<size_t>(keys));
      double m = -INFINITY;
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < depth; ++d)
          dot += double(from16(q[size_t((p * rows + i) * depth + d)])) *
                 double(from16(k[size_t((p * keys + j) * depth + d)]));
        s[size_t(j)] = causal && j > i ? -INFINITY : scale * dot;
        m = std::max(m, s[size_t(j)]);
      }
      double sum = 0;
      for (double x : s)
        sum += std::exp(x - m);
      double l = m + std::log(sum);
      worstLse = std::max(worstLse, std::fabs(l - lse[size_t(p * rows + i)]) /
                                        std::fabs(l));
      for (int64_t d = 0; d < depth; ++d) {
        double ref = 0;
        for (int64_t j = 0; j < keys; ++j)
          ref += std::exp(s[size_t(j)] - l) *
                 double(from16(v[size_t((p * keys + j) * depth + d)]));
        worstOut = std::max(
            worstOut,
            std::fabs(ref - from16(o[size_t((p * rows + i) * depth + d)])));
      }
    }
  // |v| < 1: the output's rounding is at most 2^-9 (bf16) and each
  // probability's at most 2^-9 of itself.
  double tolerance = BF16 ? 8e-3 : 1e-3;
  char what[256];
  std::snprintf(what, sizeof what,
                "%s: the output within %.0e of f64 attention (largest %.1e), "
                "the log-sum-exp within 1e-5 relative (%.1e)",
                name, tolerance, worstOut, worstLse);
  expect(worstOut <= tolerance && worstLse <= 1e-5, what);
}
} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s libzero-cuda-coop-kernels.so [case]\n",
                 argv[0]);
    return 2;
  }
  library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "error: dlopen %s: %s\n", argv[1], dlerror());
    return 2;
  }
  if (argc == 3) {
    std::string which = argv[2];
    if (which == "diverge_barrier") {
      std::vector<float> a(64);
      auto m = view(a);
      entry<void (*)(MemRef<float, 1> *)>("diverge_barrier")(&m);
    } else if (which == "diverge_shuffle") {
      std::vector<float> a(32);
      auto m = view(a);
      entry<void (*)(MemRef<float, 1> *)>("diverge_shuffle")(&m);
    } else {
      std::fprintf(stderr, "error: no case '%s'\n", which.c_str());
      return 2;
    }
    std::printf("%s ran\n", which.c_str());
    return 0;
  }
  warpSum();
  reverseTiles();
  mma<true>();
  mma<false>();
  attention<true, 4>("attention_causal", {2, 2, 128, 64}, {2, 2, 128, 64}, 0.5,
                     true);
  attention<false, 3>("attention_f16", {3, 64, 32}, {3, 192, 32}, 0.25, false);
  std::printf("%s\n", failures ? "FAILED" : "all passed");
  return failures ? 1 : 0;
}
