#!/usr/bin/env python3
"""Dump the objects of every gpu.binary in an MLIR file.

  extract_gpu_objects.py in.mlir OUTDIR
writes OUTDIR/<binary>.<chip>.ptx (format=isa: `assembly = "..."`) or
OUTDIR/<binary>.<chip>.cubin (format=bin: `bin = "..."`), decoding MLIR's
string escapes (\\XX hex, \\n, \\t, \\", \\\\)."""
import os, re, sys

def unescape(s: str) -> bytes:
    out = bytearray(); i = 0; b = s.encode('latin-1', 'surrogateescape')
    while i < len(b):
        c = b[i]
        if c == 0x5c:  # backslash
            n = b[i + 1]
            if n in b'0123456789abcdefABCDEF' and i + 2 < len(b) and b[i+2] in b'0123456789abcdefABCDEF':
                out.append(int(b[i+1:i+3], 16)); i += 3; continue
            out.append({ord('n'): 10, ord('t'): 9, ord('"'): 34, ord('\\'): 92}.get(n, n)); i += 2; continue
        out.append(c); i += 1
    return bytes(out)

text = open(sys.argv[1], encoding='latin-1').read()
os.makedirs(sys.argv[2], exist_ok=True)
binre = re.compile(r'gpu\.binary @(\w+)\s*(?:<[^>]*>)?\s*\[(.*?)\]\s*$', re.M | re.S)
objre = re.compile(r'#gpu\.object<#nvvm\.target<([^>]*)>.*?(assembly|bin) = "((?:[^"\\]|\\.)*)"', re.S)
for m in re.finditer(r'gpu\.binary @(\w+)', text):
    name = m.group(1)
    end = text.find('gpu.binary @', m.end())
    chunk = text[m.end(): end if end >= 0 else len(text)]
    for o in objre.finditer(chunk):
        chip = re.search(r'chip = "(\w+)"', o.group(1)).group(1)
        ext = 'ptx' if o.group(2) == 'assembly' else 'cubin'
        path = os.path.join(sys.argv[2], f'{name}.{chip}.{ext}')
        open(path, 'wb').write(unescape(o.group(3)))
        print(path)
