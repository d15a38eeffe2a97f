//===- CudaCooperativeTest.cpp - kernels whose threads meet ---*- C++ -*-===//
//
// Runs tests/cuda/cooperative.mlir's kernels (warp shuffles, barriers in a
// loop over workgroup memory, warp-wide bf16 and f16 matrix products, the
// CUDA target's attention kernels, forward and backward) and checks what
// they compute against plain C++ (attention against f64). On a GPU the
// cubin runs; under the host emulator (LD_PRELOAD) their thread copies
// do, side by side, so the same checks hold the emulator to the
// hardware's semantics wherever a GPU is at hand. The dropout case holds
// the kernels' mask to a Philox4x32-10 checked against Random123's known
// answers. With a case name it runs only that kernel: the two that
// diverge where threads must meet, which the emulator refuses.
//
//   zero-cuda-cooperative-test libzero-cuda-coop-kernels.so [case]
//
//===----------------------------------------------------------------------===//
#include "zero-rt/Float16.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
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

/// Philox4x32-10 (Salmon et al., SC 2011): the four words for `counter`
/// and `key`.
std::array<uint32_t, 4> philox(std::array<uint32_t, 4> c,
                               std::array<uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * c[0],
             p1 = uint64_t(0xCD9E8D57u) * c[2];
    c = {uint32_t(p1 >> 32) ^ c[1] ^ k[0], uint32_t(p1),
         uint32_t(p0 >> 32) ^ c[3] ^ k[1], uint32_t(p0)};
    k = {k[0] + 0x9E3779B9u, k[1] + 0xBB67AE85u};
  }
  return c;
}

/// The generator against Random123's published known answers.
void philoxKnownAnswers() {
  bool ok = philox({0, 0, 0, 0}, {0, 0}) ==
                std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                        0x9b00dbd8} &&
            philox({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                   {0xffffffff, 0xffffffff}) ==
                std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                        0x6d5451fd} &&
            philox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                   {0xa4093822, 0x299f31d0}) ==
                std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                        0x24126ea1};
  expect(ok, "Philox4x32-10 gives Random123's known answers");
}

/// A dropout mask over [B, H, Tq, Tk] as the importer defines it: (b, h,
/// i, j) is kept when the top 24 bits of the first word for counter
/// ((h * Tq + i) * Tk + j, micro-batch * B + b, step, stream) and the
/// seed are below `keep`.
struct DropoutMask {
  uint64_t seed;
  uint32_t stream, keep;
  int64_t step, microBatch, batch, heads, rows, keys;
  double factor;

  /// The factor of the probability of (pair b * H + h, i, j): `factor`
  /// where kept, else 0.
  double operator()(int64_t pair, int64_t i, int64_t j) const {
    int64_t b = pair / heads, h = pair % heads;
    uint32_t elem = uint32_t((h * rows + i) * keys + j);
    uint32_t row = uint32_t(microBatch * batch + b);
    uint32_t w = philox({elem, row, uint32_t(step), stream},
                        {uint32_t(seed), uint32_t(seed >> 32)})[0];
    return (w >> 8) < keep ? factor : 0.0;
  }
};

/// Attention in f64 on `pairs` (batch, head) pairs of `rows` queries and
/// `keys` keys of depth `depth`: the probabilities, each row's
/// log-sum-exp and the output. With `drop`, the probabilities that meet
/// the values are dropped out by its factors.
struct Attention64 {
  int64_t pairs, rows, keys, depth;
  double scale;
  bool causal;
  std::function<double(int64_t, int64_t, int64_t)> drop = {};

  double dropped(int64_t b, int64_t i, int64_t j) const {
    return drop ? drop(b, i, j) : 1.0;
  }

  void forward(const std::vector<double> &q, const std::vector<double> &k,
               const std::vector<double> &v, std::vector<double> &p,
               std::vector<double> &lse, std::vector<double> &out) const {
    p.assign(size_t(pairs * rows * keys), 0);
    lse.assign(size_t(pairs * rows), 0);
    out.assign(size_t(pairs * rows * depth), 0);
    for (int64_t b = 0; b < pairs; ++b)
      for (int64_t i = 0; i < rows; ++i) {
        double *pi = &p[size_t((b * rows + i) * keys)];
        double m = -INFINITY;
        for (int64_t j = 0; j < keys; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < depth; ++d)
            dot += q[size_t((b * rows + i) * depth + d)] *
                   k[size_t((b * keys + j) * depth + d)];
          pi[j] = causal && j > i ? -INFINITY : scale * dot;
          m = std::max(m, pi[j]);
        }
        double sum = 0;
        for (int64_t j = 0; j < keys; ++j)
          sum += std::exp(pi[j] - m);
        double l = m + std::log(sum);
        lse[size_t(b * rows + i)] = l;
        for (int64_t j = 0; j < keys; ++j)
          pi[j] = std::exp(pi[j] - l);
        for (int64_t j = 0; j < keys; ++j) {
          double f = dropped(b, i, j);
          for (int64_t d = 0; d < depth; ++d)
            out[size_t((b * rows + i) * depth + d)] +=
                pi[j] * f * v[size_t((b * keys + j) * depth + d)];
        }
      }
  }

  /// The gradients of sum(dout * out).
  void backward(const std::vector<double> &q, const std::vector<double> &k,
                const std::vector<double> &v, const std::vector<double> &dout,
                std::vector<double> &dq, std::vector<double> &dk,
                std::vector<double> &dv) const {
    std::vector<double> p, lse, out;
    forward(q, k, v, p, lse, out);
    dq.assign(q.size(), 0);
    dk.assign(k.size(), 0);
    dv.assign(v.size(), 0);
    std::vector<double> dps(static_cast<size_t>(keys));
    for (int64_t b = 0; b < pairs; ++b)
      for (int64_t i = 0; i < rows; ++i) {
        const double *pi = &p[size_t((b * rows + i) * keys)];
        const double *gi = &dout[size_t((b * rows + i) * depth)];
        double delta = 0;
        for (int64_t j = 0; j < keys; ++j) {
          double dp = 0;
          for (int64_t d = 0; d < depth; ++d)
            dp += gi[d] * v[size_t((b * keys + j) * depth + d)];
          // The gradient of the probability: of its dropped-out value
          // times the factor.
          dps[size_t(j)] = dp * dropped(b, i, j);
          delta += pi[j] * dps[size_t(j)];
        }
        for (int64_t j = 0; j < keys; ++j) {
          double dsij = pi[j] * (dps[size_t(j)] - delta);
          double pd = pi[j] * dropped(b, i, j);
          for (int64_t d = 0; d < depth; ++d) {
            size_t at = size_t((b * keys + j) * depth + d);
            dv[at] += pd * gi[d];
            dk[at] += scale * dsij * q[size_t((b * rows + i) * depth + d)];
            dq[size_t((b * rows + i) * depth + d)] += scale * dsij * k[at];
          }
        }
      }
  }
};

/// The largest difference between `ref` and `got`, over the largest
/// magnitude of `ref`.
template <typename Got>
double relativeWorst(const std::vector<double> &ref, const Got &got) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::fabs(ref[i] - double(got(i))));
    scale = std::max(scale, std::fabs(ref[i]));
  }
  return worst / scale;
}

/// An attention's kernels on 16-bit vectors in (pair, row, depth) order
/// (log-sum-exp and delta in (pair, row)): the forward writes `o` and
/// `lse`, the backward `dq`, `dk` and `dv`, each poisoned before.
using U16 = std::vector<uint16_t>;
using F32 = std::vector<float>;
struct AttentionKernels {
  std::function<void(U16 &q, U16 &k, U16 &v, U16 &o, F32 &lse)> forward;
  std::function<void(U16 &q, U16 &k, U16 &v, U16 &dout, F32 &lse, F32 &delta,
                     U16 &dq, U16 &dk, U16 &dv)>
      backward;
};

/// The kernels of `name` and `gradName` on operands of `qShape` and
/// `kShape` (`[..., rows, depth]`) as they lie.
template <int Rank>
AttentionKernels asShaped(const char *name, const char *gradName,
                          const int64_t (&qShape)[Rank],
                          const int64_t (&kShape)[Rank]) {
  using M = MemRef<uint16_t, Rank>;
  using R = MemRef<float, Rank - 1>;
  struct Shapes {
    int64_t q[Rank], k[Rank], rows[Rank - 1];
  } sh;
  std::copy(qShape, qShape + Rank, sh.q);
  std::copy(kShape, kShape + Rank, sh.k);
  std::copy(qShape, qShape + Rank - 1, sh.rows);
  AttentionKernels kernels;
  kernels.forward = [=](U16 &q, U16 &k, U16 &v, U16 &o, F32 &lse) {
    M mq = shaped(q, sh.q), mk = shaped(k, sh.k), mv = shaped(v, sh.k),
      mo = shaped(o, sh.q);
    R ml = shaped(lse, sh.rows);
    entry<void (*)(M *, M *, M *, M *, R *)>(name)(&mq, &mk, &mv, &mo, &ml);
  };
  kernels.backward = [=](U16 &q, U16 &k, U16 &v, U16 &dout, F32 &lse,
                         F32 &delta, U16 &dq, U16 &dk, U16 &dv) {
    M mq = shaped(q, sh.q), mk = shaped(k, sh.k), mv = shaped(v, sh.k),
      mdo = shaped(dout, sh.q), mdq = shaped(dq, sh.q), mdk = shaped(dk, sh.k),
      mdv = shaped(dv, sh.k);
    R ml = shaped(lse, sh.rows), mdl = shaped(delta, sh.rows);
    entry<void (*)(M *, M *, M *, M *, R *, R *, M *, M *, M *)>(gradName)(
        &mq, &mk, &mv, &mdo, &ml, &mdl, &mdq, &mdk, &mdv);
  };
  return kernels;
}

/// The kernels of `name` and `gradName` on the heads of one projection as
/// it lies, `seq_dim 1`: q, k and v are views of one `[B, T, 3, H, D]`
/// buffer (and so their gradients of another), the output, its gradient,
/// the log-sum-exp and delta `[B, T, H, ...]`.
/// With `dropout`, the kernels take the step and micro-batch it is drawn
/// at after their buffers.
AttentionKernels headsAsStored(const char *name, const char *gradName,
                               int64_t batch, int64_t rows, int64_t heads,
                               int64_t depth,
                               const DropoutMask *dropout = nullptr) {
  int64_t step = dropout ? dropout->step : 0,
          microBatch = dropout ? dropout->microBatch : 0;
  bool drops = dropout != nullptr;
  // Element (b * heads + h, t, d) of the reference order in [B, T, H, D]
  // and, for part c of the projection, in [B, T, 3, H, D].
  auto at = [=](int64_t i) {
    int64_t d = i % depth, t = i / depth % rows, pair = i / (depth * rows);
    return std::array<int64_t, 4>{pair / heads, t, pair % heads, d};
  };
  auto stored = [=](int64_t i) {
    auto [b, t, h, d] = at(i);
    return ((b * rows + t) * heads + h) * depth + d;
  };
  auto packed = [=](int64_t i, int64_t c) {
    auto [b, t, h, d] = at(i);
    return (((b * rows + t) * 3 + c) * heads + h) * depth + d;
  };
  auto storedRow = [=](int64_t r) {
    int64_t t = r % rows, pair = r / rows;
    return (pair / heads * rows + t) * heads + pair % heads;
  };
  auto pack = [=](std::array<U16 *, 3> parts) {
    U16 all(parts[0]->size() * 3);
    for (int64_t c = 0; c < 3; ++c)
      for (size_t i = 0; i < parts[0]->size(); ++i)
        all[size_t(packed(int64_t(i), c))] = (*parts[size_t(c)])[i];
    return all;
  };
  auto unpack = [=](const U16 &all, std::array<U16 *, 3> parts) {
    for (int64_t c = 0; c < 3; ++c)
      for (size_t i = 0; i < parts[0]->size(); ++i)
        (*parts[size_t(c)])[i] = all[size_t(packed(int64_t(i), c))];
  };
  auto toStored = [=](const U16 &x) {
    U16 y(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      y[size_t(stored(int64_t(i)))] = x[i];
    return y;
  };
  auto rowsToStored = [=](const F32 &x) {
    F32 y(x.size());
    for (size_t r = 0; r < x.size(); ++r)
      y[size_t(storedRow(int64_t(r)))] = x[r];
    return y;
  };
  int64_t shape[4] = {batch, rows, heads, depth},
          rowShape[3] = {batch, rows, heads},
          packedShape[5] = {batch, rows, 3, heads, depth};
  using M = MemRef<uint16_t, 4>;
  using P = MemRef<uint16_t, 5>;
  using R = MemRef<float, 3>;
  AttentionKernels kernels;
  kernels.forward = [=](U16 &q, U16 &k, U16 &v, U16 &o, F32 &lse) {
    U16 qkv = pack({&q, &k, &v}), os = toStored(o);
    F32 ls = rowsToStored(lse);
    P mqkv = shaped(qkv, packedShape);
    M mo = shaped(os, shape);
    R ml = shaped(ls, rowShape);
    if (drops)
      entry<void (*)(P *, M *, R *, int64_t, int64_t)>(name)(&mqkv, &mo, &ml,
                                                             step, microBatch);
    else
      entry<void (*)(P *, M *, R *)>(name)(&mqkv, &mo, &ml);
    for (size_t i = 0; i < o.size(); ++i)
      o[i] = os[size_t(stored(int64_t(i)))];
    for (size_t r = 0; r < lse.size(); ++r)
      lse[r] = ls[size_t(storedRow(int64_t(r)))];
  };
  kernels.backward = [=](U16 &q, U16 &k, U16 &v, U16 &dout, F32 &lse,
                         F32 &delta, U16 &dq, U16 &dk, U16 &dv) {
    U16 qkv = pack({&q, &k, &v}), dqkv = pack({&dq, &dk, &dv}),
        dos = toStored(dout);
    F32 ls = rowsToStored(lse), dls = rowsToStored(delta);
    P mqkv = shaped(qkv, packedShape), mdqkv = shaped(dqkv, packedShape);
    M mdo = shaped(dos, shape);
    R ml = shaped(ls, rowShape), mdl = shaped(dls, rowShape);
    if (drops)
      entry<void (*)(P *, M *, R *, R *, P *, int64_t, int64_t)>(gradName)(
          &mqkv, &mdo, &ml, &mdl, &mdqkv, step, microBatch);
    else
      entry<void (*)(P *, M *, R *, R *, P *)>(gradName)(&mqkv, &mdo, &ml, &mdl,
                                                         &mdqkv);
    unpack(dqkv, {&dq, &dk, &dv});
  };
  return kernels;
}

/// zero.attention's kernel and then its gradient's (`kernels`) on `pairs`
/// (batch, head) pairs of `rows` queries and `keys` keys of depth `depth`,
/// against attention in f64 from the same 16-bit inputs: the output within
/// the 16-bit rounding of the probabilities and the result, the
/// log-sum-exp within f32's; the gradients (from the kernel's output, as a
/// step takes them) within the rounding of the probabilities and their
/// gradients. The f64 gradients are held to central differences of the
/// f64 loss first.
template <bool BF16>
void attention(const char *name, const char *gradName, Attention64 ref,
               const AttentionKernels &kernels) {
  auto to16 = [](float f) {
    return BF16 ? zero::rt::floatToBF16(f) : zero::rt::floatToF16(f);
  };
  auto from16 = [](uint16_t h) {
    return BF16 ? zero::rt::bf16ToFloat(h) : zero::rt::f16ToFloat(h);
  };
  int64_t pairs = ref.pairs, rows = ref.rows, keys = ref.keys;
  int64_t depth = ref.depth;
  std::vector<uint16_t> q(size_t(pairs * rows * depth)),
      k(size_t(pairs * keys * depth)), v(k.size()), o(q.size(), 0xffff),
      dout(q.size());
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
  for (auto &x : dout)
    x = to16(next());
  kernels.forward(q, k, v, o, lse);

  auto wide = [&](const std::vector<uint16_t> &x) {
    std::vector<double> w(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      w[i] = from16(x[i]);
    return w;
  };
  std::vector<double> q64 = wide(q), k64 = wide(k), v64 = wide(v),
                      dout64 = wide(dout);
  std::vector<double> p64, lse64, out64;
  ref.forward(q64, k64, v64, p64, lse64, out64);
  double worstOut = 0, worstLse = 0;
  for (size_t i = 0; i < out64.size(); ++i)
    worstOut = std::max(worstOut, std::fabs(out64[i] - from16(o[i])));
  for (size_t i = 0; i < lse64.size(); ++i)
    worstLse =
        std::max(worstLse, std::fabs(lse64[i] - lse[i]) / std::fabs(lse64[i]));
  // |v| < 1: the output's rounding is at most 2^-9 (bf16) and each
  // probability's at most 2^-9 of itself.
  double tolerance = BF16 ? 8e-3 : 1e-3;
  char what[320];
  std::snprintf(what, sizeof what,
                "%s: the output within %.0e of f64 attention (largest %.1e), "
                "the log-sum-exp within 1e-5 relative (%.1e)",
                name, tolerance, worstOut, worstLse);
  expect(worstOut <= tolerance && worstLse <= 1e-5, what);

  // The f64 gradients against central differences of sum(dout * out)
  // along one random direction of (q, k, v).
  std::vector<double> dq64, dk64, dv64;
  ref.backward(q64, k64, v64, dout64, dq64, dk64, dv64);
  {
    std::vector<double> uq(q64.size()), uk(k64.size()), uv(v64.size());
    double slope = 0;
    for (size_t i = 0; i < uq.size(); ++i)
      uq[i] = next(), slope += uq[i] * dq64[i];
    for (size_t i = 0; i < uk.size(); ++i)
      uk[i] = next(), uv[i] = next(),
      slope += uk[i] * dk64[i] + uv[i] * dv64[i];
    auto loss = [&](double e) {
      std::vector<double> qe(q64), ke(k64), ve(v64), p, l, out;
      for (size_t i = 0; i < qe.size(); ++i)
        qe[i] += e * uq[i];
      for (size_t i = 0; i < ke.size(); ++i)
        ke[i] += e * uk[i], ve[i] += e * uv[i];
      ref.forward(qe, ke, ve, p, l, out);
      double sum = 0;
      for (size_t i = 0; i < out.size(); ++i)
        sum += dout64[i] * out[i];
      return sum;
    };
    double e = 1e-5, numeric = (loss(e) - loss(-e)) / (2 * e);
    double err = std::fabs(numeric - slope) / std::fabs(slope);
    std::snprintf(what, sizeof what,
                  "%s: f64 gradients within 1e-6 of central differences "
                  "(%.1e)",
                  gradName, err);
    expect(err <= 1e-6, what);
  }

  // The kernel's gradients from its own output: delta = dout . out in f32.
  std::vector<float> delta(lse.size());
  for (int64_t r = 0; r < pairs * rows; ++r) {
    float sum = 0;
    for (int64_t d = 0; d < depth; ++d)
      sum += from16(dout[size_t(r * depth + d)]) *
             from16(o[size_t(r * depth + d)]);
    delta[size_t(r)] = sum;
  }
  std::vector<uint16_t> dq(q.size(), 0xffff), dk(k.size(), 0xffff),
      dv(v.size(), 0xffff);
  kernels.backward(q, k, v, dout, lse, delta, dq, dk, dv);
  auto got = [&](const std::vector<uint16_t> &x) {
    return [&x, &from16](size_t i) { return from16(x[i]); };
  };
  double eq = relativeWorst(dq64, got(dq)), ek = relativeWorst(dk64, got(dk)),
         ev = relativeWorst(dv64, got(dv));
  double gradTolerance = BF16 ? 2e-2 : 3e-3;
  std::snprintf(what, sizeof what,
                "%s: dq, dk, dv within %.0e of f64 gradients relative to "
                "their largest (%.1e, %.1e, %.1e)",
                gradName, gradTolerance, eq, ek, ev);
  expect(eq <= gradTolerance && ek <= gradTolerance && ev <= gradTolerance,
         what);
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
  attention<true>("attention_causal", "attention_grad_causal",
                  {4, 128, 128, 64, 0.5, true},
                  asShaped("attention_causal", "attention_grad_causal",
                           {2, 2, 128, 64}, {2, 2, 128, 64}));
  attention<false>("attention_f16", "attention_grad_f16",
                   {3, 64, 192, 32, 0.25, false},
                   asShaped("attention_f16", "attention_grad_f16", {3, 64, 32},
                            {3, 192, 32}));
  attention<true>(
      "attention_heads", "attention_grad_heads",
      {2 * 3, 128, 128, 32, 0.5, true},
      headsAsStored("attention_heads", "attention_grad_heads", 2, 128, 3, 32));
  // The same heads with dropout 0.1 on the probabilities (the kernels'
  // draw of the importer's mask), at step 5 of micro-batch 3.
  philoxKnownAnswers();
  DropoutMask mask{
      0x1234567890abcdefull, 4, 15099494, 5, 3, 2, 3, 128, 128, 1.109375};
  attention<true>("attention_heads_dropout", "attention_grad_heads_dropout",
                  {2 * 3, 128, 128, 32, 0.5, true, mask},
                  headsAsStored("attention_heads_dropout",
                                "attention_grad_heads_dropout", 2, 128, 3, 32,
                                &mask));
  std::printf("%s\n", failures ? "FAILED" : "all passed");
  return failures ? 1 : 0;
}
