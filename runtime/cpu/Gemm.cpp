//===- Gemm.cpp - GEMMs through OpenBLAS ------------------------*- C++ -*-===//
#include "zero-rt/Float16.h"
#include "zero-rt/Runtime.h"

#include <cblas.h>

#include <vector>

namespace {
/// How an operand maps onto BLAS: row-major with leading dimension `ld`,
/// possibly transposed; `ok` is false when neither inner stride is 1.
struct Layout {
  bool ok, trans;
  int64_t ld;
};

Layout layoutOf(int64_t rows, int64_t cols, int64_t sRow, int64_t sCol) {
  if (sCol == 1 && (sRow >= cols || rows == 1))
    return {true, false, rows == 1 ? cols : sRow};
  if (sRow == 1 && (sCol >= rows || cols == 1))
    return {true, true, cols == 1 ? rows : sCol};
  return {false, false, 0};
}

/// Copies a strided matrix into a dense row-major buffer.
template <typename T>
void pack(const T *src, int64_t rows, int64_t cols, int64_t sRow, int64_t sCol,
          std::vector<T> &dst) {
  dst.resize(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      dst[i * cols + j] = src[i * sRow + j * sCol];
}

// cblas_sgemm or cblas_dgemm by the element type.
void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
              int64_t k, const float *a, int64_t lda, const float *b,
              int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c,
              ldc);
}
void blasGemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
              int64_t k, const double *a, int64_t lda, const double *b,
              int64_t ldb, double beta, double *c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c,
              ldc);
}

template <typename T>
void gemm(int64_t batch0, int64_t batch1, int64_t m, int64_t n, int64_t k,
          int64_t a, int64_t aOff, int64_t aSB0, int64_t aSB1, int64_t aSM,
          int64_t aSK, int64_t b, int64_t bOff, int64_t bSB0, int64_t bSB1,
          int64_t bSK, int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0,
          int64_t cSB1, int64_t cSM, int64_t cSN, int64_t accumulate) {
  const T *A = reinterpret_cast<const T *>(a) + aOff;
  const T *B = reinterpret_cast<const T *>(b) + bOff;
  T *C = reinterpret_cast<T *>(c) + cOff;
  if (m == 0 || n == 0)
    return;
  const T beta = accumulate ? 1 : 0;
  Layout la = layoutOf(m, k, aSM, aSK), lb = layoutOf(k, n, bSK, bSN);
  Layout lc = layoutOf(m, n, cSM, cSN);
  std::vector<T> pa, pb, pc;
  auto op = [](bool trans) { return trans ? CblasTrans : CblasNoTrans; };
  for (int64_t i = 0; i < batch0; ++i)
    for (int64_t j = 0; j < batch1; ++j) {
      const T *Ai = A + i * aSB0 + j * aSB1;
      const T *Bi = B + i * bSB0 + j * bSB1;
      T *Ci = C + i * cSB0 + j * cSB1;
      Layout ua = la, ub = lb;
      if (!la.ok) {
        pack(Ai, m, k, aSM, aSK, pa);
        Ai = pa.data();
        ua = {true, false, k};
      }
      if (!lb.ok) {
        pack(Bi, k, n, bSK, bSN, pb);
        Bi = pb.data();
        ub = {true, false, n};
      }
      if (lc.ok && !lc.trans) {
        blasGemm(op(ua.trans), op(ub.trans), m, n, k, Ai, ua.ld, Bi, ub.ld,
                 beta, Ci, lc.ld);
        continue;
      }
      if (lc.ok) {
        // C^T = B^T A^T: a transposed result is a product of the
        // operands swapped, written as stored.
        blasGemm(op(!ub.trans), op(!ua.trans), n, m, k, Bi, ub.ld, Ai, ua.ld,
                 beta, Ci, lc.ld);
        continue;
      }
      // A result with no unit stride: through a dense copy.
      if (accumulate)
        pack(Ci, m, n, cSM, cSN, pc);
      else
        pc.resize(m * n);
      blasGemm(op(ua.trans), op(ub.trans), m, n, k, Ai, ua.ld, Bi, ub.ld, beta,
               pc.data(), n);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t col = 0; col < n; ++col)
          Ci[r * cSM + col * cSN] = pc[r * n + col];
    }
}
} // namespace

extern "C" void
zero_rt_sgemm(int64_t batch0, int64_t batch1, int64_t m, int64_t n, int64_t k,
              int64_t a, int64_t aOff, int64_t aSB0, int64_t aSB1, int64_t aSM,
              int64_t aSK, int64_t b, int64_t bOff, int64_t bSB0, int64_t bSB1,
              int64_t bSK, int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0,
              int64_t cSB1, int64_t cSM, int64_t cSN, int64_t accumulate) {
  gemm<float>(batch0, batch1, m, n, k, a, aOff, aSB0, aSB1, aSM, aSK, b, bOff,
              bSB0, bSB1, bSK, bSN, c, cOff, cSB0, cSB1, cSM, cSN, accumulate);
}

extern "C" void
zero_rt_dgemm(int64_t batch0, int64_t batch1, int64_t m, int64_t n, int64_t k,
              int64_t a, int64_t aOff, int64_t aSB0, int64_t aSB1, int64_t aSM,
              int64_t aSK, int64_t b, int64_t bOff, int64_t bSB0, int64_t bSB1,
              int64_t bSK, int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0,
              int64_t cSB1, int64_t cSM, int64_t cSN, int64_t accumulate) {
  gemm<double>(batch0, batch1, m, n, k, a, aOff, aSB0, aSB1, aSM, aSK, b, bOff,
               bSB0, bSB1, bSK, bSN, c, cOff, cSB0, cSB1, cSM, cSN, accumulate);
}

namespace {
/// A strided 16-bit matrix widened into a dense row-major f32 buffer.
void widen(const uint16_t *src, int32_t type, int64_t rows, int64_t cols,
           int64_t sRow, int64_t sCol, std::vector<float> &dst) {
  dst.resize(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      uint16_t x = src[i * sRow + j * sCol];
      dst[i * cols + j] = type == ZERO_RT_BF16 ? zero::rt::bf16ToFloat(x)
                                               : zero::rt::f16ToFloat(x);
    }
}
} // namespace

// Debian's OpenBLAS 0.3.21 exports no sbgemm, so bf16 goes through sgemm.
extern "C" void
zero_rt_gemm16(int32_t abType, int32_t cType, int64_t batch0, int64_t batch1,
               int64_t m, int64_t n, int64_t k, int64_t a, int64_t aOff,
               int64_t aSB0, int64_t aSB1, int64_t aSM, int64_t aSK, int64_t b,
               int64_t bOff, int64_t bSB0, int64_t bSB1, int64_t bSK,
               int64_t bSN, int64_t c, int64_t cOff, int64_t cSB0, int64_t cSB1,
               int64_t cSM, int64_t cSN, int64_t accumulate) {
  const uint16_t *A = reinterpret_cast<const uint16_t *>(a) + aOff;
  const uint16_t *B = reinterpret_cast<const uint16_t *>(b) + bOff;
  uint16_t *C16 = reinterpret_cast<uint16_t *>(c) + cOff;
  bool wide = cType == ZERO_RT_F32;
  std::vector<float> pa, pb, pc;
  const uint16_t *lastA = nullptr, *lastB = nullptr;
  for (int64_t i = 0; i < batch0; ++i)
    for (int64_t j = 0; j < batch1; ++j) {
      // A broadcast operand is widened once.
      const uint16_t *Ai = A + i * aSB0 + j * aSB1;
      const uint16_t *Bi = B + i * bSB0 + j * bSB1;
      if (Ai != lastA)
        widen(Ai, abType, m, k, aSM, aSK, pa);
      if (Bi != lastB)
        widen(Bi, abType, k, n, bSK, bSN, pb);
      lastA = Ai;
      lastB = Bi;
      if (wide) {
        zero_rt_sgemm(1, 1, m, n, k, reinterpret_cast<int64_t>(pa.data()), 0, 0,
                      0, k, 1, reinterpret_cast<int64_t>(pb.data()), 0, 0, 0, n,
                      1, c, cOff + i * cSB0 + j * cSB1, 0, 0, cSM, cSN,
                      accumulate);
        continue;
      }
      // A 16-bit C: the f32 sums, then one rounding to nearest even.
      uint16_t *Ci = C16 + i * cSB0 + j * cSB1;
      if (accumulate)
        widen(Ci, cType, m, n, cSM, cSN, pc);
      else
        pc.resize(m * n);
      zero_rt_sgemm(1, 1, m, n, k, reinterpret_cast<int64_t>(pa.data()), 0, 0,
                    0, k, 1, reinterpret_cast<int64_t>(pb.data()), 0, 0, 0, n,
                    1, reinterpret_cast<int64_t>(pc.data()), 0, 0, 0, n, 1,
                    accumulate);
      for (int64_t r = 0; r < m; ++r)
        for (int64_t col = 0; col < n; ++col) {
          float x = pc[r * n + col];
          Ci[r * cSM + col * cSN] = cType == ZERO_RT_BF16
                                        ? zero::rt::floatToBF16(x)
                                        : zero::rt::floatToF16(x);
        }
    }
}
