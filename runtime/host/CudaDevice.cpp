//===- CudaDevice.cpp - the CUDA runtime, loaded on demand ------*- C++ -*-===//
#include "zero-rt/CudaDevice.h"
#include "zero-rt/Runtime.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>
#include <type_traits>

using namespace zero::rt;

bool CudaDevice::load(int64_t abiVersion, std::string &error) {
  // The library sits next to the CPU runtime it extends.
  Dl_info info;
  if (!dladdr(reinterpret_cast<void *>(&zero_rt_abi_version), &info) ||
      !info.dli_fname) {
    error = "cannot locate libZeroRuntime to find the CUDA runtime beside it";
    return false;
  }
  llvm::SmallString<256> lib(llvm::sys::path::parent_path(info.dli_fname));
  llvm::sys::path::append(lib, "libZeroRuntimeCUDA.so");
  std::string path = lib.str().str();
  if (!llvm::sys::fs::exists(path)) {
    error = "this program was compiled with --target=cuda, and this zero-run "
            "has no CUDA runtime (" +
            path +
            "; it is built where CMake finds the CUDA toolkit and NCCL); "
            "recompile with --target=cpu to run here";
    return false;
  }
  // Global: the step library resolves the mgpu* and zero_rt_cuda_* calls
  // against this copy.
  handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    error = "cannot load the CUDA runtime " + path + ": " + dlerror();
    return false;
  }
  bool missing = false;
  auto get = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        dlsym(handle, name));
    if (!fn && !missing) {
      missing = true;
      error = path + ": no " + name;
    }
  };
  int32_t (*abi)() = nullptr;
  get(abi, "zero_rt_cuda_abi_version");
  get(init_, "zero_rt_cuda_init");
  get(finalize_, "zero_rt_cuda_finalize");
  get(setOverlap_, "zero_rt_cuda_set_overlap");
  get(arenaInit_, "zero_rt_cuda_arena_init");
  get(alloc_, "zero_rt_cuda_alloc");
  get(memcpy_, "zero_rt_cuda_memcpy");
  get(synchronize_, "zero_rt_cuda_synchronize");
  get(memoryPeak_, "zero_rt_cuda_memory_peak");
  get(memorySample_, "zero_rt_cuda_memory_sample");
  if (missing)
    return false;
  if (abi() != abiVersion) {
    error = "the program was compiled for CUDA runtime interface " +
            std::to_string(abiVersion) + ", " + path + " has " +
            std::to_string(abi()) + "; recompile the model";
    return false;
  }
  return true;
}

int CudaDevice::init(int numCommStreams, int commBackend) {
  return init_(numCommStreams, commBackend);
}
void CudaDevice::finalize() {
  if (finalize_)
    finalize_();
}
void CudaDevice::setOverlap(bool overlap) { setOverlap_(overlap); }
void CudaDevice::arenaInit(int64_t bytes) { arenaInit_(bytes); }
void *CudaDevice::alloc(int64_t bytes) {
  return reinterpret_cast<void *>(alloc_(bytes));
}
void CudaDevice::copy(void *dst, const void *src, int64_t bytes) {
  if (bytes > 0)
    memcpy_(reinterpret_cast<int64_t>(dst), reinterpret_cast<int64_t>(src),
            bytes);
}
void CudaDevice::synchronize() { synchronize_(); }
int64_t CudaDevice::memoryPeak() { return memoryPeak_(); }
void CudaDevice::markRuntimeMemory() {
  // Setup only allocates, so the peak so far is what is in use now.
  memorySample_();
  runtimeBytes_ = memoryPeak_();
}
