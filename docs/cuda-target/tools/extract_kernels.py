#!/usr/bin/env python3
"""Keep only the zero.kernel funcs (and the memref.globals they read) of a
module printed by `zero-opt ... --zero-form-kernels`; make them public so
the pipeline does not drop them as dead private symbols.

  extract_kernels.py kernels.mlir > only-kernels.mlir  [--list]"""
import re, sys

lines = open(sys.argv[1]).read().split('\n')
out, i, kernels = [], 0, []
header = [l for l in lines if l.startswith('#')]  # attribute aliases
while i < len(lines):
    l = lines[i]
    if l.startswith('  memref.global'):
        out.append(l); i += 1; continue
    if l.startswith('  func.func') and 'zero.kernel =' in l:
        j = i
        while lines[j] != '  }':
            j += 1
        body = lines[i:j + 1]
        body[0] = body[0].replace('func.func private @', 'func.func @')
        kernels.append(re.search(r'@(\w+)', l).group(1))
        out.extend(body); i = j + 1; continue
    i += 1
if '--list' in sys.argv:
    print('\n'.join(kernels)); sys.exit()
print('\n'.join(header))
print('module {')
print('\n'.join(out))
print('}')
