//===- cublas_shapes.cpp - cuBLAS speed against GEMM shapes ---*- C++ -*-===//
//
// Times cuBLAS on the vocabulary GEMMs of a GPT-2-sized step (vocabulary
// 50257, width 1600, 8192 tokens) exactly as zero-run calls it
// (cublasGemmStridedBatchedEx, operands swapped for row-major C), and on
// variants: leading dimensions on 16 bytes, the odd dimension rounded up
// to 50264 or 50304, bf16 or f32 results, f32 operands. The measurements
// behind zero-gpu-pad-gemm-dims (bench/RESULTS.md). Needs a GPU.
//
//   build/bin/zero-cublas-shapes
//
//===----------------------------------------------------------------------===//
#include "CudaCheck.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <vector>
cublasHandle_t h;
void *A, *B, *C;
struct Case {
  const char *name;
  cublasOperation_t o1, o2;
  int64_t m, n, k, lda, ldb, ldc;
  cudaDataType_t ab, c;
  bool strided;
  cublasComputeType_t ct;
};
double run(const Case &x) {
  float one = 1, zero = 0;
  cudaEvent_t s, e;
  cudaEventCreate(&s);
  cudaEventCreate(&e);
  std::vector<float> t;
  for (int i = 0; i < 8; ++i) {
    cudaEventRecord(s);
    cublasStatus_t st;
    if (x.strided)
      st = cublasGemmStridedBatchedEx_64(
          h, x.o1, x.o2, x.m, x.n, x.k, &one, A, x.ab, x.lda, 0, B, x.ab, x.ldb,
          0, &zero, C, x.c, x.ldc, 0, 1, x.ct, CUBLAS_GEMM_DEFAULT);
    else
      st = cublasGemmEx_64(h, x.o1, x.o2, x.m, x.n, x.k, &one, A, x.ab, x.lda,
                           B, x.ab, x.ldb, &zero, C, x.c, x.ldc, x.ct,
                           CUBLAS_GEMM_DEFAULT);
    cudaEventRecord(e);
    if (st) {
      std::printf("%-44s cublas status %d\n", x.name, (int)st);
      return -1;
    }
    CHECK(cudaEventSynchronize(e));
    float ms;
    cudaEventElapsedTime(&ms, s, e);
    if (i >= 3)
      t.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  double ms = t[t.size() / 2];
  std::printf("%-44s m %6lld n %6lld k %6lld ld %6lld %6lld %6lld  %8.3f ms  "
              "%6.1f TFLOP/s\n",
              x.name, (long long)x.m, (long long)x.n, (long long)x.k,
              (long long)x.lda, (long long)x.ldb, (long long)x.ldc, ms,
              2.0 * x.m * x.n * x.k / ms / 1e9);
  return ms;
}
int main() {
  CHECK(cublasCreate(&h));
  size_t big = size_t(8192) * 50272 * 4 + (1 << 20);
  CHECK(cudaMalloc(&A, big));
  CHECK(cudaMalloc(&B, big));
  CHECK(cudaMalloc(&C, big));
  CHECK(cudaMemset(A, 0x3c, big));
  CHECK(cudaMemset(B, 0x3c, big));
  CHECK(cudaMemset(C, 0x3c, big));
  auto T = CUBLAS_OP_T, N = CUBLAS_OP_N;
  auto bf = CUDA_R_16BF, f = CUDA_R_32F;
  auto c32 = CUBLAS_COMPUTE_32F;
  Case cases[] = {
      {"fwd  TN C f32 (zero-run, ldc padded)", T, N, 50257, 8192, 1600, 1600,
       1600, 50260, bf, f, true, c32},
      {"fwd  TN C f32 ldc 50257 (before)", T, N, 50257, 8192, 1600, 1600, 1600,
       50257, bf, f, true, c32},
      {"fwd  TN C f32 m 50264", T, N, 50264, 8192, 1600, 1600, 1600, 50264, bf,
       f, true, c32},
      {"fwd  TN C f32 m 50304", T, N, 50304, 8192, 1600, 1600, 1600, 50304, bf,
       f, true, c32},
      {"fwd  TN C f32 GemmEx", T, N, 50257, 8192, 1600, 1600, 1600, 50260, bf,
       f, false, c32},
      {"fwd  TN C bf16 ldc 50264", T, N, 50257, 8192, 1600, 1600, 1600, 50264,
       bf, bf, true, c32},
      {"fwd  NT swapped (C^T = X W^T) f32", N, T, 8192, 50257, 1600, 8192,
       50257, 8192, bf, f, true, c32},
      {"fwd  TN C f32 m 50257 n 8192 k 1600 fastTF", T, N, 50257, 8192, 1600,
       1600, 1600, 50260, bf, f, true, CUBLAS_COMPUTE_32F_FAST_16BF},
      {"dX   NN (zero-run, ldb padded)", N, N, 1600, 8192, 50257, 1600, 50264,
       1600, bf, f, true, c32},
      {"dX   NN ldb 50257 (before)", N, N, 1600, 8192, 50257, 1600, 50257, 1600,
       bf, f, true, c32},
      {"dX   NN k 50264", N, N, 1600, 8192, 50264, 1600, 50264, 1600, bf, f,
       true, c32},
      {"dX   NN k 50304", N, N, 1600, 8192, 50304, 1600, 50304, 1600, bf, f,
       true, c32},
      {"dW   NT (zero-run, lda/ldc padded)", N, T, 50257, 1600, 8192, 50264,
       1600, 50260, bf, f, true, c32},
      {"dW   NT lda 50257 ldc 50257 (before)", N, T, 50257, 1600, 8192, 50257,
       1600, 50257, bf, f, true, c32},
      {"dW   NT m 50264", N, T, 50264, 1600, 8192, 50264, 1600, 50264, bf, f,
       true, c32},
      {"ref  TN 6400x8192x1600 f32 C", T, N, 6400, 8192, 1600, 1600, 1600, 6400,
       bf, f, true, c32},
      {"fp32 fwd TN (zero-run)", T, N, 50257, 8192, 1600, 1600, 1600, 50260, f,
       f, true, c32},
      {"fp32 fwd TN m 50264", T, N, 50264, 8192, 1600, 1600, 1600, 50264, f, f,
       true, c32},
      {"fp32 dX NN (zero-run)", N, N, 1600, 8192, 50257, 1600, 50260, 1600, f,
       f, true, c32},
      {"fp32 dX NN k 50264", N, N, 1600, 8192, 50264, 1600, 50264, 1600, f, f,
       true, c32},
      {"fp32 ref TN 6400x8192x1600", T, N, 6400, 8192, 1600, 1600, 1600, 6400,
       f, f, true, c32},
  };
  for (auto &x : cases)
    run(x);
  return 0;
}
