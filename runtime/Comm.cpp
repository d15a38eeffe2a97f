//===- Comm.cpp - MPI communicator with counters and a watchdog -*- C++ -*-===//
#include "zero-rt/Comm.h"
#include "zero-rt/Float16.h"
#include "zero-rt/Runtime.h"

#include <mpi.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

using namespace zero::rt;

namespace {
/// A collective queued for the communication thread.
struct Job {
  int32_t kind, dtype;
  const void *send;
  void *recv;
  int64_t count, bytes;
  CommStage stage = {};
  std::function<void()> unstage = {};
  bool done = false, failed = false;

  /// A device backend's copy in, which gives the host buffers.
  void stageIn() {
    if (stage)
      std::tie(send, recv) = stage();
  }
  void stageOut() {
    if (unstage)
      unstage();
  }
};

/// Runs queued collectives in order on its own thread (as a NCCL stream
/// runs kernels), so that they proceed while the step computes; waits
/// block only until their collective is done.
struct Worker {
  std::thread thread;
  std::mutex m;
  std::condition_variable work, finished;
  std::map<int64_t, Job> jobs;
  std::deque<int64_t> queue;
  int64_t next = 0;
  bool stop = false;
  MPI_Comm comm = MPI_COMM_NULL;
};

struct State {
  bool mpi = false, threaded = false, overlap = true;
  int64_t rank = 0, size = 1;
  double timeout = 600.0;
  CommStats stats;
  Worker worker;
  bool tracing = false;
  std::mutex traceMutex;
  std::vector<void (*)()> flushes;
  std::vector<TraceEvent> trace;
  std::chrono::steady_clock::time_point epoch =
      std::chrono::steady_clock::now();
} g;

void record(TraceEvent e) {
  if (!g.tracing)
    return;
  std::lock_guard<std::mutex> lock(g.traceMutex);
  g.trace.push_back(std::move(e));
}

bool is16(int32_t dtype) {
  return dtype == ZERO_RT_F16 || dtype == ZERO_RT_BF16;
}
MPI_Datatype mpiType(int32_t dtype) {
  if (is16(dtype))
    return MPI_UINT16_T;
  return dtype == ZERO_RT_F64 ? MPI_DOUBLE : MPI_FLOAT;
}

/// MPI has no 16-bit floats: their sums are user operations, each addition
/// rounded to the format as a 16-bit NCCL sum is.
template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void sum16(void *in, void *inout, int *len, MPI_Datatype *) {
  auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = Narrow(Widen(a[i]) + Widen(b[i]));
}
MPI_Op sumOps[2] = {MPI_OP_NULL, MPI_OP_NULL};
MPI_Op sumOp(int32_t dtype) {
  if (dtype == ZERO_RT_F16)
    return sumOps[0];
  if (dtype == ZERO_RT_BF16)
    return sumOps[1];
  return MPI_SUM;
}

bool launchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
         std::getenv("PMIX_RANK");
}
} // namespace

bool zero::rt::commInit(int *argc, char ***argv, int64_t expected,
                        std::string &error) {
  if (launchedByMpirun() || expected > 1) {
    // Open MPI busy-polls while a collective waits; the step's thread and
    // the communication thread share cores, so polling would starve the
    // compute it should overlap (measured: 250 -> 130 ms per step on 2
    // cores). A user's own setting wins.
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", /*overwrite=*/0);
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    // Errors come back as codes, reported with the rank, not as aborts.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    // The communication thread has its own communicator, so its collectives
    // never interleave with the host's (setup, saving weights).
    g.threaded = provided >= MPI_THREAD_MULTIPLE;
    if (g.threaded) {
      MPI_Comm_dup(MPI_COMM_WORLD, &g.worker.comm);
      MPI_Comm_set_errhandler(g.worker.comm, MPI_ERRORS_RETURN);
    }
    MPI_Op_create(&sum16<f16ToFloat, floatToF16>, /*commute=*/1, &sumOps[0]);
    MPI_Op_create(&sum16<bf16ToFloat, floatToBF16>, /*commute=*/1, &sumOps[1]);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    g.mpi = true;
    g.rank = r;
    g.size = n;
  }
  if (const char *t = std::getenv("ZERO_COMM_TIMEOUT"))
    g.timeout = std::atof(t);
  if (g.size != expected) {
    error =
        "rank " + std::to_string(g.rank) +
        ": the program was compiled "
        "for world size " +
        std::to_string(expected) + " but runs on " + std::to_string(g.size) +
        " process(es); launch it with mpirun -np " + std::to_string(expected) +
        " or recompile with --world-size=" + std::to_string(g.size);
    return false;
  }
  return true;
}

void zero::rt::commFinalize() {
  if (g.worker.thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(g.worker.m);
      g.worker.stop = true;
    }
    g.worker.work.notify_all();
    g.worker.thread.join();
  }
  if (g.mpi) {
    if (g.worker.comm != MPI_COMM_NULL)
      MPI_Comm_free(&g.worker.comm);
    for (MPI_Op &op : sumOps)
      if (op != MPI_OP_NULL)
        MPI_Op_free(&op);
    MPI_Finalize();
  }
  g.mpi = false;
}

void zero::rt::commSetOverlap(bool overlap) { g.overlap = overlap; }
bool zero::rt::commOverlaps() { return g.mpi && g.threaded && g.overlap; }

double zero::rt::commNow() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - g.epoch)
      .count();
}

void zero::rt::traceEnable() { g.tracing = true; }
bool zero::rt::traceEnabled() { return g.tracing; }

void zero::rt::traceAddFlush(void (*flush)()) {
  std::lock_guard<std::mutex> lock(g.traceMutex);
  g.flushes.push_back(flush);
}

void zero::rt::traceRecord(TraceEvent event) { record(std::move(event)); }

std::vector<TraceEvent> zero::rt::traceEvents() {
  std::vector<void (*)()> flushes;
  {
    std::lock_guard<std::mutex> lock(g.traceMutex);
    flushes = g.flushes;
  }
  for (void (*flush)() : flushes)
    flush();
  std::lock_guard<std::mutex> lock(g.traceMutex);
  return g.trace;
}

void zero::rt::commSetTimeout(double seconds) { g.timeout = seconds; }
int64_t zero::rt::commRank() { return g.rank; }
int64_t zero::rt::commWorldSize() { return g.size; }
const CommStats &zero::rt::commStats() { return g.stats; }

size_t zero::rt::commElementBytes(int32_t dtype) {
  switch (dtype) {
  case ZERO_RT_F32:
    return 4;
  case ZERO_RT_F64:
    return 8;
  case ZERO_RT_F16:
  case ZERO_RT_BF16:
    return 2;
  }
  return 0;
}

const char *zero::rt::collectiveName(int32_t kind) {
  static const char *names[] = {"all_reduce", "reduce_scatter", "all_gather"};
  return kind >= 0 && kind < 3 ? names[kind] : "collective";
}

int64_t zero::rt::commBytesSent(int32_t kind, int32_t dtype, int64_t count,
                                int64_t worldSize) {
  int64_t n = worldSize;
  int64_t total = kind == ZERO_RT_ALL_REDUCE ? count : count * n;
  int64_t factor = kind == ZERO_RT_ALL_REDUCE ? 2 : 1;
  return factor * total * (n - 1) / n * (int64_t)commElementBytes(dtype);
}

void zero::rt::commCount(int32_t kind, int64_t bytes) {
  if (kind < 0 || kind >= ZERO_RT_NUM_COLLECTIVES)
    return;
  g.stats.bytesSent[kind] += bytes;
  g.stats.calls[kind] += 1;
}

void zero::rt::commAbort(const std::string &message) {
  std::fprintf(stderr, "zero-run: error: rank %lld: %s\n", (long long)g.rank,
               message.c_str());
  std::fflush(stderr);
  if (g.mpi)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

/// Waits for `req`, aborting the job when the other ranks do not arrive in
/// time: a rank that died or took another path would otherwise hang all.
static void waitOrAbort(MPI_Request &req, const char *what) {
  auto start = std::chrono::steady_clock::now();
  int done = 0;
  while (true) {
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      commAbort(std::string(what) + " failed: another rank has exited");
    if (done)
      return;
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (waited > g.timeout)
      commAbort(std::string(what) + " failed: did not complete within " +
                std::to_string((int)g.timeout) +
                " s: another rank is gone or stuck (ZERO_COMM_TIMEOUT sets "
                "the limit)");
    std::this_thread::sleep_for(
        std::chrono::microseconds(waited < 1 ? 1 : 200));
  }
}

void zero::rt::commBarrier() {
  if (!g.mpi)
    return;
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  waitOrAbort(req, "barrier");
}

void zero::rt::commAllReduceDoubles(double *data, int64_t count) {
  if (!g.mpi)
    return;
  MPI_Request req;
  MPI_Iallreduce(MPI_IN_PLACE, data, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                 &req);
  waitOrAbort(req, "all_reduce");
}

void zero::rt::commAllGatherBytes(const void *in, void *out, int64_t bytes) {
  if (!g.mpi) {
    std::memcpy(out, in, bytes);
    return;
  }
  MPI_Request req;
  MPI_Iallgather(in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, MPI_COMM_WORLD,
                 &req);
  waitOrAbort(req, "all_gather");
}

/// The collective on `comm`, blocking: Open MPI's blocking collectives are
/// its tuned ones, and the waiting step's watchdog covers this thread. The
/// synchronous path uses the nonblocking forms to poll its own watchdog.
static int runBlocking(const Job &j, MPI_Comm comm) {
  MPI_Datatype t = mpiType(j.dtype);
  const void *in = j.send == j.recv ? MPI_IN_PLACE : j.send;
  if (j.kind == ZERO_RT_ALL_REDUCE)
    return MPI_Allreduce(in, j.recv, j.count, t, sumOp(j.dtype), comm);
  if (j.kind == ZERO_RT_REDUCE_SCATTER)
    return MPI_Reduce_scatter_block(j.send, j.recv, j.count, t, sumOp(j.dtype),
                                    comm);
  return MPI_Allgather(j.send, j.count, t, j.recv, j.count, t, comm);
}

/// The collective on the calling thread, polled against the watchdog; on
/// one rank, a copy. Failures end the job here.
static void runHere(const Job &j) {
  if (!g.mpi) {
    if (j.send != j.recv)
      std::memmove(j.recv, j.send, j.count * commElementBytes(j.dtype));
    return;
  }
  MPI_Datatype t = mpiType(j.dtype);
  MPI_Request req;
  int rc = MPI_SUCCESS;
  if (j.kind == ZERO_RT_ALL_REDUCE)
    rc = MPI_Iallreduce(j.send == j.recv ? MPI_IN_PLACE : j.send, j.recv,
                        j.count, t, sumOp(j.dtype), MPI_COMM_WORLD, &req);
  else if (j.kind == ZERO_RT_REDUCE_SCATTER)
    rc = MPI_Ireduce_scatter_block(j.send, j.recv, j.count, t, sumOp(j.dtype),
                                   MPI_COMM_WORLD, &req);
  else
    rc = MPI_Iallgather(j.send, j.count, t, j.recv, j.count, t, MPI_COMM_WORLD,
                        &req);
  if (rc != MPI_SUCCESS)
    commAbort("a collective could not start: another rank has exited");
  waitOrAbort(req, collectiveName(j.kind));
}

static void workerLoop() {
  Worker &w = g.worker;
  while (true) {
    std::unique_lock<std::mutex> lock(w.m);
    w.work.wait(lock, [&] { return w.stop || !w.queue.empty(); });
    if (w.queue.empty())
      return;
    int64_t id = w.queue.front();
    w.queue.pop_front();
    Job job = w.jobs[id];
    lock.unlock();
    job.stageIn();
    double t0 = commNow();
    int rc = runBlocking(job, w.comm);
    job.stageOut();
    double t1 = commNow();
    record({collectiveName(job.kind), "communication", 2, t0, t1 - t0,
            job.bytes, id});
    lock.lock();
    Job &j = w.jobs[id];
    j.done = true;
    j.failed = rc != MPI_SUCCESS;
    w.finished.notify_all();
  }
}

int64_t zero::rt::commStart(int32_t kind, int32_t dtype, const void *send,
                            void *recv, int64_t count, CommStage stage,
                            std::function<void()> unstage) {
  int64_t bytes = commBytesSent(kind, dtype, count, g.size);
  commCount(kind, bytes);
  Job job{kind,
          dtype,
          send,
          recv,
          count,
          bytes,
          std::move(stage),
          std::move(unstage)};
  if (!g.mpi) {
    job.stageIn();
    runHere(job);
    job.stageOut();
    return -1;
  }
  if (commOverlaps()) {
    Worker &w = g.worker;
    std::lock_guard<std::mutex> lock(w.m);
    if (!w.thread.joinable())
      w.thread = std::thread(workerLoop);
    int64_t id = w.next++;
    w.jobs[id] = std::move(job);
    w.queue.push_back(id);
    w.work.notify_one();
    return id;
  }
  // Synchronous: the collective completes before the step goes on.
  job.stageIn();
  double t0 = commNow();
  runHere(job);
  job.stageOut();
  double t1 = commNow();
  record({collectiveName(kind), "communication", 2, t0, t1 - t0, bytes, -1});
  record({std::string("wait ") + collectiveName(kind), "wait", 1, t0, t1 - t0,
          bytes, -1});
  return -1;
}

TraceEvent zero::rt::commWait(int64_t handle) {
  if (handle < 0)
    return {};
  Worker &w = g.worker;
  double t0 = commNow();
  std::unique_lock<std::mutex> lock(w.m);
  auto it = w.jobs.find(handle);
  if (it == w.jobs.end())
    commAbort("internal error: wait on an unknown collective");
  bool done =
      w.finished.wait_for(lock, std::chrono::duration<double>(g.timeout),
                          [&] { return it->second.done; });
  if (!done)
    commAbort(std::string(collectiveName(it->second.kind)) +
              " failed: did not complete within " +
              std::to_string((int)g.timeout) +
              " s: another rank is gone or stuck (ZERO_COMM_TIMEOUT sets the "
              "limit)");
  if (it->second.failed)
    commAbort(std::string(collectiveName(it->second.kind)) +
              " failed: another rank has exited");
  TraceEvent e{std::string("wait ") + collectiveName(it->second.kind),
               "wait",
               1,
               t0,
               commNow() - t0,
               it->second.bytes,
               handle};
  w.jobs.erase(it);
  return e;
}

extern "C" int64_t zero_rt_comm_start(int32_t kind, int32_t dtype, int64_t send,
                                      int64_t recv, int64_t count,
                                      int64_t stream) {
  (void)stream;
  return commStart(kind, dtype, reinterpret_cast<const void *>(send),
                   reinterpret_cast<void *>(recv), count);
}

extern "C" void zero_rt_comm_wait(int64_t handle) {
  if (handle >= 0)
    record(commWait(handle));
}

extern "C" int64_t zero_rt_rank(void) { return g.rank; }
extern "C" int64_t zero_rt_world_size(void) { return g.size; }
