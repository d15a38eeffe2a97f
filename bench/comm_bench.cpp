//===- comm_bench.cpp - collective time against size on this machine ------===//
//
// Times all-reduce, reduce-scatter and all-gather over a range of sizes
// (the median of repetitions, every rank synchronized first), so that
// bench/calibrate_cpu.py can fit the alpha-beta model the timeline
// simulator uses. Each is timed twice: as a compiled step issues it
// (zero_rt_comm_start, then zero_rt_comm_wait, several in a row: the
// runtime's communication thread and its hand-offs included, "path":
// "runtime") and
// as a bare blocking MPI call ("path": "mpi"). Rank 0 prints one JSON line
// per path, kind and size.
//
//===----------------------------------------------------------------------===//
#include "zero-rt/Comm.h"
#include "zero-rt/Runtime.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

static constexpr int kBurst = 8;

int main(int argc, char **argv) {
  const char *world = std::getenv("OMPI_COMM_WORLD_SIZE");
  std::string error;
  if (!zero::rt::commInit(&argc, &argv, world ? std::atol(world) : 1, error)) {
    std::fprintf(stderr, "zero-comm-bench: %s\n", error.c_str());
    return 1;
  }
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  const char *names[] = {"all_reduce", "reduce_scatter", "all_gather"};
  for (long count = 1; count <= (1L << 22); count *= 4) {
    // count: elements each rank receives from a reduce-scatter or sends to
    // an all-gather; an all-reduce works on the whole n * count buffer.
    std::vector<float> in(count * n, 1.0f), out(count * n, 0.0f);
    for (int path = 0; path < 2; ++path)
      for (int kind = 0; kind < 3; ++kind) {
        std::vector<double> times;
        for (int r = 0; r < reps; ++r) {
          MPI_Barrier(MPI_COMM_WORLD);
          double t0 = MPI_Wtime();
          // A step issues its collectives back to back: the runtime path
          // times a burst and reports the average.
          if (path == 0)
            for (int b = 0; b < kBurst; ++b)
              zero_rt_comm_wait(zero_rt_comm_start(
                  kind, ZERO_RT_F32, (int64_t)in.data(), (int64_t)out.data(),
                  kind == 0 ? count * n : count, 0));
          else if (kind == 0)
            MPI_Allreduce(in.data(), out.data(), count * n, MPI_FLOAT, MPI_SUM,
                          MPI_COMM_WORLD);
          else if (kind == 1)
            MPI_Reduce_scatter_block(in.data(), out.data(), count, MPI_FLOAT,
                                     MPI_SUM, MPI_COMM_WORLD);
          else
            MPI_Allgather(in.data(), count, MPI_FLOAT, out.data(), count,
                          MPI_FLOAT, MPI_COMM_WORLD);
          double t = (MPI_Wtime() - t0) / (path == 0 ? kBurst : 1), slowest;
          MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
          times.push_back(slowest);
        }
        std::sort(times.begin(), times.end());
        // Bytes each rank sends by the ring algorithm, as zero-run counts.
        double total = 4.0 * count * n;
        double sent = (kind == 0 ? 2.0 : 1.0) * total * (n - 1) / n;
        if (rank == 0)
          std::printf("{\"path\": \"%s\", \"kind\": \"%s\", \"ranks\": %d, "
                      "\"bytes_sent\": %.0f, \"seconds\": %.9f}\n",
                      path == 0 ? "runtime" : "mpi", names[kind], n, sent,
                      times[times.size() / 2]);
      }
  }
  zero::rt::commFinalize();
  return 0;
}
