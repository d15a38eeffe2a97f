//===- Comm.cpp - MPI communicator with counters and a watchdog -*- C++ -*-===//
#include "zero-rt/Comm.h"
#include "zero-rt/Runtime.h"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

using namespace zero::rt;

namespace {
struct State {
  bool mpi = false;
  int64_t rank = 0, size = 1;
  double timeout = 600.0;
  CommStats stats;
  std::vector<MPI_Request> requests;
} g;

MPI_Datatype mpiType(int32_t dtype) {
  return dtype == ZERO_RT_F64 ? MPI_DOUBLE : MPI_FLOAT;
}
size_t elemSize(int32_t dtype) { return dtype == ZERO_RT_F64 ? 8 : 4; }

bool launchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
         std::getenv("PMIX_RANK");
}
} // namespace

bool zero::rt::commInit(int *argc, char ***argv, int64_t expected,
                        std::string &error) {
  if (launchedByMpirun() || expected > 1) {
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    // Errors come back as codes, reported with the rank, not as aborts.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
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
  if (g.mpi)
    MPI_Finalize();
  g.mpi = false;
}

void zero::rt::commSetTimeout(double seconds) { g.timeout = seconds; }
int64_t zero::rt::commRank() { return g.rank; }
int64_t zero::rt::commWorldSize() { return g.size; }
const CommStats &zero::rt::commStats() { return g.stats; }

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
      commAbort(std::string(what) + " did not complete within " +
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

void zero::rt::commAllGatherFloats(const float *in, float *out, int64_t count) {
  if (!g.mpi) {
    std::memcpy(out, in, count * sizeof(float));
    return;
  }
  MPI_Request req;
  MPI_Iallgather(in, count, MPI_FLOAT, out, count, MPI_FLOAT, MPI_COMM_WORLD,
                 &req);
  waitOrAbort(req, "all_gather");
}

extern "C" int64_t zero_rt_comm_start(int32_t kind, int32_t dtype, int64_t send,
                                      int64_t recv, int64_t count,
                                      int64_t stream) {
  (void)stream;
  void *s = reinterpret_cast<void *>(send), *r = reinterpret_cast<void *>(recv);
  size_t es = elemSize(dtype);
  int64_t n = g.size;
  int64_t total = kind == ZERO_RT_ALL_REDUCE ? count : count * n;
  int64_t factor = kind == ZERO_RT_ALL_REDUCE ? 2 : 1;
  g.stats.bytesSent[kind] += factor * total * (n - 1) / n * (int64_t)es;
  g.stats.calls[kind] += 1;
  if (!g.mpi) {
    if (s != r)
      std::memmove(r, s, count * es);
    return -1;
  }
  MPI_Request req;
  int rc = MPI_SUCCESS;
  if (kind == ZERO_RT_ALL_REDUCE)
    rc = MPI_Iallreduce(s == r ? MPI_IN_PLACE : s, r, count, mpiType(dtype),
                        MPI_SUM, MPI_COMM_WORLD, &req);
  else if (kind == ZERO_RT_REDUCE_SCATTER)
    rc = MPI_Ireduce_scatter_block(s, r, count, mpiType(dtype), MPI_SUM,
                                   MPI_COMM_WORLD, &req);
  else
    rc = MPI_Iallgather(s, count, mpiType(dtype), r, count, mpiType(dtype),
                        MPI_COMM_WORLD, &req);
  if (rc != MPI_SUCCESS)
    commAbort("a collective could not start: another rank has exited");
  g.requests.push_back(req);
  return (int64_t)g.requests.size() - 1;
}

extern "C" void zero_rt_comm_wait(int64_t handle) {
  if (handle < 0)
    return;
  static const char *names[] = {"all_reduce", "reduce_scatter", "all_gather"};
  (void)names;
  waitOrAbort(g.requests[handle], "a collective");
  if (handle == (int64_t)g.requests.size() - 1)
    g.requests.pop_back();
}

extern "C" void zero_rt_collective(int32_t kind, int32_t dtype, int64_t send,
                                   int64_t recv, int64_t count) {
  zero_rt_comm_wait(zero_rt_comm_start(kind, dtype, send, recv, count, 0));
}

extern "C" int64_t zero_rt_rank(void) { return g.rank; }
extern "C" int64_t zero_rt_world_size(void) { return g.size; }
