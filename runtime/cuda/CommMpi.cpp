//===- CommMpi.cpp - collectives over MPI through host memory ---*- C++ -*-===//
//
// For ranks that share a GPU, which NCCL refuses: a collective forks from
// the compute stream (an event) and goes to the CPU runtime's
// communicator, whose communication thread (or, without overlap, the
// calling thread) copies the input to host memory on the staging stream
// once the compute stream reached the fork, runs the MPI collective and
// copies the result back, waiting for the copy. The wait blocks the host
// until then: work queued after it finds the result on the device.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include "zero-rt/Comm.h"
#include "zero-rt/RuntimeCUDA.h"

using namespace zero::rt;
using namespace zero::rt::cuda;

namespace {
/// Host copies of one collective's input and output, page-locked so the
/// copies are DMA; grown, never shrunk. Collectives run one at a time, so
/// one pair serves them all.
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
  cudaStream_t stream = nullptr; ///< the copies to and from the host
  HostBuffer send, recv;
};
Staging &staging() {
  static Staging *st = new Staging;
  return *st;
}
} // namespace

void zero::rt::cuda::commInitMpi() {
  check(cudaStreamCreateWithFlags(&staging().stream, cudaStreamNonBlocking),
        "cudaStreamCreateWithFlags");
}

void zero::rt::cuda::commFinalizeMpi() {
  Staging &st = staging();
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
  size_t e = commElementBytes(dtype), n = (size_t)commWorldSize();
  if (!e)
    fail("zero_rt_cuda_comm_start",
         "unknown element type " + std::to_string(dtype));
  size_t in = e * count * (kind == ZERO_RT_REDUCE_SCATTER ? n : 1);
  size_t out = e * count * (kind == ZERO_RT_ALL_GATHER ? n : 1);
  // The fork is reused at once: a stream wait takes its state when called.
  cudaEvent_t fork = takeEvent(false);
  check(cudaEventRecord(fork, state().compute), "cudaEventRecord");
  auto stage = [=]() -> std::pair<const void *, void *> {
    ensureContext();
    Staging &st = staging();
    char *hostIn = st.send.get(in), *hostOut = st.recv.get(out);
    check(cudaStreamWaitEvent(st.stream, fork, 0), "cudaStreamWaitEvent");
    giveEvent(fork, false);
    check(cudaMemcpyAsync(hostIn, send, in, cudaMemcpyDeviceToHost, st.stream),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize");
    return {hostIn, hostOut};
  };
  auto unstage = [=] {
    Staging &st = staging();
    check(cudaMemcpyAsync(recv, st.recv.bytes.data(), out,
                          cudaMemcpyHostToDevice, st.stream),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(st.stream), "cudaStreamSynchronize");
  };
  return commStart(kind, dtype, send, recv, count, stage, unstage);
}

void zero::rt::cuda::commWaitMpi(int64_t handle) {
  // The compute stream's stall while the host waits: the exposed part.
  cudaStream_t compute = state().compute;
  cudaEvent_t begin = traceBegin(compute);
  TraceEvent wait = commWait(handle);
  traceEnd(begin, compute, std::move(wait));
}
