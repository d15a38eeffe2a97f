//===- Internal.h - state shared by the CUDA runtime's files ----*- C++ -*-===//
//
// One device, its streams and handles per process. The step's thread owns
// the compute stream; the watchdog thread only queries events and NCCL.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_CUDA_INTERNAL_H
#define ZERO_RT_CUDA_INTERNAL_H

#include "zero-rt/Trace.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace zero::rt::cuda {

/// Driver functions (modules, launches, 16/32-bit fills) are taken from
/// the driver through the runtime (cudaGetDriverEntryPointByVersion)
/// instead of linking libcuda: the library then loads on machines without
/// a GPU driver, and hosts can link it unconditionally.
#define ZERO_CUDA_DRIVER_FUNCTIONS(X)                                          \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncSetAttribute)                                                        \
  X(cuFuncGetName)                                                             \
  X(cuLaunchKernel)                                                            \
  X(cuLaunchKernelEx)                                                          \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)
struct Driver {
#define ZERO_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  ZERO_CUDA_DRIVER_FUNCTIONS(ZERO_CUDA_DRIVER_MEMBER)
#undef ZERO_CUDA_DRIVER_MEMBER
};
/// Loaded on first use.
const Driver &driver();

/// cuBLAS's own default on Hopper, allocated once at init.
constexpr size_t kBlasWorkspaceBytes = size_t(32) << 20;

struct State {
  std::mutex m; ///< guards device selection and the event pools
  bool deviceChosen = false, initialized = false;
  int device = -1;
  cudaStream_t compute = nullptr;
  std::vector<cudaStream_t> commStreams;
  std::vector<ncclComm_t> comms;
  cublasHandle_t blas = nullptr;
  bool tf32 = false, overlap = true;
  bool mpiComm = false; ///< collectives over MPI through host memory
  void *arena = nullptr;
  int64_t arenaBytes = 0;
  int64_t arenaOwner = 0; ///< zero_rt_cuda_arena_claim's last owner
  void *blasWorkspace = nullptr;
  std::set<void *> allocations; ///< by zero_rt_cuda_alloc
  /// Device arrays of GEMM operand pointers (two-level batches), by the
  /// GEMM's operands and strides: made on first use, kept for the run.
  std::map<std::vector<int64_t>, void *> gemmPointers;
  int64_t memoryBaseline = 0, memoryPeak = 0;
  std::vector<cudaEvent_t> timingEvents, plainEvents;
};
State &state();

/// Prints one line naming the rank, `call` and `message`, and ends the job.
[[noreturn]] void fail(const std::string &call, const std::string &message);
void check(cudaError_t rc, const char *call);
void check(CUresult rc, const char *call);
void check(cublasStatus_t rc, const char *call);
void check(ncclResult_t rc, const char *call, ncclComm_t comm);

/// Selects the device if nothing did yet (from the environment's local
/// rank, no MPI) and makes it current on this thread (its primary context,
/// which cuBLAS, NCCL and loaded modules share).
void ensureContext();
/// Selects `device` if nothing did yet; fails naming `caller` when another
/// device was selected already.
void useDevice(int device, const char *caller);
cudaStream_t computeStream();
/// `stream`, or the compute stream for the null stream.
cudaStream_t orCompute(void *stream);
void sampleMemory();

/// Events are reused: creating one per collective or GEMM would cost more
/// than the operation on small tensors. Timing events only when tracing.
cudaEvent_t takeEvent(bool timing);
void giveEvent(cudaEvent_t event, bool timing);

/// An interval of a stream for the trace: begin records an event (null
/// when not tracing), end records the second and queues the pair; times
/// are resolved when the events complete.
cudaEvent_t traceBegin(cudaStream_t stream);
void traceEnd(cudaEvent_t begin, cudaStream_t stream, TraceEvent event);
/// The node of zero_rt_cuda_node's last call ("" for none).
const char *traceNode();
/// Records the finished intervals (all of them, waiting, when `wait`).
void traceFlush(bool wait);

/// NCCL side (Comm.cpp).
void commInitNccl(int numStreams);
void commFinalizeNccl();
void commCheckAsyncErrors();
/// Aborts every communicator so that peers blocked in a collective fail
/// instead of hanging while this process exits.
void commAbortNccl();

/// MPI side (CommMpi.cpp): collectives staged through host memory.
void commInitMpi();
void commFinalizeMpi();
int64_t commStartMpi(int32_t kind, int32_t dtype, const void *send, void *recv,
                     int64_t count);
void commWaitMpi(int64_t handle);

} // namespace zero::rt::cuda

#endif
