//===- CudaGemmLayoutTest.cpp - the cuBLAS mapping, without a GPU --------===//
//
// runtime/cuda/Gemm.cpp compiled against a host emulation of
// cublasGemmStridedBatchedEx_64 with cuBLAS's column-major semantics and
// argument checks (leading dimensions), so that the row-major to
// column-major mapping (transpose flags, leading dimensions, strided and
// looped batches, a C written by every batch) is checked on any machine
// against the reference loop. The GPU test runs the same cases on cuBLAS.
//
//===----------------------------------------------------------------------===//
#include "../cuda/Internal.h"

#include "zero-rt/Float16.h"
#include "zero-rt/RuntimeCUDA.h"

#include "cuda/GemmLayouts.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using namespace zero::rt;
using namespace zero::rt::test;

//===----------------------------------------------------------------------===//
// What Gemm.cpp needs of the rest of the runtime, on the host
//===----------------------------------------------------------------------===//

namespace zero::rt::cuda {
State &state() {
  static State *s = [] {
    auto *s = new State;
    s->initialized = true;
    return s;
  }();
  return *s;
}
void fail(const std::string &call, const std::string &message) {
  std::fprintf(stderr, "error: %s failed: %s\n", call.c_str(), message.c_str());
  std::exit(1);
}
void check(cublasStatus_t rc, const char *call) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    fail(call, "status " + std::to_string((int)rc));
}
void check(cudaError_t rc, const char *call) {
  if (rc != cudaSuccess)
    fail(call, "error " + std::to_string((int)rc));
}
void ensureContext() {}
cudaEvent_t traceBegin(cudaStream_t) { return nullptr; }
void traceEnd(cudaEvent_t, cudaStream_t, TraceEvent) {}
const char *traceNode() { return ""; }
} // namespace zero::rt::cuda

namespace {
int calls = 0;

double load(const void *p, cudaDataType_t type, int64_t i) {
  if (type == CUDA_R_64F)
    return static_cast<const double *>(p)[i];
  if (type == CUDA_R_32F)
    return static_cast<const float *>(p)[i];
  uint16_t h = static_cast<const uint16_t *>(p)[i];
  return type == CUDA_R_16BF ? bf16ToFloat(h) : f16ToFloat(h);
}
} // namespace

/// cuBLAS's definition: C = alpha op(A) op(B) + beta C, column-major, for
/// each batch; beta = 0 does not read C. The argument checks are cuBLAS's
/// documented ones.
extern "C" cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
    int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
    cudaDataType Atype, int64_t lda, long long int strideA, const void *B,
    cudaDataType Btype, int64_t ldb, long long int strideB, const void *beta,
    void *C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t compute, cublasGemmAlgo_t) {
  ++calls;
  bool ta = transa == CUBLAS_OP_T, tb = transb == CUBLAS_OP_T;
  // f64 only as f64 throughout, else f32 C or a 16-bit C of A's type.
  bool f64 = compute == CUBLAS_COMPUTE_64F;
  bool types =
      f64 ? Atype == CUDA_R_64F && Ctype == CUDA_R_64F
          : Atype != CUDA_R_64F && (Ctype == CUDA_R_32F ||
                                    (Ctype == Atype && Atype != CUDA_R_32F));
  if (m < 0 || n < 0 || k < 0 || batchCount < 0 || !types || Atype != Btype ||
      lda < std::max<int64_t>(1, ta ? k : m) ||
      ldb < std::max<int64_t>(1, tb ? n : k) || ldc < std::max<int64_t>(1, m)) {
    std::fprintf(stderr,
                 "cuBLAS would reject: m %lld n %lld k %lld lda %lld ldb "
                 "%lld ldc %lld ta %d tb %d\n",
                 (long long)m, (long long)n, (long long)k, (long long)lda,
                 (long long)ldb, (long long)ldc, ta, tb);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  // alpha and beta are read in the compute type.
  double al = f64 ? *static_cast<const double *>(alpha)
                  : *static_cast<const float *>(alpha);
  double be = f64 ? *static_cast<const double *>(beta)
                  : *static_cast<const float *>(beta);
  for (int64_t t = 0; t < batchCount; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l) {
          int64_t ai = ta ? l + i * lda : i + l * lda;
          int64_t bi = tb ? j + l * ldb : l + j * ldb;
          sum += double(load(A, Atype, t * strideA + ai)) *
                 load(B, Btype, t * strideB + bi);
        }
        int64_t at = t * strideC + i + j * ldc;
        double c = be == 0 ? 0.0 : be * load(C, Ctype, at);
        if (f64)
          static_cast<double *>(C)[at] = al * sum + c;
        else if (Ctype == CUDA_R_32F)
          static_cast<float *>(C)[at] = float(al * sum + c);
        else
          static_cast<uint16_t *>(C)[at] =
              Ctype == CUDA_R_16BF ? floatToBF16(float(al * sum + c))
                                   : floatToF16(float(al * sum + c));
      }
  return CUBLAS_STATUS_SUCCESS;
}

/// The pointer-array form: each product as a strided call of one.
extern "C" cublasStatus_t cublasGemmBatchedEx_64(
    cublasHandle_t h, cublasOperation_t transa, cublasOperation_t transb,
    int64_t m, int64_t n, int64_t k, const void *alpha,
    const void *const Aarray[], cudaDataType Atype, int64_t lda,
    const void *const Barray[], cudaDataType Btype, int64_t ldb,
    const void *beta, void *const Carray[], cudaDataType Ctype, int64_t ldc,
    int64_t batchCount, cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  for (int64_t t = 0; t < batchCount; ++t) {
    cublasStatus_t rc = cublasGemmStridedBatchedEx_64(
        h, transa, transb, m, n, k, alpha, Aarray[t], Atype, lda, 0, Barray[t],
        Btype, ldb, 0, beta, Carray[t], Ctype, ldc, 0, 1, compute, algo);
    --calls;
    if (rc != CUBLAS_STATUS_SUCCESS)
      return rc;
  }
  ++calls;
  return CUBLAS_STATUS_SUCCESS;
}

// Device memory is host memory here.
extern "C" cudaError_t cudaMalloc(void **p, size_t bytes) {
  *p = std::malloc(bytes);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
extern "C" cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                                  cudaMemcpyKind) {
  std::memcpy(dst, src, bytes);
  return cudaSuccess;
}
extern "C" cudaError_t cudaFree(void *p) {
  std::free(p);
  return cudaSuccess;
}

int main() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> val(-1.0f, 1.0f);
  int failures = 0, cases = 0, rejected = 0;
  std::vector<GemmCase> all = fixedCases();
  for (int trial = 0; trial < 600; ++trial)
    all.push_back(randomCase(rng, 7));
  // (A and B, C): f64 throughout, else f32 C, or 16 bits throughout.
  const int32_t types[][2] = {
      {ZERO_RT_F32, ZERO_RT_F32},   {ZERO_RT_BF16, ZERO_RT_F32},
      {ZERO_RT_F16, ZERO_RT_F32},   {ZERO_RT_F64, ZERO_RT_F64},
      {ZERO_RT_BF16, ZERO_RT_BF16}, {ZERO_RT_F16, ZERO_RT_F16}};
  for (const GemmCase &g : all)
    for (const auto &pair : types) {
      int32_t type = pair[0], cType = pair[1];
      std::vector<float> A(g.sa), B(g.sb), C(g.sc);
      for (float &x : A)
        x = roundTo(val(rng), type);
      for (float &x : B)
        x = roundTo(val(rng), type);
      for (float &x : C)
        x = roundTo(val(rng), cType);
      std::vector<char> a = encode(A, type), b = encode(B, type);
      std::vector<char> got = encode(C, cType);
      const std::vector<char> before = got;
      std::vector<double> ref, bound;
      g.reference(A, B, C, ref, bound, cType);
      int32_t rc = runCudaGemm(g, type, reinterpret_cast<int64_t>(a.data()),
                               reinterpret_cast<int64_t>(b.data()),
                               reinterpret_cast<int64_t>(got.data()), cType);
      ++cases;
      if (!g.isSupported()) {
        ++rejected;
        if (rc != 1 || !*zero_rt_cuda_last_error() || got != before) {
          std::fprintf(stderr,
                       "case %d: an unsupported layout was not "
                       "rejected cleanly\n",
                       cases);
          ++failures;
        }
        continue;
      }
      if (rc != 0) {
        std::fprintf(stderr, "case %d: rejected: %s\n", cases,
                     zero_rt_cuda_last_error());
        ++failures;
        continue;
      }
      // f64 sums of products exact in f64 round far below f32's 1e-7.
      double tol = type == ZERO_RT_F64 ? 1e-13 : 1e-5;
      cudaDataType_t ct = cType == ZERO_RT_F64    ? CUDA_R_64F
                          : cType == ZERO_RT_F32  ? CUDA_R_32F
                          : cType == ZERO_RT_BF16 ? CUDA_R_16BF
                                                  : CUDA_R_16F;
      for (size_t e = 0; e < ref.size(); ++e) {
        double x = load(got.data(), ct, int64_t(e));
        if (std::fabs(x - ref[e]) >
            tol * (bound[e] + 1) + roundingSlack(cType, ref[e])) {
          std::fprintf(
              stderr,
              "case %d (type %d, C %d): element %zu is %.17g, expected "
              "%.17g (batch %lld x %lld, m %lld n %lld k %lld, acc "
              "%d)\n",
              cases, type, cType, e, x, ref[e], (long long)g.b0,
              (long long)g.b1, (long long)g.m, (long long)g.n, (long long)g.k,
              int(g.accumulate));
          ++failures;
          break;
        }
      }
    }
  std::printf("cuBLAS mapping: %d of %d cases right (%d unsupported layouts "
              "rejected), %d cuBLAS calls\n",
              cases - failures, cases, rejected, calls);
  return failures ? 1 : 0;
}
