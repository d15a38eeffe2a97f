//===- CommMpi.cpp - collectives over MPI through host memory ---*- C++ -*-===//
//
// For ranks that share a GPU, which NCCL refuses: a collective forks from
// the compute stream (an event), and a staging thread waits for it, copies
// the input to host memory, runs the MPI collective on its own
// communicator, copies the result back on its stream and records the
// event the compute stream waits on. Collectives run one at a time in
// program order, the same on every rank. Without overlap (or without
// MPI_THREAD_MULTIPLE) the calling thread does the same and returns when
// the result is on the device.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include "zero-rt/Comm.h"
#include "zero-rt/RuntimeCUDA.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <thread>

using namespace zero::rt;
using namespace zero::rt::cuda;

namespace {
struct Job {
  int32_t kind, dtype;
  const void *send;
  void *recv;
  int64_t count, bytes;
  int64_t id = -1; ///< the trace's number of the call; -1 when synchronous
  cudaEvent_t fork = nullptr, done = nullptr;
  bool finished = false, failed = false;
};

/// Host copies of one collective's input and output, page-locked so the
/// copies are DMA; grown, never shrunk.
struct HostBuffer {
  std::vector<char> bytes;
  char *get(size_t n) {
    if (n > bytes.size()) {
      if (!bytes.empty())
        check(cudaHostUnregister(bytes.data()), "cudaHostUnregister");
      bytes = std::vector<char>(n);
      check(cudaHostRegister(bytes.data(), n, cudaHostRegisterDefault),
            "cudaHostRegister");
    }
    return bytes.data();
  }
  void release() {
    if (!bytes.empty())
      check(cudaHostUnregister(bytes.data()), "cudaHostUnregister");
    bytes = {};
  }
};

struct Staging {
  std::mutex m; ///< guards everything below but the buffers and stream
  std::condition_variable work, finished;
  std::map<int64_t, Job> jobs;
  std::deque<int64_t> queue;
  int64_t next = 0;
  bool stop = false;
  std::thread thread;
  /// The staging thread's (or the synchronous caller's) copies.
  cudaStream_t stream = nullptr;
  HostBuffer send, recv;
};
Staging &staging() {
  static Staging *st = new Staging;
  return *st;
}

size_t elementBytes(int32_t dtype) {
  switch (dtype) {
  case ZERO_RT_F32:
    return 4;
  case ZERO_RT_F64:
    return 8;
  case ZERO_RT_F16:
  case ZERO_RT_BF16:
    return 2;
  }
  fail("zero_rt_cuda_comm_start",
       "unknown element type " + std::to_string(dtype));
}

/// Device to host, the collective, host to device; `done` (if any) is
/// recorded after the copy back. False when MPI failed on the thread.
bool run(const Job &j, bool onThread) {
  Staging &st = staging();
  size_t e = elementBytes(j.dtype), n = (size_t)commWorldSize();
  size_t in = e * j.count * (j.kind == ZERO_RT_REDUCE_SCATTER ? n : 1);
  size_t out = e * j.count * (j.kind == ZERO_RT_ALL_GATHER ? n : 1);
  char *hostIn = st.send.get(in), *hostOut = st.recv.get(out);
  cudaEvent_t begin = traceBegin(st.stream);
  check(cudaMemcpyAsync(hostIn, j.send, in, cudaMemcpyDeviceToHost, st.stream),
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize");
  bool ok = true;
  if (onThread)
    ok = commCollectiveOnThread(j.kind, j.dtype, hostIn, hostOut, j.count);
  else
    commCollective(j.kind, j.dtype, hostIn, hostOut, j.count);
  if (!ok)
    return false;
  check(
      cudaMemcpyAsync(j.recv, hostOut, out, cudaMemcpyHostToDevice, st.stream),
      "cudaMemcpyAsync");
  traceEnd(begin, st.stream,
           {collectiveName(j.kind), "communication", 2, 0, 0, j.bytes, j.id});
  if (j.done)
    check(cudaEventRecord(j.done, st.stream), "cudaEventRecord");
  // The host buffers serve the next collective.
  check(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize");
  return true;
}

void stagingLoop() {
  ensureContext();
  Staging &st = staging();
  std::unique_lock<std::mutex> lock(st.m);
  while (true) {
    st.work.wait(lock, [&] { return st.stop || !st.queue.empty(); });
    if (st.queue.empty())
      return;
    int64_t id = st.queue.front();
    st.queue.pop_front();
    Job job = st.jobs[id];
    lock.unlock();
    check(cudaEventSynchronize(job.fork), "cudaEventSynchronize");
    bool ok = run(job, /*onThread=*/true);
    lock.lock();
    Job &j = st.jobs[id];
    j.finished = true;
    j.failed = !ok;
    st.finished.notify_all();
  }
}
} // namespace

void zero::rt::cuda::commInitMpi() {
  check(cudaStreamCreateWithFlags(&staging().stream, cudaStreamNonBlocking),
        "cudaStreamCreateWithFlags");
}

void zero::rt::cuda::commFinalizeMpi() {
  Staging &st = staging();
  if (st.thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(st.m);
      st.stop = true;
    }
    st.work.notify_all();
    st.thread.join();
  }
  for (auto &[id, j] : st.jobs)
    for (cudaEvent_t e : {j.fork, j.done})
      if (e)
        giveEvent(e, false);
  st.jobs.clear();
  st.send.release();
  st.recv.release();
  if (st.stream)
    check(cudaStreamDestroy(st.stream), "cudaStreamDestroy");
  st.stream = nullptr;
}

int64_t zero::rt::cuda::commStartMpi(int32_t kind, int32_t dtype,
                                     const void *send, void *recv,
                                     int64_t count) {
  if (kind < 0 || kind >= ZERO_RT_NUM_COLLECTIVES)
    fail("zero_rt_cuda_comm_start",
         "unknown collective kind " + std::to_string(kind));
  State &s = state();
  Staging &st = staging();
  int64_t bytes = commBytesSent(kind, dtype, count, commWorldSize());
  commCount(kind, bytes);
  Job job{kind, dtype, send, recv, count, bytes};
  if (!s.overlap || !commOverlaps()) {
    // The result is on the device before the step goes on.
    check(cudaStreamSynchronize(s.compute), "cudaStreamSynchronize");
    run(job, /*onThread=*/false);
    return -1;
  }
  job.fork = takeEvent(false);
  job.done = takeEvent(false);
  check(cudaEventRecord(job.fork, s.compute), "cudaEventRecord");
  std::lock_guard<std::mutex> lock(st.m);
  if (!st.thread.joinable())
    st.thread = std::thread(stagingLoop);
  job.id = st.next++;
  int64_t id = job.id;
  st.jobs[id] = job;
  st.queue.push_back(id);
  st.work.notify_one();
  return id;
}

void zero::rt::cuda::commWaitMpi(int64_t handle) {
  State &s = state();
  Staging &st = staging();
  cudaEvent_t begin = traceBegin(s.compute);
  std::unique_lock<std::mutex> lock(st.m);
  auto it = st.jobs.find(handle);
  if (it == st.jobs.end())
    fail("zero_rt_cuda_comm_wait",
         "handle " + std::to_string(handle) +
             " names no collective in flight (waited for twice?)");
  // The copy back is queued once the staging thread is done with it.
  double timeout = commTimeout();
  if (!st.finished.wait_for(lock, std::chrono::duration<double>(timeout),
                            [&] { return it->second.finished; }))
    fail(collectiveName(it->second.kind),
         "did not complete within " + std::to_string((int)timeout) +
             " s: another rank is gone or stuck (ZERO_COMM_TIMEOUT sets the "
             "limit)");
  Job job = it->second;
  st.jobs.erase(it);
  lock.unlock();
  if (job.failed)
    fail(collectiveName(job.kind), "failed: another rank has exited");
  check(cudaStreamWaitEvent(s.compute, job.done, 0), "cudaStreamWaitEvent");
  giveEvent(job.fork, false);
  giveEvent(job.done, false);
  traceEnd(begin, s.compute,
           {std::string("wait ") + collectiveName(job.kind), "wait", 1, 0, 0,
            job.bytes, handle});
}
