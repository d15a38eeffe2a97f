#!/usr/bin/python3
"""Checks the order of collectives, waits and uses in GPU-level host IR.

  check_waits.py HOST.mlir FUNCTION

HOST.mlir is a step after zero-gpu-runtime-calls (buffers are views of the
arena; kernels are launched through their host functions). For every
`zero_rt_cuda_comm_start` of FUNCTION, the buffers it sends and receives
are found through the pointer arithmetic and views that feed it; the
first later op that touches one of them (a kernel call, a GEMM, a copy,
another collective) must come after the `zero_rt_cuda_comm_wait` of its
handle: the compute stream waits for the collective's event before any
work that reads or writes its buffers is queued. Prints a summary line.
"""
import re
import sys

VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape",
         "memref.cast", "memref.reinterpret_cast")
ADDRESS = ("memref.extract_aligned_pointer_as_index",
           "memref.extract_strided_metadata", "arith.index_cast",
           "arith.addi", "arith.muli")
DEF = re.compile(r"^\s*(%[\w.]+)(?::\d+)?(?:, %[\w.]+)* = ([\w.]+)")
VALUE = re.compile(r"%[\w.]+")


def body(text, fn):
    start = text.index(f"func.func @{fn}(") if f"func.func @{fn}(" in text \
        else text.index(f"func.func private @{fn}(")
    lines = text[start:].splitlines()
    for i, l in enumerate(lines[1:], 1):
        if l.startswith("  }"):
            return lines[1:i]
    return lines[1:]


def main():
    lines = body(open(sys.argv[1]).read(), sys.argv[2])
    roots = {}  # value -> buffers (arena views or arguments) it stands for
    touches = []  # (line, buffers, handle waited for or None)
    starts = []  # (line, handle, buffers)
    waits = {}
    for n, line in enumerate(lines):
        m = DEF.match(line)
        op = m.group(2) if m else line.split()[0] if line.split() else ""
        if "call @" in line and not m:
            op = "call"
        operands = VALUE.findall(line.split("=", 1)[1] if m else line)
        used = set()
        for v in operands:
            used |= roots.get(v, {v} if v.startswith("%arg") else set())
        if m and op == "memref.view":
            roots[m.group(1)] = {m.group(1)}
            continue
        if m and (op in VIEWS or op in ADDRESS):
            for r in VALUE.findall(line.split("=")[0]):
                roots[r] = used
            continue
        if "@zero_rt_cuda_comm_start(" in line:
            starts.append((n, m.group(1), used))
        elif "@zero_rt_cuda_comm_wait(" in line:
            waits[operands[0]] = n
        elif used and ("call @" in line or "gpu.launch_func" in line
                       or "gpu.memcpy" in line or "memref.copy" in line):
            touches.append((n, used))
    bad = 0
    for n, handle, bufs in starts:
        wait = waits.get(handle)
        first = next((t for t, b in touches if t > n and b & bufs), None)
        first_start = next((s for s, h, b in starts if s > n and b & bufs), None)
        uses = [x for x in (first, first_start) if x is not None]
        first = min(uses) if uses else None
        if wait is None or (first is not None and wait > first):
            bad += 1
            print(f"collective at line {n}: wait at {wait}, first use at {first}")
    print(f"{sys.argv[2]}: {len(starts)} collectives, {len(waits)} waits, "
          f"a wait after a use: {bad}")
    return 1 if bad or len(waits) != len(starts) else 0


if __name__ == "__main__":
    sys.exit(main())
