//===- MlirGpu.cpp - the mgpu* calls of MLIR's GPU lowering -----*- C++ -*-===//
//
// gpu-to-llvm turns gpu.launch_func, gpu.alloc, gpu.wait, gpu.memcpy, ...
// into calls of these functions, and the gpu.binary translation loads the
// embedded cubin, fatbin or PTX from a module constructor. Signatures are
// LLVM 22's (mgpuLaunchKernel's trailing parameter count, mgpuMemAlloc's
// host-shared flag, mgpuModuleLoad's size). Streams are the runtime's
// compute stream, so the step's kernels, GEMMs and collectives share one
// order.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include "zero-rt/RuntimeCUDA.h"

#include <cstring>
#include <set>

using namespace zero::rt;
using namespace zero::rt::cuda;

namespace {
std::mutex managedMutex;
std::set<void *> managed; ///< host-shared allocations (cuMemFree, not async)

CUstream stream(void *s) { return orCompute(s); }

bool ownStream(void *s) {
  State &st = state();
  if (s == st.compute)
    return true;
  for (cudaStream_t c : st.commStreams)
    if (s == c)
      return true;
  return false;
}

/// A launch as a compute interval in the trace, named by its kernel.
struct LaunchTrace {
  cudaEvent_t begin;
  CUstream s;
  CUfunction f;
  const char *node;
  LaunchTrace(CUstream s, CUfunction f)
      : begin(traceBegin(s)), s(s), f(f), node(traceNode()) {}
  ~LaunchTrace() {
    if (!begin)
      return;
    const char *name = nullptr;
    if (driver().cuFuncGetName(&name, f) != CUDA_SUCCESS || !name)
      name = "kernel";
    traceEnd(begin, s, {name, "compute", 1, 0, 0, 0, -1, node, "kernel"});
  }
};

/// Kernels over 48 KiB of dynamic shared memory must opt in.
void allowSharedMemory(CUfunction f, int32_t smem) {
  if (smem > 48 * 1024)
    check(driver().cuFuncSetAttribute(
              f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem),
          "cuFuncSetAttribute");
}
} // namespace

extern "C" void *mgpuModuleLoad(void *data, size_t size) {
  (void)size; // cubins and fatbins carry their size in their headers
  ensureContext();
  CUmodule module = nullptr;
  CUresult rc = driver().cuModuleLoadData(&module, data);
  if (rc == CUDA_ERROR_NO_BINARY_FOR_GPU) {
    // A cubin runs only on its own architecture's major version: say
    // which one this GPU needs.
    int major = 0, minor = 0, device = state().device;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    std::string arch = "sm_" + std::to_string(major * 10 + minor);
    std::string fix = major == 8 || major == 9
                          ? "recompile with --gpu-arch=sm_" +
                                std::to_string(major * 10) +
                                " (or a list that includes it)"
                          : "zero-opt compiles for sm_80 and sm_90 GPUs only";
    fail("cuModuleLoadData", "the step's kernels have no cubin for this GPU (" +
                                 arch + "): " + fix);
  }
  check(rc, "cuModuleLoadData");
  return module;
}

extern "C" void *mgpuModuleLoadJIT(void *ptx, int optLevel) {
  ensureContext();
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>((intptr_t)optLevel)};
  CUmodule module = nullptr;
  CUresult rc = driver().cuModuleLoadDataEx(&module, ptx, 3, options, values);
  if (rc != CUDA_SUCCESS && log[0]) {
    // The driver's compiler log, folded into the one error line.
    for (char *p = log; *p; ++p)
      if (*p == '\n')
        *p = ' ';
    const char *text = nullptr;
    driver().cuGetErrorString(rc, &text);
    fail("cuModuleLoadDataEx (PTX JIT)",
         std::string(text ? text : "error") + ": " + log);
  }
  check(rc, "cuModuleLoadDataEx (PTX JIT)");
  return module;
}

extern "C" void mgpuModuleUnload(void *module) {
  ensureContext();
  CUresult rc = driver().cuModuleUnload(static_cast<CUmodule>(module));
  // Module destructors may run after the driver shut down at exit.
  if (rc == CUDA_ERROR_DEINITIALIZED || rc == CUDA_ERROR_CONTEXT_IS_DESTROYED)
    return;
  check(rc, "cuModuleUnload");
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  ensureContext();
  CUfunction f = nullptr;
  CUresult rc =
      driver().cuModuleGetFunction(&f, static_cast<CUmodule>(module), name);
  if (rc == CUDA_ERROR_NOT_FOUND)
    fail("cuModuleGetFunction",
         std::string("the loaded module has no kernel named '") + name + "'");
  check(rc, "cuModuleGetFunction");
  return f;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ, int32_t smem,
                                 void *s, void **params, void **extra,
                                 size_t paramsCount) {
  (void)paramsCount; // the kernel's signature in the module says it
  CUstream st = stream(s);
  auto f = static_cast<CUfunction>(function);
  allowSharedMemory(f, smem);
  LaunchTrace trace(st, f);
  check(driver().cuLaunchKernel(f, (unsigned)gridX, (unsigned)gridY,
                                (unsigned)gridZ, (unsigned)blockX,
                                (unsigned)blockY, (unsigned)blockZ,
                                (unsigned)smem, st, params, extra),
        "cuLaunchKernel");
}

extern "C" void mgpuLaunchClusterKernel(void *function, intptr_t clusterX,
                                        intptr_t clusterY, intptr_t clusterZ,
                                        intptr_t gridX, intptr_t gridY,
                                        intptr_t gridZ, intptr_t blockX,
                                        intptr_t blockY, intptr_t blockZ,
                                        int32_t smem, void *s, void **params,
                                        void **extra) {
  CUstream st = stream(s);
  auto f = static_cast<CUfunction>(function);
  allowSharedMemory(f, smem);
  // Clusters above 8 blocks are not portable and must be allowed.
  if (clusterX * clusterY * clusterZ > 8)
    check(driver().cuFuncSetAttribute(
              f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
          "cuFuncSetAttribute");
  CUlaunchAttribute attr;
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = (unsigned)clusterX;
  attr.value.clusterDim.y = (unsigned)clusterY;
  attr.value.clusterDim.z = (unsigned)clusterZ;
  CUlaunchConfig config = {};
  config.gridDimX = (unsigned)gridX;
  config.gridDimY = (unsigned)gridY;
  config.gridDimZ = (unsigned)gridZ;
  config.blockDimX = (unsigned)blockX;
  config.blockDimY = (unsigned)blockY;
  config.blockDimZ = (unsigned)blockZ;
  config.sharedMemBytes = (unsigned)smem;
  config.hStream = st;
  config.attrs = &attr;
  config.numAttrs = 1;
  LaunchTrace trace(st, f);
  check(driver().cuLaunchKernelEx(&config, f, params, extra),
        "cuLaunchKernelEx");
}

extern "C" void *mgpuStreamCreate(void) { return computeStream(); }

extern "C" void mgpuStreamDestroy(void *s) {
  if (!s || ownStream(s))
    return;
  ensureContext();
  check(cudaStreamDestroy(static_cast<cudaStream_t>(s)), "cudaStreamDestroy");
}

extern "C" void mgpuStreamSynchronize(void *s) {
  check(cudaStreamSynchronize(stream(s)), "cudaStreamSynchronize");
}

extern "C" void mgpuStreamWaitEvent(void *s, void *event) {
  check(cudaStreamWaitEvent(stream(s), static_cast<cudaEvent_t>(event), 0),
        "cudaStreamWaitEvent");
}

extern "C" void *mgpuEventCreate(void) {
  ensureContext();
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
  return event;
}

extern "C" void mgpuEventDestroy(void *event) {
  ensureContext();
  check(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy");
}

extern "C" void mgpuEventSynchronize(void *event) {
  ensureContext();
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(event)),
        "cudaEventSynchronize");
}

extern "C" void mgpuEventRecord(void *event, void *s) {
  check(cudaEventRecord(static_cast<cudaEvent_t>(event), stream(s)),
        "cudaEventRecord");
}

extern "C" void *mgpuMemAlloc(uint64_t bytes, void *s, bool isHostShared) {
  cudaStream_t st = stream(s);
  void *ptr = nullptr;
  if (bytes == 0)
    return nullptr;
  if (isHostShared) {
    check(cudaMallocManaged(&ptr, bytes, cudaMemAttachGlobal),
          "cudaMallocManaged");
    std::lock_guard<std::mutex> lock(managedMutex);
    managed.insert(ptr);
  } else {
    // Stream-ordered: no device-wide synchronization per allocation.
    check(cudaMallocAsync(&ptr, bytes, st), "cudaMallocAsync");
  }
  sampleMemory();
  return ptr;
}

extern "C" void mgpuMemFree(void *ptr, void *s) {
  if (!ptr)
    return;
  cudaStream_t st = stream(s);
  {
    std::lock_guard<std::mutex> lock(managedMutex);
    auto it = managed.find(ptr);
    if (it != managed.end()) {
      managed.erase(it);
      check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
      check(cudaFree(ptr), "cudaFree");
      return;
    }
  }
  check(cudaFreeAsync(ptr, st), "cudaFreeAsync");
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t bytes, void *s) {
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream(s)),
        "cudaMemcpyAsync");
}

extern "C" void mgpuMemset32(void *dst, uint32_t value, size_t count, void *s) {
  check(driver().cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                  count, stream(s)),
        "cuMemsetD32Async");
}

extern "C" void mgpuMemset16(void *dst, uint16_t value, size_t count, void *s) {
  check(driver().cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                  count, stream(s)),
        "cuMemsetD16Async");
}

namespace {
/// The bytes a ranked memref descriptor {allocated, aligned, offset,
/// sizes[rank], strides[rank]} spans from its first element.
void memrefSpan(int64_t rank, void *descriptor, int64_t elementSizeBytes,
                char *&first, size_t &bytes) {
  auto *d = static_cast<char *>(descriptor);
  char *aligned;
  std::memcpy(&aligned, d + sizeof(void *), sizeof(void *));
  auto *fields = reinterpret_cast<int64_t *>(d + 2 * sizeof(void *));
  int64_t offset = fields[0];
  const int64_t *sizes = fields + 1, *strides = fields + 1 + rank;
  int64_t last = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0) {
      bytes = 0;
      first = aligned + offset * elementSizeBytes;
      return;
    }
    last += (sizes[i] - 1) * strides[i];
  }
  first = aligned + offset * elementSizeBytes;
  bytes = (size_t)((last + 1) * elementSizeBytes);
}
} // namespace

extern "C" void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                          int64_t elementSizeBytes) {
  ensureContext();
  char *first;
  size_t bytes;
  memrefSpan(rank, descriptor, elementSizeBytes, first, bytes);
  if (bytes)
    check(cudaHostRegister(first, bytes, cudaHostRegisterDefault),
          "cudaHostRegister");
}

extern "C" void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                            int64_t elementSizeBytes) {
  ensureContext();
  char *first;
  size_t bytes;
  memrefSpan(rank, descriptor, elementSizeBytes, first, bytes);
  if (bytes)
    check(cudaHostUnregister(first), "cudaHostUnregister");
}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  useDevice(device, "mgpuSetDefaultDevice");
}
