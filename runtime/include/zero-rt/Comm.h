//===- Comm.h - the communicator behind the collectives ---------*- C++ -*-===//
//
// One process group per program. Backends implement non-blocking start and
// wait; the MPI backend serves the CPU target, bootstraps NCCL, and runs a
// CUDA program's collectives through host memory where ranks share a GPU
// (the device backend's copies run on its communication thread).
// Every collective is counted in bytes sent per rank, by the ring
// algorithm's volume: all_reduce 2(N-1)/N of the buffer, reduce_scatter and
// all_gather (N-1)/N of the whole (N x per-rank) buffer.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_COMM_H
#define ZERO_RT_COMM_H

#include "zero-rt/Trace.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace zero::rt {

struct CommStats {
  std::array<int64_t, 3> bytesSent{};
  std::array<int64_t, 3> calls{};
};

/// Starts the group: MPI when launched by mpirun (or when `world` > 1),
/// a single in-process rank otherwise. `expected` is the world size the
/// program was compiled for; a mismatch is an error on every rank.
bool commInit(int *argc, char ***argv, int64_t expected, std::string &error);
void commFinalize();
/// Seconds a collective may wait for the other ranks before the process
/// aborts the whole job with an error (a dead or diverged rank).
void commSetTimeout(double seconds);
int64_t commRank();
int64_t commWorldSize();
const CommStats &commStats();
/// Bytes of one element of Runtime.h's type `dtype`; 0 for another value.
size_t commElementBytes(int32_t dtype);
/// all_reduce, reduce_scatter or all_gather (Runtime.h's kinds).
const char *collectiveName(int32_t kind);
/// Bytes a rank sends for one collective of `count` elements (Runtime.h's
/// meaning of count) by the ring rule above.
int64_t commBytesSent(int32_t kind, int32_t dtype, int64_t count,
                      int64_t worldSize);
/// Adds one collective to the counters; device backends (NCCL) count here
/// so that the host reports every backend the same way.
void commCount(int32_t kind, int64_t bytes);
/// Makes every rank wait for the others (used around setup and I/O).
void commBarrier();
/// Copies a device backend's data to host memory on the thread that runs
/// its collective, returning the host send and receive buffers.
using CommStage = std::function<std::pair<const void *, void *>()>;
/// Starts a collective (Runtime.h's kinds and count) on host buffers,
/// counting its bytes. With commOverlaps() the communication thread runs
/// it in order and the handle goes to commWait; otherwise it completes
/// here and the handle is -1. A device backend passes `stage` (send and
/// recv are then its device buffers, unused here) and `unstage` (the copy
/// back), run on the same thread around the collective.
int64_t commStart(int32_t kind, int32_t dtype, const void *send, void *recv,
                  int64_t count, CommStage stage = {},
                  std::function<void()> unstage = {});
/// Waits for commStart's collective, ending the job when the others do not
/// arrive within the timeout or MPI fails. Returns the wait as a trace
/// event (host times), for the caller to record or time its own way.
TraceEvent commWait(int64_t handle);
/// Sums `count` doubles over the ranks, in place.
void commAllReduceDoubles(double *data, int64_t count);
/// Gathers `bytes` bytes from every rank into `out` (rank order), whatever
/// the element type.
void commAllGatherBytes(const void *in, void *out, int64_t bytes);
/// Aborts every rank with a message (from any rank).
[[noreturn]] void commAbort(const std::string &message);

/// Whether collectives run on the communication thread, overlapping the
/// step's compute (overlap_comm; needs MPI_THREAD_MULTIPLE), or complete
/// when started.
void commSetOverlap(bool overlap);
bool commOverlaps();

/// Microseconds since the runtime started (the trace's clock).
double commNow();

/// An interval of the timeline: tid 1 is the step's thread (compute and
/// waits), tid 2 the communication thread.
/// Starts recording collectives and waits.
void traceEnable();
bool traceEnabled();
/// A device backend's events complete after the host moved on: traceEvents
/// first calls each registered flush, which records what has finished.
void traceAddFlush(void (*flush)());
void traceRecord(TraceEvent event);
std::vector<TraceEvent> traceEvents();

} // namespace zero::rt

#endif
