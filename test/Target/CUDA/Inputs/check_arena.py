#!/usr/bin/python3
"""Checks that a step's arena views are the layout plan.json records.

  check_arena.py HOST.mlir PLAN.json

HOST.mlir is the step after zero-gpu-arena (buffers are memref.views of
the arena that zero_rt_cuda_arena returns); PLAN.json is plan.json of a
`zero-opt --target=cuda` compile of the same model with the same flags.
For each step function the plan lists (forward is @main, train_step is
@train_step), the arena's size passed to zero_rt_cuda_arena must be the
plan's `arena.bytes`, and the views of the arena, in program order, must
be the plan's `arena.buffers` in order: each view's byte shift is the
buffer's offset and its type's size the buffer's bytes. Prints a line per
function.
"""
import json
import re
import sys

ELEMENT_BYTES = {"i1": 1, "i8": 1, "i16": 2, "bf16": 2, "f16": 2, "i32": 4,
                 "f32": 4, "i64": 8, "f64": 8, "index": 8}
CONST = re.compile(r"^\s*(%[\w.]+) = arith.constant (\d+) : (?:index|i64)$")
ARENA = re.compile(r"call @zero_rt_cuda_arena\((%[\w.]+)\)")
CAST = re.compile(r"^\s*(%[\w.]+) = builtin.unrealized_conversion_cast .* "
                  r"to memref<(\d+)xi8> \{zero.arena\}$")
VIEW = re.compile(r"memref.view (%[\w.]+)\[(%[\w.]+)\]\[\] : memref<\d+xi8> "
                  r"to memref<([^>]*)>")


def body(text, fn):
    start = text.index(f"func.func private @{fn}(")
    lines = text[start:].splitlines()
    for i, line in enumerate(lines[1:], 1):
        if line.startswith("  }"):
            return lines[1:i]
    return lines[1:]


def type_bytes(spec):
    *dims, element = spec.split(",")[0].split("x")
    n = 1
    for d in dims:
        n *= int(d)
    return n * ELEMENT_BYTES[element]


def layout(lines):
    consts, arena, size, views = {}, None, None, []
    for line in lines:
        if m := CONST.match(line):
            consts[m.group(1)] = int(m.group(2))
        if m := ARENA.search(line):
            size = consts[m.group(1)]
        if (m := CAST.match(line)) and arena is None:
            arena = m.group(1)
        if (m := VIEW.search(line)) and m.group(1) == arena:
            views.append({"offset": consts[m.group(2)],
                          "bytes": type_bytes(m.group(3))})
    return size, views


def main():
    text = open(sys.argv[1]).read()
    plan = json.load(open(sys.argv[2]))
    ok = True
    for name, fn in (("forward", "main"), ("train_step", "train_step")):
        if name not in plan["functions"]:
            continue
        arena = plan["functions"][name]["memory"]["arena"]
        size, views = layout(body(text, fn))
        want = [{"offset": b["offset"], "bytes": b["bytes"]}
                for b in arena["buffers"]]
        same = size == arena["bytes"] and views == want
        ok &= same
        print(f"{name}: arena {size} B, plan {arena['bytes']} B; "
              f"{len(views)} views, plan {len(want)} buffers; "
              f"offsets and sizes equal: {views == want}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
