"""Counts, per rank trace, the collectives whose interval overlaps a compute
interval of the same rank, and checks the trace's structure."""
import json
import sys

for path in sys.argv[1:]:
    events = json.load(open(path))["traceEvents"]
    comm = [e for e in events if e.get("cat") == "communication"]
    compute = [e for e in events if e.get("cat") == "compute"]
    waits = [e for e in events if e.get("cat") == "wait"]
    steps = [e for e in events if e.get("cat") == "step"]
    assert all("bytes" in e["args"] and "id" in e["args"] for e in comm), path
    assert all(e["pid"] == events[0]["pid"] for e in events), path
    overlap = sum(1 for c in comm if any(
        c["ts"] < p["ts"] + p["dur"] and p["ts"] < c["ts"] + c["dur"]
        for p in compute))
    print(f"{path.rsplit('/', 1)[-1]}: steps {len(steps)} collectives {len(comm)} "
          f"waits {len(waits)} overlapping {'some' if overlap else 'none'}")
