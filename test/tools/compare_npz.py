#!/usr/bin/python3
"""Compare the arrays of two .npz files.

Usage: compare_npz.py A.npz B.npz [--rtol 1e-5] [--atol 0]

Every array in A must exist in B with the same shape and dtype. Floats pass
when |a - b| <= atol + rtol * |b| elementwise (numpy.allclose, B is the
reference), with NaN equal to NaN; other dtypes must match exactly. Prints one
line per array and exits 1 on any mismatch or missing array.
"""
import argparse
import sys

import numpy as np


def compare(name, a, b, rtol, atol):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False, f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}"
    if np.issubdtype(a.dtype, np.inexact):
        ok = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        # Errors in float64 so that they do not themselves round or overflow;
        # positions where both are NaN (or the same infinity) count as zero.
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        same = (a64 == b64) | (np.isnan(a64) & np.isnan(b64))
        with np.errstate(invalid="ignore", divide="ignore"):
            abs_err = np.where(same, 0.0, np.abs(a64 - b64))
            rel_err = np.where(abs_err == 0, 0.0, abs_err / np.abs(b64))
    else:
        ok = a == b
        abs_err = np.abs(a.astype(np.float64) - b.astype(np.float64))
        rel_err = np.zeros_like(abs_err)
    bad = int(ok.size - np.count_nonzero(ok))
    max_abs = float(np.nanmax(abs_err, initial=0.0))
    max_rel = float(np.nanmax(rel_err, initial=0.0))
    detail = f"max_abs={max_abs:.3e} max_rel={max_rel:.3e}"
    if bad:
        detail += f" mismatched={bad}/{ok.size}"
    return bad == 0, detail


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b", help="reference")
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--atol", type=float, default=0.0)
    opts = ap.parse_args()

    failed = False
    with np.load(opts.a) as fa, np.load(opts.b) as fb:
        for name in fa.files:
            if name not in fb.files:
                print(f"MISSING {name}: not in {opts.b}")
                failed = True
                continue
            ok, detail = compare(name, fa[name], fb[name], opts.rtol, opts.atol)
            print(f"{'ok  ' if ok else 'FAIL'} {name}: {detail}")
            failed |= not ok
        if not fa.files:
            print(f"MISSING: {opts.a} has no arrays")
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
