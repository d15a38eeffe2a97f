//===- CudaDevice.h - the CUDA runtime, loaded on demand --------*- C++ -*-===//
//
// A host that runs --target=cuda programs and still starts where no CUDA
// toolkit or driver is installed: libZeroRuntimeCUDA is opened only when a
// plan asks for it, from the folder of the libZeroRuntime this process
// uses, with global symbols so that the step library it then loads binds
// to this copy.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_CUDADEVICE_H
#define ZERO_RT_CUDADEVICE_H

#include <cstdint>
#include <string>

namespace zero::rt {

class CudaDevice {
public:
  CudaDevice() = default;
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  /// Opens the library and checks its interface version against
  /// `abiVersion` (the plan's cuda_runtime_abi); false with `error` set.
  bool load(int64_t abiVersion, std::string &error);
  /// zero_rt_cuda_init: selects the GPU of this rank, streams, cuBLAS and
  /// the collectives' backend (ZERO_RT_CUDA_COMM_*). Call after commInit.
  /// Returns the device ordinal.
  int init(int numCommStreams, int commBackend);
  void finalize();
  void setOverlap(bool overlap);
  /// Arena for the step's temporaries (the plan's arena bytes).
  void arenaInit(int64_t bytes);
  void *alloc(int64_t bytes);
  /// Copies in compute-stream order and waits for the copy.
  void copy(void *dst, const void *src, int64_t bytes);
  /// Waits for every stream; device-side failures are reported here.
  void synchronize();
  /// Device memory in use (every process on the device): the highest
  /// value sampled so far.
  int64_t memoryPeak();
  /// Records the memory in use now as the runtime's own (after init and
  /// the step library's kernels are loaded).
  void markRuntimeMemory();
  int64_t runtimeBytes() const { return runtimeBytes_; }

private:
  void *handle = nullptr;
  int64_t runtimeBytes_ = 0;
  int32_t (*init_)(int32_t, int32_t) = nullptr;
  void (*finalize_)() = nullptr;
  void (*setOverlap_)(int32_t) = nullptr;
  int64_t (*arenaInit_)(int64_t) = nullptr;
  int64_t (*alloc_)(int64_t) = nullptr;
  void (*memcpy_)(int64_t, int64_t, int64_t) = nullptr;
  void (*synchronize_)() = nullptr;
  int64_t (*memoryPeak_)() = nullptr;
  void (*memorySample_)() = nullptr;
};

} // namespace zero::rt

#endif
