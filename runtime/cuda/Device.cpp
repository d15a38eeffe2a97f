//===- Device.cpp - device, streams, arena, errors and timings --*- C++ -*-===//
#include "Internal.h"

#include "zero-rt/Comm.h"
#include "zero-rt/RuntimeCUDA.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace zero::rt;
using namespace zero::rt::cuda;

State &zero::rt::cuda::state() {
  // Never destroyed: module destructors of a step may run after ours.
  static State *s = new State;
  return *s;
}

static std::atomic<bool> failing{false};

void zero::rt::cuda::fail(const std::string &call, const std::string &message) {
  // A failure while failing (a module destructor during exit) must not
  // print a second error or re-enter exit.
  if (failing.exchange(true))
    _exit(1);
  commAbort(call + " failed: " + message);
}

void zero::rt::cuda::check(cudaError_t rc, const char *call) {
  if (rc == cudaSuccess)
    return;
  fail(call,
       std::string(cudaGetErrorString(rc)) + " (" + cudaGetErrorName(rc) + ")");
}

void zero::rt::cuda::check(CUresult rc, const char *call) {
  if (rc == CUDA_SUCCESS)
    return;
  const char *name = nullptr, *text = nullptr;
  driver().cuGetErrorName(rc, &name);
  driver().cuGetErrorString(rc, &text);
  fail(call, std::string(text ? text : "unknown error") + " (" +
                 (name ? name : std::to_string((int)rc)) + ")");
}

const Driver &zero::rt::cuda::driver() {
  static const Driver *d = [] {
    auto *d = new Driver;
    cudaDriverEntryPointQueryResult found;
#define ZERO_CUDA_DRIVER_LOAD(name)                                            \
  check(cudaGetDriverEntryPointByVersion(                                      \
            #name, reinterpret_cast<void **>(&d->name), CUDA_VERSION,          \
            cudaEnableDefault, &found),                                        \
        "cudaGetDriverEntryPointByVersion");                                   \
  if (found != cudaDriverEntryPointSuccess)                                    \
    fail("cudaGetDriverEntryPointByVersion",                                   \
         "the CUDA driver has no " #name " (driver older than CUDA " +         \
             std::to_string(CUDA_VERSION / 1000) + ")");
    ZERO_CUDA_DRIVER_FUNCTIONS(ZERO_CUDA_DRIVER_LOAD)
#undef ZERO_CUDA_DRIVER_LOAD
    return d;
  }();
  return *d;
}

void zero::rt::cuda::check(cublasStatus_t rc, const char *call) {
  if (rc == CUBLAS_STATUS_SUCCESS)
    return;
  fail(call, std::string(cublasGetStatusString(rc)) + " (" +
                 cublasGetStatusName(rc) + ")");
}

void zero::rt::cuda::check(ncclResult_t rc, const char *call, ncclComm_t comm) {
  if (rc == ncclSuccess)
    return;
  std::string message = ncclGetErrorString(rc);
  const char *last = ncclGetLastError(comm);
  if (last && *last)
    message += std::string(": ") + last;
  commAbortNccl();
  fail(call, message);
}

/// The node-local rank from the launcher's environment, or -1.
static int localRankFromEnv() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (const char *v = std::getenv(name))
      return std::atoi(v);
  return -1;
}

static int64_t deviceMemoryUsed() {
  size_t freeBytes = 0, totalBytes = 0;
  check(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
  return (int64_t)(totalBytes - freeBytes);
}

/// Makes `device` this process's device: its primary context, which the
/// runtime API, cuBLAS and NCCL use too, and the compute stream. Called
/// with the state's lock held.
static void selectDevice(State &s, int device) {
  check(cudaSetDevice(device), "cudaSetDevice");
  // Creates the primary context now rather than inside the first call
  // that happens to need it.
  check(cudaFree(nullptr), "cudaFree");
  s.device = device;
  // Blocking (not cudaStreamNonBlocking): host code that uses the legacy
  // default stream stays ordered with the step.
  check(cudaStreamCreate(&s.compute), "cudaStreamCreate");
  s.memoryBaseline = s.memoryPeak = deviceMemoryUsed();
  s.deviceChosen = true;
}

static int deviceCount() {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc == cudaErrorNoDevice || (rc == cudaSuccess && count == 0))
    fail("cudaGetDeviceCount", "no CUDA device is visible to this process "
                               "(CUDA_VISIBLE_DEVICES, driver)");
  if (rc == cudaErrorInsufficientDriver)
    fail("cudaGetDeviceCount",
         "no NVIDIA driver on this machine (" +
             std::string(cudaGetErrorString(rc)) +
             "): a --target=cuda build runs on NVIDIA GPUs; compile with "
             "--target=cpu to run here");
  check(rc, "cudaGetDeviceCount");
  return count;
}

void zero::rt::cuda::ensureContext() {
  thread_local int current = -1;
  State &s = state();
  if (current >= 0 && current == s.device)
    return;
  {
    std::lock_guard<std::mutex> lock(s.m);
    if (!s.deviceChosen)
      selectDevice(s, std::max(localRankFromEnv(), 0) % deviceCount());
  }
  check(cudaSetDevice(s.device), "cudaSetDevice");
  current = s.device;
}

void zero::rt::cuda::useDevice(int device, const char *caller) {
  State &s = state();
  {
    std::lock_guard<std::mutex> lock(s.m);
    if (!s.deviceChosen) {
      int count = deviceCount();
      if (device < 0 || device >= count)
        fail(caller, "device " + std::to_string(device) + " does not exist (" +
                         std::to_string(count) + " visible)");
      selectDevice(s, device);
    } else if (s.device != device) {
      fail(caller, "device " + std::to_string(s.device) +
                       " was selected already (kernels loaded before "
                       "zero_rt_cuda_init, or another default device); "
                       "this runtime drives one device per process");
    }
  }
  ensureContext();
}

cudaStream_t zero::rt::cuda::computeStream() {
  ensureContext();
  return state().compute;
}

cudaStream_t zero::rt::cuda::orCompute(void *stream) {
  return stream ? static_cast<cudaStream_t>(stream) : computeStream();
}

void zero::rt::cuda::sampleMemory() {
  State &s = state();
  s.memoryPeak = std::max(s.memoryPeak, deviceMemoryUsed());
}

cudaEvent_t zero::rt::cuda::takeEvent(bool timing) {
  State &s = state();
  {
    std::lock_guard<std::mutex> lock(s.m);
    auto &pool = timing ? s.timingEvents : s.plainEvents;
    if (!pool.empty()) {
      cudaEvent_t e = pool.back();
      pool.pop_back();
      return e;
    }
  }
  cudaEvent_t e;
  check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault
                                            : cudaEventDisableTiming),
        "cudaEventCreateWithFlags");
  return e;
}

void zero::rt::cuda::giveEvent(cudaEvent_t event, bool timing) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.m);
  (timing ? s.timingEvents : s.plainEvents).push_back(event);
}

//===----------------------------------------------------------------------===//
// Trace: stream intervals timed by events, placed on commNow's clock
//===----------------------------------------------------------------------===//

namespace {
struct Interval {
  cudaEvent_t begin, end;
  TraceEvent event;
};
struct Timings {
  std::mutex m;
  cudaEvent_t epoch = nullptr; ///< completed at host time epochUs
  double epochUs = 0;
  std::vector<Interval> pending;
};
Timings &timings() {
  static Timings *t = new Timings;
  return *t;
}
} // namespace

cudaEvent_t zero::rt::cuda::traceBegin(cudaStream_t stream) {
  if (!traceEnabled())
    return nullptr;
  Timings &t = timings();
  if (!t.epoch) {
    // One host wait, on the first traced interval, ties the device's
    // clock to the trace's.
    cudaEvent_t epoch = takeEvent(true);
    check(cudaEventRecord(epoch, stream), "cudaEventRecord");
    check(cudaEventSynchronize(epoch), "cudaEventSynchronize");
    std::lock_guard<std::mutex> lock(t.m);
    t.epochUs = commNow();
    t.epoch = epoch;
  }
  cudaEvent_t begin = takeEvent(true);
  check(cudaEventRecord(begin, stream), "cudaEventRecord");
  return begin;
}

void zero::rt::cuda::traceEnd(cudaEvent_t begin, cudaStream_t stream,
                              TraceEvent event) {
  if (!begin)
    return;
  cudaEvent_t end = takeEvent(true);
  check(cudaEventRecord(end, stream), "cudaEventRecord");
  size_t pending;
  {
    Timings &t = timings();
    std::lock_guard<std::mutex> lock(t.m);
    t.pending.push_back({begin, end, std::move(event)});
    pending = t.pending.size();
  }
  // Bounds the events held by a long traced run.
  if (pending >= 4096)
    traceFlush(false);
}

void zero::rt::cuda::traceFlush(bool wait) {
  Timings &t = timings();
  std::vector<Interval> done;
  {
    std::lock_guard<std::mutex> lock(t.m);
    std::vector<Interval> left;
    for (Interval &i : t.pending) {
      cudaError_t rc =
          wait ? cudaEventSynchronize(i.end) : cudaEventQuery(i.end);
      if (rc == cudaErrorNotReady) {
        left.push_back(i);
        continue;
      }
      check(rc, wait ? "cudaEventSynchronize" : "cudaEventQuery");
      done.push_back(i);
    }
    t.pending = std::move(left);
  }
  for (Interval &i : done) {
    float startMs = 0, durMs = 0;
    check(cudaEventElapsedTime(&startMs, t.epoch, i.begin),
          "cudaEventElapsedTime");
    check(cudaEventElapsedTime(&durMs, i.begin, i.end), "cudaEventElapsedTime");
    i.event.ts = t.epochUs + 1000.0 * startMs;
    i.event.dur = 1000.0 * durMs;
    traceRecord(std::move(i.event));
    giveEvent(i.begin, true);
    giveEvent(i.end, true);
  }
}

static void flushForHost() {
  if (state().initialized)
    traceFlush(true);
}

//===----------------------------------------------------------------------===//
// C ABI
//===----------------------------------------------------------------------===//

extern "C" int32_t zero_rt_cuda_abi_version(void) {
  return ZERO_RT_CUDA_ABI_VERSION;
}

/// Fails on every rank of a node where two of them drive one GPU (its PCI
/// address, whatever each process's CUDA_VISIBLE_DEVICES): NCCL refuses
/// that, with a message that does not say what to do.
static void checkOneGpuPerRank(MPI_Comm node) {
  char bus[32] = {};
  check(cudaDeviceGetPCIBusId(bus, sizeof(bus), state().device),
        "cudaDeviceGetPCIBusId");
  int n = 0;
  MPI_Comm_size(node, &n);
  std::vector<char> all(sizeof(bus) * n);
  if (MPI_Allgather(bus, sizeof(bus), MPI_CHAR, all.data(), sizeof(bus),
                    MPI_CHAR, node) != MPI_SUCCESS)
    fail("MPI_Allgather", "the ranks' GPUs could not be compared: another "
                          "rank has exited");
  int sharing = 0;
  for (int i = 0; i < n; ++i)
    sharing += std::strncmp(&all[sizeof(bus) * i], bus, sizeof(bus)) == 0;
  if (sharing > 1)
    fail("zero_rt_cuda_init",
         std::to_string(sharing) + " ranks of this node drive its GPU " + bus +
             ", and NCCL takes one GPU per rank: run at most one rank per GPU, "
             "or pass zero-run --comm=mpi to share GPUs (collectives through "
             "host memory)");
}

extern "C" int32_t zero_rt_cuda_init(int32_t numCommStreams,
                                     int32_t commBackend) {
  State &s = state();
  if (s.initialized)
    fail("zero_rt_cuda_init", "the CUDA runtime is already initialized");
  if (numCommStreams < 1)
    fail("zero_rt_cuda_init", "needs at least one communication stream");
  if (commBackend != ZERO_RT_CUDA_COMM_NCCL &&
      commBackend != ZERO_RT_CUDA_COMM_MPI)
    fail("zero_rt_cuda_init",
         "unknown collectives backend " + std::to_string(commBackend));
  int count = deviceCount();
  int local = localRankFromEnv();
  int mpiUp = 0;
  MPI_Initialized(&mpiUp);
  MPI_Comm node = MPI_COMM_NULL;
  if (mpiUp && commWorldSize() > 1) {
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, (int)commRank(),
                        MPI_INFO_NULL, &node);
    if (local < 0)
      MPI_Comm_rank(node, &local);
  }
  useDevice(std::max(local, 0) % count, "zero_rt_cuda_init");
  ensureContext();
  s.mpiComm = commBackend == ZERO_RT_CUDA_COMM_MPI;
  if (node != MPI_COMM_NULL) {
    if (!s.mpiComm)
      checkOneGpuPerRank(node);
    MPI_Comm_free(&node);
  }
  for (int i = 0; i < numCommStreams; ++i) {
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags");
    s.commStreams.push_back(stream);
  }
  check(cublasCreate(&s.blas), "cublasCreate");
  check(cublasSetStream(s.blas, s.compute), "cublasSetStream");
  // The runtime's own device memory is taken here, so that what a step
  // adds is the compiler's plan: a fixed cuBLAS workspace instead of one
  // allocated at the first GEMM, and NCCL's connections made when the
  // communicators form instead of at their first collective.
  check(cudaMalloc(&s.blasWorkspace, kBlasWorkspaceBytes), "cudaMalloc");
  check(cublasSetWorkspace(s.blas, s.blasWorkspace, kBlasWorkspaceBytes),
        "cublasSetWorkspace");
  if (s.mpiComm) {
    commInitMpi();
  } else {
    setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0);
    commInitNccl(numCommStreams);
  }
  s.initialized = true;
  static bool registered = false;
  if (!registered)
    traceAddFlush(&flushForHost);
  registered = true;
  sampleMemory();
  return s.device;
}

extern "C" void zero_rt_cuda_synchronize(void) {
  State &s = state();
  ensureContext();
  check(cudaStreamSynchronize(s.compute), "cudaStreamSynchronize");
  for (cudaStream_t c : s.commStreams)
    check(cudaStreamSynchronize(c), "cudaStreamSynchronize");
  commCheckAsyncErrors();
  sampleMemory();
  traceFlush(false);
}

extern "C" void zero_rt_cuda_finalize(void) {
  State &s = state();
  if (!s.initialized)
    return;
  zero_rt_cuda_synchronize();
  traceFlush(true);
  if (s.mpiComm)
    commFinalizeMpi();
  else
    commFinalizeNccl();
  if (s.arena)
    check(cudaFree(s.arena), "cudaFree");
  s.arena = nullptr;
  s.arenaBytes = 0;
  for (auto &[key, pointers] : s.gemmPointers)
    check(cudaFree(pointers), "cudaFree");
  s.gemmPointers.clear();
  check(cublasDestroy(s.blas), "cublasDestroy");
  s.blas = nullptr;
  check(cudaFree(s.blasWorkspace), "cudaFree");
  s.blasWorkspace = nullptr;
  for (void *p : s.allocations)
    check(cudaFree(p), "cudaFree");
  s.allocations.clear();
  for (cudaStream_t c : s.commStreams)
    check(cudaStreamDestroy(c), "cudaStreamDestroy");
  s.commStreams.clear();
  // The compute stream, the events and the primary context stay: a step's
  // module destructors unload its kernels at exit.
  s.initialized = false;
}

extern "C" int32_t zero_rt_cuda_device(void) {
  ensureContext();
  return state().device;
}

extern "C" int64_t zero_rt_cuda_compute_stream(void) {
  return reinterpret_cast<int64_t>(computeStream());
}

extern "C" int64_t zero_rt_cuda_comm_stream(int32_t index) {
  State &s = state();
  if (s.commStreams.empty())
    fail("zero_rt_cuda_comm_stream", "the CUDA runtime is not initialized");
  return reinterpret_cast<int64_t>(
      s.commStreams[(size_t)index % s.commStreams.size()]);
}

extern "C" void zero_rt_cuda_memcpy(int64_t dst, int64_t src, int64_t bytes) {
  cudaStream_t stream = computeStream();
  check(cudaMemcpyAsync(reinterpret_cast<void *>(dst),
                        reinterpret_cast<const void *>(src), (size_t)bytes,
                        cudaMemcpyDefault, stream),
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

/// cudaMalloc, or the job's end with the sizes when the device is full.
static void *allocate(int64_t bytes, const char *what) {
  void *ptr = nullptr;
  cudaError_t rc = cudaMalloc(&ptr, (size_t)bytes);
  if (rc == cudaErrorMemoryAllocation) {
    size_t freeBytes = 0, totalBytes = 0;
    cudaGetLastError();
    cudaMemGetInfo(&freeBytes, &totalBytes);
    fail("cudaMalloc", std::string(what) + " of " + std::to_string(bytes) +
                           " bytes does not fit: the device has " +
                           std::to_string(freeBytes) + " of " +
                           std::to_string(totalBytes) + " bytes free");
  }
  check(rc, "cudaMalloc");
  return ptr;
}

extern "C" int64_t zero_rt_cuda_alloc(int64_t bytes) {
  State &s = state();
  ensureContext();
  if (bytes <= 0)
    return 0;
  void *ptr = allocate(bytes, "a buffer");
  {
    std::lock_guard<std::mutex> lock(s.m);
    s.allocations.insert(ptr);
  }
  sampleMemory();
  return reinterpret_cast<int64_t>(ptr);
}

extern "C" void zero_rt_cuda_free(int64_t address) {
  State &s = state();
  void *ptr = reinterpret_cast<void *>(address);
  if (!ptr)
    return;
  ensureContext();
  {
    std::lock_guard<std::mutex> lock(s.m);
    if (!s.allocations.erase(ptr))
      fail("zero_rt_cuda_free", "the address was not allocated by "
                                "zero_rt_cuda_alloc (or freed twice)");
  }
  // Work still queued may use it.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaFree(ptr), "cudaFree");
}

extern "C" int64_t zero_rt_cuda_arena_init(int64_t bytes) {
  State &s = state();
  ensureContext();
  s.arenaOwner = 0;
  if (s.arena) {
    // Work still queued may use the old arena.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check(cudaFree(s.arena), "cudaFree");
    s.arena = nullptr;
    s.arenaBytes = 0;
  }
  if (bytes > 0) {
    s.arena = allocate(bytes, "the arena");
    s.arenaBytes = bytes;
  }
  sampleMemory();
  return reinterpret_cast<int64_t>(s.arena);
}

extern "C" int64_t zero_rt_cuda_arena_base(void) {
  return reinterpret_cast<int64_t>(state().arena);
}
extern "C" int64_t zero_rt_cuda_arena_bytes(void) { return state().arenaBytes; }

extern "C" int64_t zero_rt_cuda_arena(int64_t bytes) {
  State &s = state();
  if (s.arenaBytes < bytes)
    fail("zero_rt_cuda_arena",
         "the step lays out " + std::to_string(bytes) +
             " bytes of device memory but the arena has " +
             std::to_string(s.arenaBytes) +
             " (zero_rt_cuda_arena_init with the plan's arena bytes first)");
  return reinterpret_cast<int64_t>(s.arena);
}

extern "C" int32_t zero_rt_cuda_arena_claim(int64_t owner) {
  State &s = state();
  bool changed = s.arenaOwner != owner;
  s.arenaOwner = owner;
  return changed ? 1 : 0;
}

namespace {
// Written and read by the thread that queues the step's work.
const char *currentNode = "";
} // namespace

extern "C" void zero_rt_cuda_node(int64_t name) {
  const char *node = reinterpret_cast<const char *>(name);
  currentNode = node ? node : "";
}

const char *zero::rt::cuda::traceNode() { return currentNode; }

extern "C" int64_t zero_rt_cuda_memory_baseline(void) {
  return state().memoryBaseline;
}
extern "C" int64_t zero_rt_cuda_memory_peak(void) { return state().memoryPeak; }
extern "C" void zero_rt_cuda_memory_sample(void) {
  ensureContext();
  sampleMemory();
}
