#!/usr/bin/env python3
"""The mapping policy of the CUDA lowering, as a text generator (what a zero-opt
pass would do in C++ with the same upstream APIs).

  map_kernels.py pre   in.mlir > out.mlir   memref.copy -> linalg.copy
  map_kernels.py wrap  in.mlir > out.mlir   ops with no parallel loop (0-d
                                            generics, full reductions, scf.for
                                            kernels) -> one 1x1 scf.forall
  map_kernels.py script in.mlir > tf.mlir   transform script: per top-level
        linalg.generic of each kernel, tile the innermost (up to 3) parallel
        dims to blocks (tiles 32, 8, 1 -> block x, y, z; one parallel dim:
        tile 256 -> block x), the block tile to
        threads (num_threads = the block tile -> thread x, y, z; block 32x8x1, or 256 for one dim;
        a static thread forall even for partial tiles), leave reduction
        dims and outer parallel dims as loops inside each thread; then map
        every forall to its own gpu.launch.
Input: kernels after linalg-generalize-named-ops and
linalg-fold-unit-extent-dims{use-rank-reducing-slices}."""
import re, sys

mode, path = sys.argv[1], sys.argv[2]
text = open(path).read()

if mode == 'pre':
    text = re.sub(r'memref\.copy (%\w+), (%\w+) : (.*?) to (.*)',
                  r'linalg.copy ins(\1 : \3) outs(\2 : \4)', text)
    print(text, end=''); sys.exit()

lines = text.split('\n')

def funcs():
    i = 0
    while i < len(lines):
        if lines[i].startswith('  func.func @') and 'zero.kernel' in lines[i]:
            j = i
            while lines[j] != '  }':
                j += 1
            yield i, j
            i = j
        i += 1

def top_ops(i, j):
    """[(start, end, iterators or None)] of the top-level (indent 4) ops that
    carry regions or side effects: linalg.generic and scf.for."""
    ops, k = [], i + 1
    while k < j:
        l = lines[k]
        if l.startswith('    linalg.generic') or l.startswith('    scf.for'):
            e = k
            if l.rstrip().endswith('{'):
                while lines[e] != '    }':
                    e += 1
            m = re.search(r'iterator_types = \[([^\]]*)\]', l)
            its = [x.strip().strip('"') for x in m.group(1).split(',') if x.strip()] if m and l.startswith('    linalg') else None
            ops.append((k, e, its)); k = e
        k += 1
    return ops

if mode == 'wrap':
    out, last = [], 0
    for i, j in funcs():
        for (s, e, its) in top_ops(i, j):
            if its is not None and 'parallel' in its:
                continue
            out.extend(lines[last:s])
            out.append('    scf.forall (%zb) in (1) {')
            out.append('    scf.forall (%zt) in (1) {')
            # alloc inside a kernel: a device malloc; make it a stack buffer
            out.extend(l.replace('memref.alloc(', 'memref.alloca(') .replace('memref.dealloc', '// dealloc') for l in lines[s:e + 1])
            # z mappings: tf_launch.mlir gives these a 1x1x1 launch
            out.append('    } {mapping = [#gpu.thread<z>]}')
            out.append('    } {mapping = [#gpu.block<z>]}')
            last = e + 1
    out.extend(lines[last:])
    print('\n'.join(out), end=''); sys.exit()

assert mode == 'script'
B = ['x', 'y', 'z']
TILE = [32, 8, 1]
p = print
p('module attributes {transform.with_named_sequence} {')
p('  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {')
n = 0
for i, j in funcs():
    name = re.search(r'@(\w+)', lines[i]).group(1)
    ops = [o for o in top_ops(i, j) if o[2] is not None and 'parallel' in o[2]]
    p(f'    %f{n} = transform.structured.match ops{{["func.func"]}} attributes {{sym_name = "{name}"}} in %root : (!transform.any_op) -> !transform.any_op')
    if ops:
        # generics not wrapped in a forall yet: those directly in the func body
        p(f'    %all{n} = transform.structured.match ops{{["linalg.generic"]}} in %f{n} : (!transform.any_op) -> !transform.any_op')
        p(f'    %gs{n} = transform.structured.match ops{{["linalg.generic"]}} in %f{n} : (!transform.any_op) -> !transform.any_op')
        allg = [o for o in top_ops(i, j) if o[2] is not None]
        # the handle holds every generic of the func in order (nested ones of
        # wrapped foralls too); split and pick the mapped ones
        total = sum(1 for k in range(i, j) if 'linalg.generic {' in lines[k])
        names = ', '.join(f'%g{n}_{k}' for k in range(total))
        types = ', '.join(['!transform.any_op'] * total)
        if total > 1:
            p(f'    {names} = transform.split_handle %gs{n} : (!transform.any_op) -> ({types})')
        else:
            p(f'    %g{n}_0 = transform.merge_handles %gs{n} : !transform.any_op')
        idx = [k for k in range(i, j) if 'linalg.generic {' in lines[k]]
        for (s, e, its) in ops:
            k = idx.index(s)
            par = [d for d, t in enumerate(its) if t == 'parallel']
            mapped = par[-3:][::-1]            # innermost first
            ts = [0] * len(its)
            tile = [256] if len(mapped) == 1 else TILE   # 1-d: 256 threads in x
            for r, d in enumerate(mapped):
                ts[d] = tile[r]
            order = sorted(mapped)
            bmap = ', '.join(f'#gpu.block<{B[mapped.index(d)]}>' for d in order)
            tmap = ', '.join(f'#gpu.thread<{B[mapped.index(d)]}>' for d in order)
            ts1 = [1 if d in mapped else 0 for d in range(len(its))]
            p(f'    %b{n}_{k}, %fb{n}_{k} = transform.structured.tile_using_forall %g{n}_{k} tile_sizes {ts} (mapping = [{bmap}]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)')
            p(f'    transform.apply_patterns to %f{n} {{ transform.apply_patterns.scf.for_loop_canonicalization transform.apply_patterns.canonicalization }} : !transform.any_op')
            p(f'    %t{n}_{k}, %ft{n}_{k} = transform.structured.tile_using_forall %b{n}_{k} num_threads {ts} (mapping = [{tmap}]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)')
    p(f'    transform.apply_patterns to %f{n} {{ transform.apply_patterns.scf.for_loop_canonicalization transform.apply_patterns.canonicalization }} : !transform.any_op')
    n += 1
p('    %launchable = transform.structured.match ops{["scf.forall"]} in %root : (!transform.any_op) -> !transform.any_op')
p('    transform.yield')
p('  }')
p('}')
