//===- Trace.cpp - Chrome trace events ------------------------------------===//
#include "zero-rt/Trace.h"

#include "zero-rt/Files.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace zero::rt;

std::string zero::rt::chromeTrace(int64_t pid,
                                  const std::vector<TraceEvent> &events,
                                  bool streams) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream j(os, 1);
  j.object([&] {
    j.attributeArray("traceEvents", [&] {
      const char *threads[] = {"step", "compute and waits", "communication"};
      if (streams) {
        threads[1] = "compute stream (waits included)";
        threads[2] = "communication stream";
      }
      for (int tid = 0; tid < 3; ++tid)
        j.object([&] {
          j.attribute("name", "thread_name");
          j.attribute("ph", "M");
          j.attribute("pid", pid);
          j.attribute("tid", tid);
          j.attributeObject("args", [&] { j.attribute("name", threads[tid]); });
        });
      for (const TraceEvent &e : events)
        j.object([&] {
          j.attribute("name", e.name);
          j.attribute("cat", e.category);
          j.attribute("ph", "X");
          j.attribute("pid", pid);
          j.attribute("tid", e.tid);
          j.attribute("ts", e.ts);
          j.attribute("dur", e.dur);
          if (e.category == "communication" || e.category == "wait")
            j.attributeObject("args", [&] {
              j.attribute("bytes", e.bytes);
              j.attribute("id", e.id);
            });
          else if (!e.node.empty() || !e.kind.empty() || e.ops)
            j.attributeObject("args", [&] {
              if (!e.node.empty())
                j.attribute("node", e.node);
              if (!e.kind.empty())
                j.attribute("kind", e.kind);
              if (!e.ops)
                return;
              j.attribute("ops", e.ops);
              j.attribute("flops", e.flops);
              j.attribute("bytes", e.traffic);
              j.attribute("bound", e.bound);
              if (e.threads > 0)
                j.attribute("threads", e.threads);
            });
        });
    });
    j.attribute("displayTimeUnit", "ms");
  });
  os << "\n";
  return text;
}

bool zero::rt::writeChromeTrace(const std::string &path, int64_t pid,
                                const std::vector<TraceEvent> &events,
                                bool streams,
                                std::string &error) {
  return writeTextFile(path, chromeTrace(pid, events, streams), error);
}
