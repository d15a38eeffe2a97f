//===- comm_bench.cpp - collective time against size on this machine ------===//
//
// Times MPI all-reduce, reduce-scatter and all-gather over a range of
// sizes (the median of repetitions, every rank synchronized first), so
// that bench/calibrate_cpu.py can fit the alpha-beta model the timeline
// simulator uses. Rank 0 prints one JSON line per kind and size.
//
//===----------------------------------------------------------------------===//
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  const char *names[] = {"all_reduce", "reduce_scatter", "all_gather"};
  for (long count = 1; count <= (1L << 22); count *= 4) {
    // count: elements each rank receives from a reduce-scatter or sends to
    // an all-gather; an all-reduce works on the whole n * count buffer.
    std::vector<float> in(count * n, 1.0f), out(count * n, 0.0f);
    for (int kind = 0; kind < 3; ++kind) {
      std::vector<double> times;
      for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (kind == 0)
          MPI_Allreduce(in.data(), out.data(), count * n, MPI_FLOAT, MPI_SUM,
                        MPI_COMM_WORLD);
        else if (kind == 1)
          MPI_Reduce_scatter_block(in.data(), out.data(), count, MPI_FLOAT,
                                   MPI_SUM, MPI_COMM_WORLD);
        else
          MPI_Allgather(in.data(), count, MPI_FLOAT, out.data(), count,
                        MPI_FLOAT, MPI_COMM_WORLD);
        double t = MPI_Wtime() - t0, slowest;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        times.push_back(slowest);
      }
      std::sort(times.begin(), times.end());
      // Bytes each rank sends by the ring algorithm, as zero-run counts.
      double total = 4.0 * count * n;
      double sent = (kind == 0 ? 2.0 : 1.0) * total * (n - 1) / n;
      if (rank == 0)
        std::printf("{\"kind\": \"%s\", \"ranks\": %d, \"bytes_sent\": %.0f, "
                    "\"seconds\": %.9f}\n",
                    names[kind], n, sent, times[times.size() / 2]);
    }
  }
  MPI_Finalize();
  return 0;
}
