//===- CudaHostEmulatorTest.cpp - the emulator's checks fire -----*- C++
//-*-===//
//
// test/gpu/host_emulated.py trusts the host emulator to reject what a GPU
// would reject or get wrong; this links it in place of the CUDA libraries
// and makes each of those mistakes once, next to the correct call.
//
//===----------------------------------------------------------------------===//
#include "zero-rt/Float16.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {
int failures = 0;

void expect(bool ok, const char *what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  failures += !ok;
}

/// The cubin again, inside this program, which exports a host copy of its
/// kernel as a step compiled with zero-opt --host-kernels does.
alignas(8) char imageInProgram[1 << 16];

template <typename Fn> Fn driverFunction(const char *name) {
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found;
  cudaGetDriverEntryPointByVersion(name, &fn, CUDA_VERSION, cudaEnableDefault,
                                   &found);
  return reinterpret_cast<Fn>(fn);
}
} // namespace

/// zero_test_scale's host copy as zero-gpu-host-kernels makes it, for a
/// memref<?xf32> (descriptor fields), a factor and a count: buf[i] *=
/// factor for i < n; and its argument spec.
extern "C" __attribute__((visibility("default"))) void
zero_host_kernel_zero_test_scale(void **params, int64_t gx, int64_t gy,
                                 int64_t gz, int64_t bx, int64_t by,
                                 int64_t bz) {
  float *buf =
      *static_cast<float **>(params[1]) + *static_cast<int64_t *>(params[2]);
  float factor = *static_cast<float *>(params[5]);
  uint64_t n = *static_cast<uint64_t *>(params[6]);
  for (int64_t i = 0; i < gx * gy * gz * bx * by * bz; ++i)
    if (uint64_t(i) < n)
      buf[i] *= factor;
}

extern "C" __attribute__((visibility("default")))
const char zero_host_kernel_zero_test_scale_args[] = "m1:4:rw s s";

extern "C" int64_t zero_cuda_emu_races();

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s scale_sm_90.cubin\n", argv[0]);
    return 2;
  }
  expect(cudaSetDevice(0) == cudaSuccess, "cudaSetDevice(0)");
  cudaStream_t stream;
  cudaStreamCreate(&stream);

  // Memory: copies inside an allocation, and one byte past it.
  void *buf = nullptr;
  expect(cudaMalloc(&buf, 1024) == cudaSuccess, "cudaMalloc 1024 B");
  size_t freeBytes = 0, total = 0;
  cudaMemGetInfo(&freeBytes, &total);
  expect(total - freeBytes == 1024, "cudaMemGetInfo counts the allocation");
  std::vector<char> host(2048, 1);
  expect(cudaMemcpyAsync(buf, host.data(), 1024, cudaMemcpyHostToDevice,
                         stream) == cudaSuccess,
         "a copy of 1024 B into 1024 B");
  expect(cudaMemcpyAsync(buf, host.data(), 1025, cudaMemcpyHostToDevice,
                         stream) == cudaErrorInvalidValue,
         "a copy of 1025 B into 1024 B is rejected");
  expect(cudaMemcpyAsync(host.data() + 1024, host.data(), 8,
                         cudaMemcpyHostToDevice,
                         stream) == cudaErrorInvalidValue,
         "a host-to-device copy to host memory is rejected");

  // Events: a wait on an event never recorded would not order anything.
  cudaEvent_t event;
  cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  expect(cudaStreamWaitEvent(stream, event, 0) != cudaSuccess,
         "a wait on an event never recorded is rejected");
  cudaEventRecord(event, stream);
  expect(cudaStreamWaitEvent(stream, event, 0) == cudaSuccess,
         "a wait on a recorded event");

  // cuBLAS: a 16 x 16 fp32 product fits in 1024 B; leading dimensions
  // below the rows and a C past the allocation do not.
  cublasHandle_t blas;
  cublasCreate(&blas);
  float one = 1, zero = 0;
  auto gemm = [&](int64_t m, int64_t ld, void *c) {
    return cublasGemmStridedBatchedEx_64(
        blas, CUBLAS_OP_N, CUBLAS_OP_T, m, m, m, &one, buf, CUDA_R_32F, ld, 0,
        buf, CUDA_R_32F, ld, 0, &zero, c, CUDA_R_32F, ld, 0, 1,
        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  expect(gemm(16, 16, buf) == CUBLAS_STATUS_SUCCESS, "a 16 x 16 GEMM");
  expect(gemm(16, 8, buf) == CUBLAS_STATUS_INVALID_VALUE,
         "a leading dimension below the rows is rejected");
  expect(gemm(16, 16, static_cast<char *>(buf) + 4) ==
             CUBLAS_STATUS_INVALID_VALUE,
         "a C that runs past the allocation is rejected");

  // Modules: the cubin's kernels, its architecture, CUDA's launch limits.
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<char> cubin((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  auto load = driverFunction<decltype(&cuModuleLoadData)>("cuModuleLoadData");
  auto get =
      driverFunction<decltype(&cuModuleGetFunction)>("cuModuleGetFunction");
  auto launch = driverFunction<decltype(&cuLaunchKernel)>("cuLaunchKernel");
  CUmodule module = nullptr;
  expect(!cubin.empty() && load(&module, cubin.data()) == CUDA_SUCCESS,
         "the sm_90 cubin loads on sm_90");
  CUfunction f = nullptr;
  expect(get(&f, module, "zero_test_scale") == CUDA_SUCCESS,
         "its kernel zero_test_scale is found");
  CUfunction none = nullptr;
  expect(get(&none, module, "zero_test_absent") == CUDA_ERROR_NOT_FOUND,
         "a kernel it does not have is not found");
  void *params[] = {&buf};
  expect(launch(f, 4, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr) ==
             CUDA_SUCCESS,
         "a launch of 4 blocks of 256 threads");
  expect(launch(f, 1, 1, 1, 2048, 1, 1, 0, nullptr, params, nullptr) ==
             CUDA_ERROR_INVALID_VALUE,
         "a block of 2048 threads is rejected");
  expect(launch(f, 1, 70000, 1, 32, 1, 1, 0, nullptr, params, nullptr) ==
             CUDA_ERROR_INVALID_VALUE,
         "a grid of 70000 in y is rejected");

  // A cubin whose object holds host copies of its kernels: launches run
  // them, GEMMs are computed from then on.
  CUmodule computing = nullptr;
  expect(cubin.size() <= sizeof(imageInProgram),
         "the cubin fits the program's buffer");
  std::memcpy(imageInProgram, cubin.data(),
              std::min(cubin.size(), sizeof(imageInProgram)));
  expect(load(&computing, imageInProgram) == CUDA_SUCCESS,
         "the cubin inside this program (a host copy exported) loads");
  CUfunction scale = nullptr;
  get(&scale, computing, "zero_test_scale");
  float values4[4] = {1, 2, 3, 4}, factor = 3;
  uint64_t n = 3;
  cudaMemcpy(buf, values4, sizeof(values4), cudaMemcpyHostToDevice);
  int64_t offset = 0, size = 4, stride = 1;
  void *scaleParams[] = {&buf, &buf, &offset, &size, &stride, &factor, &n};
  expect(launch(scale, 1, 1, 1, 4, 1, 1, 0, nullptr, scaleParams, nullptr) ==
             CUDA_SUCCESS,
         "a launch of the kernel with a host copy");
  cudaMemcpy(values4, buf, sizeof(values4), cudaMemcpyDeviceToHost);
  expect(values4[0] == 3 && values4[1] == 6 && values4[2] == 9 &&
             values4[3] == 4,
         "its host copy ran: buf[i] *= 3 for i < 3");
  size = 1000;
  expect(launch(scale, 1, 1, 1, 4, 1, 1, 0, nullptr, scaleParams, nullptr) ==
             CUDA_ERROR_INVALID_VALUE,
         "a kernel's buffer (memref<1000xf32>) past the allocation is "
         "rejected");
  size = 4;
  void *extra[] = {CU_LAUNCH_PARAM_END};
  expect(launch(scale, 1, 1, 1, 4, 1, 1, 0, nullptr, nullptr, extra) ==
             CUDA_ERROR_INVALID_VALUE,
         "parameters through `extra`, which the copy cannot read, are "
         "rejected");
  // op(A) = A^T of the stored 3 x 2 [1..6] (lda 3), B = [1 0 1; 0 1 1]
  // (3 x 2, ldb 3): C = [4 5; 10 11], column-major. bf16 operands.
  uint16_t ab[12];
  const float abValues[12] = {1, 2, 3, 4, 5, 6, 1, 0, 1, 0, 1, 1};
  for (int i = 0; i < 12; ++i)
    ab[i] = zero::rt::floatToBF16(abValues[i]);
  cudaMemcpy(buf, ab, sizeof(ab), cudaMemcpyHostToDevice);
  char *c = static_cast<char *>(buf) + 64;
  expect(cublasGemmStridedBatchedEx_64(
             blas, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, buf, CUDA_R_16BF, 3,
             0, static_cast<char *>(buf) + 12, CUDA_R_16BF, 3, 0, &zero, c,
             CUDA_R_32F, 2, 0, 1, CUBLAS_COMPUTE_32F,
             CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS,
         "a bf16 GEMM with fp32 output");
  float product[4];
  cudaMemcpy(product, c, sizeof(product), cudaMemcpyDeviceToHost);
  expect(product[0] == 4 && product[1] == 10 && product[2] == 5 &&
             product[3] == 11,
         "it computed C = A^T B");

  // NCCL on one rank: a bf16 all-reduce keeps the values; a count past the
  // allocation is rejected.
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclComm_t comm;
  expect(ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess,
         "a communicator of one rank");
  uint16_t values[4] = {zero::rt::floatToBF16(1.5f),
                        zero::rt::floatToBF16(-2.0f), 0, 0};
  cudaMemcpyAsync(buf, values, sizeof(values), cudaMemcpyHostToDevice, stream);
  expect(ncclAllReduce(buf, static_cast<char *>(buf) + 512, 4, ncclBfloat16,
                       ncclSum, comm, stream) == ncclSuccess,
         "a bf16 all-reduce");
  uint16_t back[4];
  cudaMemcpyAsync(back, static_cast<char *>(buf) + 512, sizeof(back),
                  cudaMemcpyDeviceToHost, stream);
  expect(std::memcmp(back, values, sizeof(back)) == 0,
         "its result on one rank is its input");
  // Two streams touching the same bytes, one writing, need an event wait or
  // a host synchronization between them. Each case starts from both
  // streams synchronized.
  cudaStream_t side;
  cudaStreamCreate(&side);
  char *at = static_cast<char *>(buf);
  auto settle = [&] {
    cudaStreamSynchronize(stream);
    cudaStreamSynchronize(side);
    return zero_cuda_emu_races();
  };
  int64_t races = settle();
  ncclAllReduce(at, at + 512, 4, ncclFloat32, ncclSum, comm, side);
  cudaMemcpyAsync(back, at + 512, 8, cudaMemcpyDeviceToHost, stream);
  expect(zero_cuda_emu_races() == races + 1,
         "a copy on one stream of what a collective on another writes, "
         "with no event between them, is a race");
  races = settle();
  cudaEvent_t done;
  cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  ncclAllReduce(at, at + 512, 4, ncclFloat32, ncclSum, comm, side);
  cudaEventRecord(done, side);
  cudaStreamWaitEvent(stream, done, 0);
  cudaMemcpyAsync(back, at + 512, 8, cudaMemcpyDeviceToHost, stream);
  expect(zero_cuda_emu_races() == races,
         "after a wait on an event recorded after the collective, it is not");
  races = settle();
  ncclAllReduce(at + 256, at + 512, 4, ncclFloat32, ncclSum, comm, side);
  void *shifted = at + 256;
  void *shiftedParams[] = {&shifted, &shifted, &offset, &size,
                           &stride,  &factor,  &n};
  launch(scale, 1, 1, 1, 4, 1, 1, 0, stream, shiftedParams, nullptr);
  expect(zero_cuda_emu_races() == races + 1,
         "a kernel writing what a collective on another stream reads, with "
         "no event between them, is a race");
  races = settle();
  ncclAllReduce(at + 256, at + 512, 4, ncclFloat32, ncclSum, comm, side);
  cudaStreamSynchronize(side);
  launch(scale, 1, 1, 1, 4, 1, 1, 0, stream, shiftedParams, nullptr);
  expect(zero_cuda_emu_races() == races,
         "after the host synchronized that stream, it is not");

  expect(ncclAllReduce(buf, static_cast<char *>(buf) + 512, 257, ncclFloat32,
                       ncclSum, comm, stream) == ncclInvalidArgument,
         "an all-reduce past the allocation is rejected");
  expect(ncclAllGather(host.data(), buf, 4, ncclFloat32, comm, stream) ==
             ncclInvalidArgument,
         "an all-gather from host memory is rejected");

  expect(cudaFree(buf) == cudaSuccess, "cudaFree");
  expect(cudaFree(buf) == cudaErrorInvalidValue, "a second cudaFree fails");
  std::printf("zero-cuda-host-emulator-test: %s\n",
              failures ? "FAILED" : "all passed");
  return failures ? 1 : 0;
}
