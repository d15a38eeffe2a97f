//===- gpu_calibrate.cpp - the device figures of a hardware file -*- C++
//-*-===//
//
// Measures what `--report=timeline` reads from a hardware file's "device"
// on the GPU it runs on: GEMM rates per type through cuBLAS as zero-run
// calls it (8192^3, and a GPT-2 XL layer's 8192 x 6400 x 1600), device
// memory bandwidth (a device-to-device copy, bytes read plus written) and
// the interval between back-to-back kernel launches on one stream (an
// empty kernel, loaded from PTX), with the device's memory, resident
// threads and L2 cache as the driver reports them. Prints the fragment as
// JSON, the GEMM rates at the layer's shape. Median of 5 timed
// repetitions after 2.
//
//   build/bin/zero-gpu-calibrate
//
//===----------------------------------------------------------------------===//
#include "CudaCheck.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace {

const char *kEmptyPtx = ".version 7.0\n.target sm_80\n.address_size 64\n"
                        ".visible .entry zero_empty() { ret; }\n";

/// Median milliseconds of `work` on the default stream.
double medianMs(const std::function<void()> &work) {
  cudaEvent_t begin, end;
  CHECK(cudaEventCreate(&begin));
  CHECK(cudaEventCreate(&end));
  std::vector<float> times;
  for (int i = 0; i < 7; ++i) {
    CHECK(cudaEventRecord(begin));
    work();
    CHECK(cudaEventRecord(end));
    CHECK(cudaEventSynchronize(end));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, begin, end));
    if (i >= 2)
      times.push_back(ms);
  }
  CHECK(cudaGetLastError());
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// FLOP/s of C (f32) = A^T B in `ab` with `compute`, m x n x k.
double gemmRate(cublasHandle_t h, cudaDataType_t ab,
                cublasComputeType_t compute, int64_t m, int64_t n, int64_t k,
                void *a, void *b, void *c) {
  float one = 1, zero = 0;
  double ms = medianMs([&] {
    CHECK(cublasGemmEx_64(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, a, ab, k,
                          b, ab, k, &zero, c, CUDA_R_32F, m, compute,
                          CUBLAS_GEMM_DEFAULT));
  });
  return 2.0 * m * n * k / (ms * 1e-3);
}
} // namespace

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cublasHandle_t h;
  CHECK(cublasCreate(&h));
  const size_t bytes = size_t(8192) * 8192 * 4;
  void *a, *b, *c;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMalloc(&c, bytes));
  // Small values, not zeros (zeros run faster).
  CHECK(cudaMemset(a, 0x3c, bytes));
  CHECK(cudaMemset(b, 0x3c, bytes));

  struct Type {
    const char *name;
    cudaDataType_t ab;
    cublasComputeType_t compute;
  } types[] = {{"bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F},
               {"fp16", CUDA_R_16F, CUBLAS_COMPUTE_32F},
               {"tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
               {"fp32", CUDA_R_32F, CUBLAS_COMPUTE_32F}};
  std::vector<double> cube, layer;
  for (const Type &t : types) {
    cube.push_back(gemmRate(h, t.ab, t.compute, 8192, 8192, 8192, a, b, c));
    layer.push_back(gemmRate(h, t.ab, t.compute, 6400, 8192, 1600, a, b, c));
  }
  double copyMs =
      medianMs([&] { CHECK(cudaMemcpyAsync(c, a, bytes, cudaMemcpyDefault)); });
  double bandwidth = 2.0 * bytes / (copyMs * 1e-3);

  cudaLibrary_t lib;
  cudaKernel_t kernel;
  CHECK(cudaLibraryLoadData(&lib, kEmptyPtx, nullptr, nullptr, 0, nullptr,
                            nullptr, 0));
  CHECK(cudaLibraryGetKernel(&kernel, lib, "zero_empty"));
  const int launches = 10000;
  double launchMs = medianMs([&] {
    for (int i = 0; i < launches; ++i)
      CHECK(cudaLaunchKernel((const void *)kernel, dim3(132), dim3(256),
                             nullptr, 0, nullptr));
  });

  std::printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  for (size_t i = 0; i < cube.size(); ++i)
    std::printf("  %-5s GEMM 8192^3 %7.1f TFLOP/s, 6400 x 8192 x 1600 %7.1f "
                "TFLOP/s\n",
                types[i].name, cube[i] / 1e12, layer[i] / 1e12);
  std::printf("  device-to-device copy of %zu B: %.3f ms, %.3f TB/s\n", bytes,
              copyMs, bandwidth / 1e12);
  std::printf("  %d empty launches: %.3f ms, %.2f us each\n", launches,
              launchMs, launchMs * 1e3 / launches);
  // The timeline runs every GEMM at one rate per type: the layer's, the
  // shape a transformer's GEMMs have, not the best case.
  std::printf("{\"peak_flops\": {");
  for (size_t i = 0; i < layer.size(); ++i)
    std::printf("%s\"%s\": %.4g", i ? ", " : "", types[i].name, layer[i]);
  std::printf("}, \"memory_bandwidth\": %.4g, \"op_overhead\": %.3g, "
              "\"memory_bytes\": %zu, \"threads\": %d, \"cache_bytes\": %d}\n",
              bandwidth, launchMs * 1e-3 / launches, prop.totalGlobalMem,
              prop.multiProcessorCount * prop.maxThreadsPerMultiProcessor,
              prop.l2CacheSize);
  return 0;
}
