#!/usr/bin/env python3
"""CPU numerics check of the GPU-mapped kernels: one module with every
kernel twice, @ref_K (zero-opt's kernel as formed) and @gpu_K (after the GPU
tiling/mapping, scf.forall form), and a @main that gives both the same
pseudo-random arguments, runs them and prints, per kernel, the number of
differing elements and the largest absolute difference over all arguments.

  make_check.py ref.mlir tiled.mlir > check.mlir
ref.mlir: kernels before mapping (MODEL.pre.mlir); tiled.mlir: MODEL.tiled.mlir
Then: mlir-opt check.mlir --pass-pipeline=CPU | mlir-runner -e main ..."""
import re, sys

def kernels(path):
    text = open(path).read()
    hdr = [l for l in text.split('\n') if l.startswith('#')]
    fs = re.findall(r'(  func\.func @(\w+)\((.*?)\) attributes \{zero\.kernel.*?\n  }\n)', text, re.S)
    globs = re.findall(r'^  memref\.global.*$', text, re.M)
    return hdr, fs, globs

def split_args(sig):
    out, depth, cur = [], 0, ''
    for ch in sig:
        if ch in '<([': depth += 1
        if ch in '>)]': depth -= 1
        if ch == ',' and depth == 0:
            out.append(cur); cur = ''
        else:
            cur += ch
    if cur.strip(): out.append(cur)
    return [a.split(':', 1)[1].strip() for a in out]

def parse_memref(t):
    m = re.match(r'memref<(.*)>$', t)
    body = m.group(1)
    parts, depth, cur = [], 0, ''
    for ch in body:
        if ch in '<([': depth += 1
        if ch in '>)]': depth -= 1
        if ch == ',' and depth == 0: parts.append(cur.strip()); cur = ''
        else: cur += ch
    parts.append(cur.strip())
    shape_elt = parts[0].split('x')
    shape = [int(s) for s in shape_elt[:-1]]
    elt = shape_elt[-1]
    strides = None
    if len(parts) > 1 and parts[1].startswith('strided'):
        strides = [int(s) for s in re.match(r'strided<\[([^\]]*)\]', parts[1]).group(1).split(',') if s.strip()]
    if strides is None:
        strides, acc = [], 1
        for s in reversed(shape):
            strides.insert(0, acc); acc *= s
    span = 1 + sum((s - 1) * st for s, st in zip(shape, strides)) if all(shape) else 0
    return shape, elt, strides, span

hdr1, ref, g1 = kernels(sys.argv[1])
hdr2, gpu, g2 = kernels(sys.argv[2])
# attribute aliases: the two files number their #mapN differently
def rename_aliases(hdr, body, tag):
    names = [re.match(r'(#\w+)', h).group(1) for h in hdr]
    for n in sorted(names, key=len, reverse=True):
        body = re.sub(re.escape(n) + r'\b', '#' + tag + n[1:], body)
    return body
H1 = rename_aliases(hdr1, '\n'.join(hdr1), 'r_')
H2 = rename_aliases(hdr2, '\n'.join(hdr2), 'g_')
print(H1); print(H2)
print('module {')
print('  func.func private @printI64(i64)\n  func.func private @printF64(f64)\n  func.func private @printComma()\n  func.func private @printNewline()')
for g in sorted(set(g1)):
    print(g)
gpu_by = {n: (b, s) for b, n, s in gpu}
calls = []
for body, name, sig in ref:
    if name not in gpu_by:
        continue
    b = rename_aliases(hdr1, body, 'r_').replace(f'func.func @{name}(', f'func.func @ref_{name}(', 1)
    gb = rename_aliases(hdr2, gpu_by[name][0], 'g_').replace(f'func.func @{name}(', f'func.func @gpu_{name}(', 1)
    print(b); print(gb)
    calls.append((name, split_args(sig)))

FLOAT = {'f32', 'bf16', 'f16', 'f64'}
print('  func.func @main() {')
print('    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index')
for kn, (name, types) in enumerate(calls):
    refs, gpus, flats = [], [], []
    for an, t in enumerate(types):
        if not t.startswith('memref<'):   # a scalar operand (learning rate, step, ...)
            val = '0.75' if t in FLOAT else '1'
            print(f'    %k{kn}s{an} = arith.constant {val} : {t}')
            refs.append((f'%k{kn}s{an}', t)); gpus.append((f'%k{kn}s{an}', t))
            continue
        shape, elt, strides, span = parse_memref(t)
        n = max(span, 1)
        v = f'%k{kn}a{an}'
        for side in ('r', 'g'):
            print(f'    {v}{side} = memref.alloc() : memref<{n}x{elt}>')
            # deterministic contents: ((i * 37) mod 19 - 9) / 8 for floats, i mod 2 for ints
            print(f'    %n{kn}a{an}{side} = arith.constant {n} : index')
            print(f'    scf.for %i = %c0 to %n{kn}a{an}{side} step %c1 {{')
            print(f'      %m37 = arith.constant 37 : index\n      %m19 = arith.constant 19 : index\n      %t0 = arith.muli %i, %m37 : index\n      %t1 = arith.remui %t0, %m19 : index')
            if elt in FLOAT:
                print(f'      %t2 = arith.index_cast %t1 : index to i32\n      %t3 = arith.sitofp %t2 : i32 to f32\n      %nine = arith.constant 9.0 : f32\n      %eight = arith.constant 0.125 : f32\n      %t4 = arith.subf %t3, %nine : f32\n      %t5 = arith.mulf %t4, %eight : f32')
                if elt != 'f32':
                    print(f'      %t6 = arith.truncf %t5 : f32 to {elt}')
                else:
                    print(f'      %t6 = arith.addf %t5, %t5 : f32')
            else:
                print(f'      %two = arith.constant 2 : index\n      %t2 = arith.remui %t1, %two : index\n      %t6 = arith.index_cast %t2 : index to {elt}')
            print(f'      memref.store %t6, {v}{side}[%i] : memref<{n}x{elt}>')
            print('    }')
        layout = f'strided<[{", ".join(map(str, strides))}], offset: 0>'
        for side, lst in (('r', refs), ('g', gpus)):
            sizes = ', '.join(map(str, shape)); sts = ', '.join(map(str, strides))
            print(f'    {v}{side}v = memref.reinterpret_cast {v}{side} to offset: [0], sizes: [{sizes}], strides: [{sts}] : memref<{n}x{elt}> to memref<{",".join(map(str, shape)) and "x".join(map(str, shape)) + "x" or ""}{elt}, {layout}>')
            print(f'    {v}{side}c = memref.cast {v}{side}v : memref<{"x".join(map(str, shape)) + "x" if shape else ""}{elt}, {layout}> to {t}')
            lst.append((f'{v}{side}c', t))
        flats.append((v, n, elt, an))
    print(f'    call @ref_{name}({", ".join(a for a, _ in refs)}) : ({", ".join(t for _, t in refs)}) -> ()')
    print(f'    call @gpu_{name}({", ".join(a for a, _ in gpus)}) : ({", ".join(t for _, t in gpus)}) -> ()')
    # compare
    print(f'    %z{kn} = arith.constant 0 : i64\n    %zf{kn} = arith.constant 0.0 : f64')
    cnt, mx = f'%z{kn}', f'%zf{kn}'
    for an, (v, n, elt, ai) in enumerate(flats):
        print(f'    %cnt{kn}_{an}, %mx{kn}_{an} = scf.for %i = %c0 to %n{kn}a{ai}r step %c1 iter_args(%c = {cnt}, %m = {mx}) -> (i64, f64) {{')
        print(f'      %a = memref.load {v}r[%i] : memref<{n}x{elt}>\n      %b = memref.load {v}g[%i] : memref<{n}x{elt}>')
        if elt in FLOAT:
            print(f'      %ne0 = arith.cmpf une, %a, %b : {elt}\n      %na = arith.cmpf uno, %a, %a : {elt}\n      %nb = arith.cmpf uno, %b, %b : {elt}\n      %nn = arith.andi %na, %nb : i1\n      %t = arith.constant true\n      %notnn = arith.xori %nn, %t : i1\n      %ne = arith.andi %ne0, %notnn : i1')
            ext = '' if elt == 'f64' else f'      %af = arith.extf %a : {elt} to f64\n      %bf = arith.extf %b : {elt} to f64\n'
            print(ext + f'      %d = arith.subf %af, %bf : f64\n      %ad = math.absf %d : f64\n      %m2 = arith.maxnumf %m, %ad : f64')
        else:
            print(f'      %ne = arith.cmpi ne, %a, %b : {elt}\n      %m2 = arith.addf %m, %m : f64')
        print(f'      %one = arith.constant 1 : i64\n      %zero = arith.constant 0 : i64\n      %inc = arith.select %ne, %one, %zero : i64\n      %c2 = arith.addi %c, %inc : i64\n      scf.yield %c2, %m2 : i64, f64\n    }}')
        cnt, mx = f'%cnt{kn}_{an}', f'%mx{kn}_{an}'
    print(f'    %id{kn} = arith.constant {kn} : i64\n    call @printI64(%id{kn}) : (i64) -> ()\n    call @printComma() : () -> ()\n    call @printI64({cnt}) : (i64) -> ()\n    call @printComma() : () -> ()\n    call @printF64({mx}) : (f64) -> ()\n    call @printNewline() : () -> ()')
print('    return\n  }\n}')
