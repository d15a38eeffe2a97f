#!/usr/bin/python3
"""Cross-checks zero-rt's .npy/.npz support against NumPy.

NumPy writes files (np.save, np.savez, np.savez_compressed) that NpzDump
reads; NpzDump rewrites them and NumPy reads the copies back. Malformed and
unsupported inputs must make NpzDump fail with a message naming the file and
the member.

Usage: npz_numpy_check.py [--tool PATH/TO/NpzDump] [--skip-zip64]
Without --tool, NpzDump is built into a temporary directory with g++.
Exits non-zero on the first mismatch.
"""

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.path.dirname(HERE)


def build_tool(out_dir):
    tool = os.path.join(out_dir, "NpzDump")
    flags = subprocess.check_output(
        ["pkg-config", "--cflags", "--libs", "libzip"], text=True).split()
    cmd = ["g++", "-std=c++17", "-O1", "-I", os.path.join(RUNTIME, "include"),
           os.path.join(RUNTIME, "Npz.cpp"), os.path.join(HERE, "NpzDump.cpp"),
           *flags, "-o", tool]
    subprocess.check_call(cmd)
    return tool


def sample_arrays():
    rng = np.random.default_rng(7)
    arrays = {
        "weights": rng.standard_normal((3, 4)).astype(np.float32),
        "ids": np.array([5, -3, 2**40, 0, -(2**35)], dtype=np.int64),
        "mask": np.array([[True, False, True], [False, False, True]]),
        "scale": np.array(2.5),
        "empty": np.zeros((0, 3), dtype=np.float64),
        "matrix": rng.standard_normal((4, 5)),
        # Written with fortran_order=True; must come back in C order.
        "fortran": np.asfortranarray(
            np.arange(24, dtype=np.float32).reshape(2, 3, 4)),
        "transposed": np.arange(12, dtype=np.int64).reshape(3, 4).T,
        "i8": np.array([-128, 0, 127], dtype=np.int8),
        "u8": np.arange(256, dtype=np.uint8).reshape(16, 16),
        "i16": np.array([-32768, 1, 32767], dtype=np.int16),
        "u16": np.array([0, 65535], dtype=np.uint16),
        "i32": np.array([[-(2**31)], [2**31 - 1]], dtype=np.int32),
        "u32": np.array([2**32 - 1, 7], dtype=np.uint32),
        "u64": np.array([2**50, 3], dtype=np.uint64),
        "f16": np.array([0.5, -1.25, 65504.0, 6e-8], dtype=np.float16),
        # Large and highly compressible: exercises deflate ratios near the
        # format's maximum.
        "zeros": np.zeros((2048, 2048), dtype=np.float32),
    }
    arrays["zeros"][1000, 1000] = 1.0
    return arrays


def expected_line(name, array):
    contiguous = np.ascontiguousarray(array)
    total = float(np.sum(contiguous, dtype=np.float64)) if array.size else 0.0
    shape = "[" + ",".join(str(d) for d in array.shape) + "]"
    crc = zlib.crc32(contiguous.tobytes()) & 0xFFFFFFFF
    return name, str(array.dtype), shape, total, "%08x" % crc


def run_tool(tool, *args, expect_ok=True):
    proc = subprocess.run([tool, *args], capture_output=True, text=True)
    if expect_ok and proc.returncode != 0:
        sys.exit("FAIL: %s %s exited %d: %s" %
                 (tool, " ".join(args), proc.returncode, proc.stderr.strip()))
    if not expect_ok and proc.returncode == 0:
        sys.exit("FAIL: %s %s unexpectedly succeeded" % (tool, " ".join(args)))
    return proc


def check_dump(tool, path, arrays):
    out = run_tool(tool, path).stdout.splitlines()
    if len(out) != len(arrays):
        sys.exit("FAIL: %s: %d arrays dumped, %d expected" %
                 (path, len(out), len(arrays)))
    for line, (name, array) in zip(out, arrays.items()):
        got = line.split("\t")
        want = expected_line(name, array)
        same = (got[0:3] == list(want[0:3]) and got[4] == want[4] and
                math.isclose(float(got[3]), want[3], rel_tol=1e-9,
                             abs_tol=1e-9))
        if not same:
            sys.exit("FAIL: %s: got %s, expected %s" % (path, got, want))
    print("ok   read %-28s %d arrays" % (os.path.basename(path), len(out)))


def check_numpy_reads(path, arrays):
    with np.load(path) as f:
        if list(f.keys()) != list(arrays):
            sys.exit("FAIL: %s: keys %s, expected %s" %
                     (path, list(f.keys()), list(arrays)))
        for name, array in arrays.items():
            got = f[name]
            if (got.dtype != array.dtype or got.shape != array.shape or
                    not np.array_equal(got, array)):
                sys.exit("FAIL: %s: array %s differs" % (path, name))
    with zipfile.ZipFile(path) as z:
        if any(i.compress_type != zipfile.ZIP_STORED for i in z.infolist()):
            sys.exit("FAIL: %s: members are not stored" % path)
    print("ok   numpy reads %-22s %d arrays" % (os.path.basename(path),
                                               len(arrays)))


def check_error(tool, path, *needles):
    proc = run_tool(tool, path, expect_ok=False)
    message = proc.stderr.strip()
    if "\n" in message or not all(n in message for n in needles):
        sys.exit("FAIL: %s: message %r lacks %s" % (path, message, needles))
    print("ok   error %s" % message)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool")
    parser.add_argument("--skip-zip64", action="store_true")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="npzcheck.")
    try:
        tool = args.tool or build_tool(work)
        arrays = sample_arrays()
        small = {k: v for k, v in arrays.items() if k != "zeros"}

        # NumPy writes, zero-rt reads.
        plain = os.path.join(work, "plain.npz")
        np.savez(plain, **arrays)
        check_dump(tool, plain, arrays)
        packed = os.path.join(work, "compressed.npz")
        np.savez_compressed(packed, **arrays)
        check_dump(tool, packed, arrays)
        for name in ("weights", "scale", "empty", "fortran", "transposed"):
            path = os.path.join(work, name + ".npy")
            np.save(path, arrays[name])
            check_dump(tool, path, {name: arrays[name]})

        # zero-rt writes, NumPy reads.
        for source in (plain, packed):
            copy = source[:-4] + ".copy.npz"
            run_tool(tool, "--copy", source, copy)
            check_numpy_reads(copy, arrays)
        one = os.path.join(work, "fortran.npy")
        copy = os.path.join(work, "fortran.copy.npy")
        run_tool(tool, "--copy", one, copy)
        back = np.load(copy)
        if not (back.flags.c_contiguous and
                np.array_equal(back, arrays["fortran"])):
            sys.exit("FAIL: %s differs" % copy)
        print("ok   numpy reads fortran.copy.npy")
        empty = os.path.join(work, "none.npz")
        np.savez(empty)
        run_tool(tool, "--copy", empty, empty + ".copy.npz")
        check_numpy_reads(empty + ".copy.npz", {})

        # More than 65535 members forces zip64 end records in both writers.
        if not args.skip_zip64:
            many = os.path.join(work, "many.npz")
            count = 70000
            run_tool(tool, "--many", str(count), many)
            with np.load(many) as f:
                keys = list(f.keys())
                if (len(keys) != count or keys[0] != "a0" or
                        keys[-1] != "a%d" % (count - 1) or
                        f["a69999"].tolist() != [69999, -69999]):
                    sys.exit("FAIL: %s read back wrong" % many)
            print("ok   numpy reads many.npz (%d members, zip64)" % count)
            np_many = os.path.join(work, "np_many.npz")
            np.savez(np_many, **{"b%d" % i: np.array([i], dtype=np.int32)
                                 for i in range(count)})
            lines = run_tool(tool, np_many).stdout.splitlines()
            if len(lines) != count or lines[-1].split("\t")[0:4] != [
                    "b69999", "int32", "[1]", "69999"]:
                sys.exit("FAIL: %s dumped wrong" % np_many)
            print("ok   read np_many.npz (%d members, zip64)" % count)

        # Unsupported and malformed inputs.
        bad = os.path.join(work, "bigendian.npz")
        np.savez(bad, good=small["weights"],
                 be=np.arange(3, dtype=">f4"))
        check_error(tool, bad, bad, "member 'be.npy'", "big-endian")
        bad = os.path.join(work, "object.npz")
        np.savez(bad, obj=np.array([1, "a"], dtype=object))
        check_error(tool, bad, bad, "member 'obj.npy'", "object arrays")
        bad = os.path.join(work, "structured.npz")
        np.savez(bad, rec=np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]))
        check_error(tool, bad, bad, "member 'rec.npy'", "structured")
        bad = os.path.join(work, "complex.npy")
        np.save(bad, np.ones(2, dtype=np.complex64))
        check_error(tool, bad, bad, "unsupported dtype '<c8'")
        with open(plain, "rb") as f:
            image = f.read()
        bad = os.path.join(work, "truncated.npz")
        with open(bad, "wb") as f:
            f.write(image[:len(image) // 2])
        check_error(tool, bad, bad, "cannot open archive")
        bad = os.path.join(work, "short.npz")
        with zipfile.ZipFile(bad, "w") as z:
            z.writestr("x.npy", np.lib.format.magic(1, 0) + b"\x46\x00" +
                       b"{'descr': '<f4', 'fortran_order': False, "
                       b"'shape': (4, 4), }".ljust(69) + b"\n" + bytes(12))
        check_error(tool, bad, bad + ": member 'x.npy': truncated data "
                    "(expected 64 bytes, found 12)")
        bad = os.path.join(work, "garbage.npy")
        with open(bad, "wb") as f:
            f.write(b"garbage" * 10)
        check_error(tool, bad, bad, "bad magic")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("all numpy cross-checks passed")


if __name__ == "__main__":
    main()
