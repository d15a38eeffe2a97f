#!/usr/bin/env python3
"""select_funcs.py in.mlir NAME... : the module with only the named funcs
(plus attribute aliases and memref.globals); NAME matches @NAME exactly."""
import re, sys
text = open(sys.argv[1]).read()
names = set(sys.argv[2:])
lines = text.split('\n')
out = [l for l in lines if l.startswith('#')] + ['module {']
out += [l for l in lines if l.startswith('  memref.global')]
i = 0
while i < len(lines):
    m = re.match(r'  func\.func (?:private )?@(\w+)\(', lines[i])
    if m:
        j = i
        while lines[j] != '  }':
            j += 1
        if m.group(1) in names:
            out += lines[i:j + 1]
        i = j
    i += 1
print('\n'.join(out + ['}']))
