//===- Comm.cpp - NCCL collectives on communication streams -----*- C++ -*-===//
//
// A collective forks from the compute stream (event, stream wait), runs on
// a communication stream and joins back when waited for (event, stream
// wait): the host only enqueues. A watchdog thread polls NCCL's
// asynchronous errors and the completion of every collective in flight,
// and ends the job when one fails or takes longer than the timeout, which
// is how a dead or diverged rank ends the others.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include "zero-rt/Comm.h"
#include "zero-rt/RuntimeCUDA.h"

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <thread>

using namespace zero::rt;
using namespace zero::rt::cuda;

namespace {
struct InFlight {
  cudaEvent_t done;
  int32_t kind;
  int64_t bytes;
  double startedUs; ///< host time of the start
  bool waited = false, completed = false;
};

struct Comms {
  std::mutex m; ///< guards everything below; comms are in State
  std::map<int64_t, InFlight> inFlight;
  int64_t next = 0;
  std::vector<cudaEvent_t> forks; ///< one per communication stream
  double timeoutS = 600;
  bool stop = false, initializing = false;
  double initStartedUs = 0;
  std::condition_variable wake;
  std::thread *watchdog = nullptr; ///< never destroyed unless joined
};
Comms &comms() {
  static Comms *c = new Comms;
  return *c;
}

ncclDataType_t ncclType(int32_t dtype) {
  switch (dtype) {
  case ZERO_RT_F32:
    return ncclFloat32;
  case ZERO_RT_F64:
    return ncclFloat64;
  case ZERO_RT_F16:
    return ncclFloat16;
  case ZERO_RT_BF16:
    return ncclBfloat16;
  }
  fail("zero_rt_cuda_comm_start",
       "unknown element type " + std::to_string(dtype));
}

std::string timeoutText() {
  return std::to_string((int)comms().timeoutS) +
         " s: another rank is gone or stuck (ZERO_RT_NCCL_TIMEOUT_S sets "
         "the limit)";
}

/// Ends the job from the watchdog: peers blocked in NCCL kernels are freed
/// by aborting the communicators, then MPI ends every rank.
[[noreturn]] void watchdogFail(const std::string &call,
                               const std::string &message) {
  commAbortNccl();
  fail(call, message);
}

void watchdogLoop() {
  ensureContext();
  Comms &c = comms();
  State &s = state();
  std::unique_lock<std::mutex> lock(c.m);
  while (!c.stop) {
    c.wake.wait_for(lock, std::chrono::milliseconds(100));
    if (c.stop)
      break;
    double now = commNow();
    if (c.initializing) {
      if (now - c.initStartedUs > 1e6 * c.timeoutS)
        watchdogFail("ncclCommInitRank", "the communicator did not form "
                                         "within " +
                                             timeoutText());
      continue;
    }
    for (ncclComm_t comm : s.comms) {
      ncclResult_t async = ncclSuccess;
      ncclResult_t rc = ncclCommGetAsyncError(comm, &async);
      if (rc != ncclSuccess)
        async = rc;
      if (async != ncclSuccess && async != ncclInProgress) {
        const char *last = ncclGetLastError(comm);
        watchdogFail("NCCL (asynchronous error)",
                     std::string(ncclGetErrorString(async)) +
                         (last && *last ? std::string(": ") + last : ""));
      }
    }
    for (auto it = c.inFlight.begin(); it != c.inFlight.end();) {
      InFlight &f = it->second;
      if (!f.completed) {
        cudaError_t rc = cudaEventQuery(f.done);
        if (rc == cudaErrorNotReady) {
          if (now - f.startedUs > 1e6 * c.timeoutS)
            watchdogFail(collectiveName(f.kind),
                         "did not complete within " + timeoutText());
          ++it;
          continue;
        }
        if (rc != cudaSuccess)
          watchdogFail("cudaEventQuery", std::string(cudaGetErrorString(rc)) +
                                             " (" + cudaGetErrorName(rc) + ")");
        f.completed = true;
      }
      if (f.waited) {
        giveEvent(f.done, false);
        it = c.inFlight.erase(it);
      } else {
        ++it;
      }
    }
  }
}

void startWatchdog() {
  Comms &c = comms();
  if (const char *t = std::getenv("ZERO_RT_NCCL_TIMEOUT_S"))
    c.timeoutS = std::atof(t) > 0 ? std::atof(t) : c.timeoutS;
  c.stop = false;
  c.watchdog = new std::thread(watchdogLoop);
}
} // namespace

void zero::rt::cuda::commInitNccl(int numStreams) {
  State &s = state();
  Comms &c = comms();
  {
    std::lock_guard<std::mutex> lock(c.m);
    c.initializing = true;
    c.initStartedUs = commNow();
  }
  startWatchdog();
  int rank = (int)commRank(), size = (int)commWorldSize();
  ncclUniqueId id;
  if (rank == 0)
    check(ncclGetUniqueId(&id), "ncclGetUniqueId", nullptr);
  if (size > 1) {
    int rc = MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      fail("MPI_Bcast", "the NCCL bootstrap could not be sent: another rank "
                        "has exited");
  }
  ncclComm_t first;
  check(ncclCommInitRank(&first, size, id, rank), "ncclCommInitRank", nullptr);
  std::vector<ncclComm_t> all{first};
  // One communicator per stream: NCCL orders the operations of one
  // communicator, so streams sharing one would not overlap.
  for (int i = 1; i < numStreams; ++i) {
    ncclComm_t split;
    check(ncclCommSplit(first, 0, rank, &split, nullptr), "ncclCommSplit",
          first);
    all.push_back(split);
  }
  std::lock_guard<std::mutex> lock(c.m);
  s.comms = all;
  for (int i = 0; i < numStreams; ++i)
    c.forks.push_back(takeEvent(false));
  c.initializing = false;
}

void zero::rt::cuda::commCheckAsyncErrors() {
  for (ncclComm_t comm : state().comms) {
    ncclResult_t async = ncclSuccess;
    check(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError", comm);
    if (async != ncclInProgress)
      check(async, "NCCL (asynchronous error)", comm);
  }
}

void zero::rt::cuda::commAbortNccl() {
  // Called on the way out; no lock: the lock's holder may be the caller.
  for (ncclComm_t comm : state().comms)
    ncclCommAbort(comm);
  state().comms.clear();
}

void zero::rt::cuda::commFinalizeNccl() {
  State &s = state();
  Comms &c = comms();
  if (c.watchdog) {
    {
      std::lock_guard<std::mutex> lock(c.m);
      c.stop = true;
    }
    c.wake.notify_all();
    c.watchdog->join();
    delete c.watchdog;
    c.watchdog = nullptr;
  }
  for (auto &[id, f] : c.inFlight)
    giveEvent(f.done, false);
  c.inFlight.clear();
  for (cudaEvent_t e : c.forks)
    giveEvent(e, false);
  c.forks.clear();
  for (ncclComm_t comm : s.comms) {
    check(ncclCommFinalize(comm), "ncclCommFinalize", comm);
    check(ncclCommDestroy(comm), "ncclCommDestroy", comm);
  }
  s.comms.clear();
}

static void enqueue(int32_t kind, int32_t dtype, const void *send, void *recv,
                    int64_t count, ncclComm_t comm, cudaStream_t stream) {
  ncclDataType_t type = ncclType(dtype);
  size_t n = (size_t)count;
  if (kind == ZERO_RT_ALL_REDUCE)
    check(ncclAllReduce(send, recv, n, type, ncclSum, comm, stream),
          "ncclAllReduce", comm);
  else if (kind == ZERO_RT_REDUCE_SCATTER)
    check(ncclReduceScatter(send, recv, n, type, ncclSum, comm, stream),
          "ncclReduceScatter", comm);
  else if (kind == ZERO_RT_ALL_GATHER)
    check(ncclAllGather(send, recv, n, type, comm, stream), "ncclAllGather",
          comm);
  else
    fail("zero_rt_cuda_comm_start",
         "unknown collective kind " + std::to_string(kind));
}

extern "C" int64_t zero_rt_cuda_comm_start(int32_t kind, int32_t dtype,
                                           int64_t send, int64_t recv,
                                           int64_t count, int64_t commStream) {
  State &s = state();
  Comms &c = comms();
  if (!s.initialized)
    fail("zero_rt_cuda_comm_start", "the CUDA runtime is not initialized");
  ensureContext();
  const void *in = reinterpret_cast<const void *>(send);
  void *out = reinterpret_cast<void *>(recv);
  if (s.mpiComm)
    return commStartMpi(kind, dtype, in, out, count);
  int64_t bytes = commBytesSent(kind, dtype, count, commWorldSize());
  commCount(kind, bytes);
  if (!s.overlap) {
    cudaEvent_t begin = traceBegin(s.compute);
    enqueue(kind, dtype, in, out, count, s.comms[0], s.compute);
    traceEnd(begin, s.compute,
             {collectiveName(kind), "communication", 2, 0, 0, bytes, -1});
    return -1;
  }
  size_t index = (size_t)commStream % s.commStreams.size();
  cudaStream_t stream = s.commStreams[index];
  // The fork event is reused at once: a stream wait takes the event's
  // state when it is called.
  check(cudaEventRecord(c.forks[index], s.compute), "cudaEventRecord");
  check(cudaStreamWaitEvent(stream, c.forks[index], 0), "cudaStreamWaitEvent");
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(c.m);
    id = c.next++;
  }
  cudaEvent_t begin = traceBegin(stream);
  enqueue(kind, dtype, in, out, count, s.comms[index], stream);
  traceEnd(begin, stream,
           {collectiveName(kind), "communication", 2, 0, 0, bytes, id});
  cudaEvent_t done = takeEvent(false);
  check(cudaEventRecord(done, stream), "cudaEventRecord");
  std::lock_guard<std::mutex> lock(c.m);
  InFlight f{done, kind, bytes, commNow()};
  c.inFlight.emplace(id, f);
  return id;
}

extern "C" void zero_rt_cuda_comm_wait(int64_t handle) {
  if (handle < 0)
    return;
  State &s = state();
  Comms &c = comms();
  ensureContext();
  if (s.mpiComm)
    return commWaitMpi(handle);
  cudaEvent_t begin = traceBegin(s.compute);
  std::unique_lock<std::mutex> lock(c.m);
  auto it = c.inFlight.find(handle);
  if (it == c.inFlight.end() || it->second.waited)
    fail("zero_rt_cuda_comm_wait",
         "handle " + std::to_string(handle) +
             " names no collective in flight (waited for twice?)");
  InFlight &f = it->second;
  f.waited = true;
  TraceEvent e{std::string("wait ") + collectiveName(f.kind),
               "wait",
               1,
               0,
               0,
               f.bytes,
               handle};
  if (f.completed) {
    giveEvent(f.done, false);
    c.inFlight.erase(it);
  } else {
    // Under the lock: the watchdog recycles the event once it completed
    // and was waited for; the stream wait takes its state now.
    check(cudaStreamWaitEvent(s.compute, f.done, 0), "cudaStreamWaitEvent");
  }
  lock.unlock();
  traceEnd(begin, s.compute, std::move(e));
}

extern "C" void zero_rt_cuda_set_overlap(int32_t overlap) {
  state().overlap = overlap != 0;
  // Over MPI the communicator's thread is what overlaps.
  commSetOverlap(overlap != 0);
}
