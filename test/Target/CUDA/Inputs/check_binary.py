#!/usr/bin/python3
"""Checks the gpu.binary of a module lowered by zero-gpu-lower-kernels.

  check_binary.py LOWERED.mlir WORKDIR

Writes each object of each gpu.binary to WORKDIR (MLIR's string escapes
decoded) and prints, per object, its chip and the kernels it defines:
for a cubin the ELF header's architecture and its FUNC GLOBAL symbols
(llvm-readelf), for PTX its `.entry` names; then whether they are exactly
the functions that the module's gpu.launch_func ops launch.
"""
import os
import re
import subprocess
import sys


def unescape(s):
    out, i, b = bytearray(), 0, s.encode("latin-1")
    hexdigits = b"0123456789abcdefABCDEF"
    while i < len(b):
        if b[i] == 0x5C:
            if i + 2 < len(b) and b[i + 1] in hexdigits and b[i + 2] in hexdigits:
                out.append(int(b[i + 1:i + 3], 16))
                i += 3
                continue
            n = b[i + 1]
            out.append({ord("n"): 10, ord("t"): 9}.get(n, n))
            i += 2
            continue
        out.append(b[i])
        i += 1
    return bytes(out)


def main():
    text = open(sys.argv[1], encoding="latin-1").read()
    work = sys.argv[2]
    os.makedirs(work, exist_ok=True)
    launched = set(re.findall(r"gpu\.launch_func\s+@\w+::@(\w+)", text))
    print(f"{len(launched)} functions launched")
    obj = re.compile(r'#gpu\.object<#nvvm\.target<([^>]*)>.*?(assembly|bin) = "((?:[^"\\]|\\.)*)"', re.S)
    for m in re.finditer(r"gpu\.binary @(\w+)", text):
        end = text.find("gpu.binary @", m.end())
        for o in obj.finditer(text[:end if end >= 0 else len(text)], m.end()):
            chip = re.search(r'chip = "(\w+)"', o.group(1)).group(1)
            data = unescape(o.group(3))
            if o.group(2) == "bin":
                path = os.path.join(work, f"{m.group(1)}.{chip}.cubin")
                open(path, "wb").write(data)
                header = subprocess.run(["llvm-readelf", "-h", path], check=True,
                                        capture_output=True, text=True).stdout
                arch = re.search(r"Flags:.*?(sm_\d+)", header)
                syms = subprocess.run(["llvm-readelf", "-s", "--wide", path], check=True,
                                      capture_output=True, text=True).stdout
                defined = {l.split()[-1] for l in syms.splitlines()
                           if " FUNC " in l and " GLOBAL " in l}
                found = arch.group(1) if arch else "none"
                kind = f"cubin, ELF architecture {found} == target: {found == chip}"
            else:
                path = os.path.join(work, f"{m.group(1)}.{chip}.ptx")
                open(path, "wb").write(data)
                defined = set(re.findall(rb"\.entry\s+(\w+)", data))
                defined = {d.decode() for d in defined}
                kind = "PTX"
            print(f"binary @{m.group(1)} {chip}: {kind}, {len(defined)} kernels")
            print(f"every launched function defined: {launched <= defined}; "
                  f"none other: {defined <= launched}")


if __name__ == "__main__":
    main()
