//===- Trace.h - Chrome trace events ----------------------------*- C++ -*-===//
//
// One trace format for the measured step (zero-run --trace) and the
// predicted one (zero-opt --report=timeline), so both open side by side in
// chrome://tracing or ui.perfetto.dev. Thread 0 holds the steps, thread 1
// compute and waits, thread 2 the collectives.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_TRACE_H
#define ZERO_RT_TRACE_H

#include <cstdint>
#include <string>
#include <vector>

namespace zero::rt {

struct TraceEvent {
  std::string name, category; ///< category: step, compute, wait, communication
  int tid = 1;
  double ts = 0, dur = 0; ///< microseconds
  int64_t bytes = 0;      ///< collectives and waits: bytes this rank sends
  int64_t id = -1;        ///< collectives and waits: the call's number
  std::string node = {};  ///< compute: the model's node it computes, if known
  std::string kind = {};  ///< compute: "gemm" (a library GEMM) or "kernel"
  /// A predicted compute slice (ops > 0): how many ops it joins, their
  /// FLOPs and the bytes they move, and for the longest of them what bounds
  /// it ("compute", "memory", "latency" or "launch") and on how many
  /// threads it runs (a GPU launch; 0 otherwise).
  int64_t ops = 0;
  double flops = 0, traffic = 0, threads = 0;
  std::string bound = {};
};

/// The Chrome trace JSON of one process (`pid`: the rank). `streams`: a
/// GPU's trace, whose threads 1 and 2 are its compute and communication
/// streams.
std::string chromeTrace(int64_t pid, const std::vector<TraceEvent> &events,
                        bool streams = false);

/// Writes chromeTrace to `path`; false with a one-line `error` otherwise.
bool writeChromeTrace(const std::string &path, int64_t pid,
                      const std::vector<TraceEvent> &events, bool streams,
                      std::string &error);

} // namespace zero::rt

#endif
