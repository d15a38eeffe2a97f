#!/usr/bin/python3
"""Consolidation and ONNX export of a GPT-2 XL checkpoint in bounded memory.

The checkpoint has the layout zero-run writes for the GPT-2 XL preset
(bench/gpt2_model.py --preset xl, 1.56B parameters) at ZeRO stage 3 on 8
ranks with AdamW in fp32: its manifest lists every parameter and optimizer
state of the plan that zero-opt --report=memory writes, sharded as that
plan shards them, and each rank file is an ordinary .npz archive whose
array data are holes (a sparse file: 18.7 GB of checkpoint take no disk).
Then, measured by the kernel (getrusage of the child):
- zero-opt --consolidate CK -o weights.npz writes the 6.2 GB of weights,
- zero-opt --consolidate CK --export-onnx xl.onnx writes the model with its
  weights as external data (past protobuf's 2 GB limit, so external without
  being asked),
each with a peak resident set under 2x the largest tensor (wte, 50257 x
1600 fp32 = 321.6 MB). The outputs are checked for size and layout, then
removed (they go to /dev/shm when it has room: the check is of memory, not
of the disk).

Usage: /usr/bin/python3 test/e2e/consolidate_xl.py --build build
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib

import numpy as np
import onnx

from remat import ROOT, run

WORLD = 8


def npy_header(dtype, shape):
    """A .npy version 1.0 header, as numpy writes it."""
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        np.dtype(dtype).str, "".join(f"{n}," for n in shape))
    pad = 64 - (10 + len(d) + 1) % 64
    d = d + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode()


_crc_cache = {}


def crc_with_zeros(header, nbytes):
    key = (header, nbytes)
    if key not in _crc_cache:
        crc = zlib.crc32(header)
        zeros = bytes(1 << 24)
        left = nbytes
        while left:
            n = min(left, len(zeros))
            crc = zlib.crc32(zeros[:n] if n < len(zeros) else zeros, crc)
            left -= n
        _crc_cache[key] = crc
    return _crc_cache[key]


def write_sparse_npz(path, members):
    """An uncompressed zip of .npy members whose array data are holes.
    members: [(name, dtype, shape)]. Returns the file's size."""
    central = []
    with open(path, "wb") as f:
        for name, dtype, shape in members:
            header = npy_header(dtype, shape)
            nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
            size = len(header) + nbytes
            assert size < 1 << 32
            crc = crc_with_zeros(header, nbytes)
            fname = (name + ".npy").encode()
            offset = f.tell()
            assert offset < 1 << 32
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21,
                                crc, size, size, len(fname), 0))
            f.write(fname)
            f.write(header)
            f.seek(nbytes, os.SEEK_CUR)  # a hole: zeros on read
            central.append((fname, crc, size, offset))
        cd_start = f.tell()
        for fname, crc, size, offset in central:
            f.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0,
                                0x21, crc, size, size, len(fname), 0, 0, 0, 0, 0,
                                offset))
            f.write(fname)
        cd_size = f.tell() - cd_start
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central),
                            cd_size, cd_start, 0))
        return f.tell()


def measured(cmd):
    """Runs cmd; returns its peak resident set in bytes (the ru_maxrss that
    wait4 reports for this child alone)."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            sys.stderr.write(f"command failed: {' '.join(cmd)}\n{err.read().decode()}")
            sys.exit(1)
    return usage.ru_maxrss * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    zero_opt = os.path.join(os.path.abspath(args.build), "bin", "zero-opt")
    with tempfile.TemporaryDirectory(prefix="zero-xl-ck-") as tmp:
        model = os.path.join(tmp, "xl.onnx")
        run(["/usr/bin/python3", os.path.join(ROOT, "bench", "gpt2_model.py"), model,
             "--preset", "xl"])
        plan_dir = os.path.join(tmp, "plan")
        run([zero_opt, model, "--report=memory", "--stage=3", f"--world-size={WORLD}",
             "--optimizer=adamw", "-o", plan_dir])
        plan = json.load(open(os.path.join(plan_dir, "plan.json")))
        args_ = plan["functions"]["train_step"]["arguments"]

        # The manifest zero-run writes for this plan: sharded tensors as rank
        # r's flat shard, whole ones in the ranks' files in turn.
        tensors, per_rank, owner = [], [[] for _ in range(WORLD)], 0
        roles = ("parameter", "buffer", "master_weight", "optimizer_state")
        for a in args_:
            if a["role"] not in roles:
                continue
            t = {"name": a["name"], "role": a["role"], "dtype": a["dtype"]}
            if a.get("state_of"):
                t["state_of"] = a["state_of"]
            if "shard" in a:
                t["shape"] = a["shard"]["shape"]
                t["shard_numel"] = int(np.prod(a["shape"], dtype=np.int64))
                for r in range(WORLD):
                    per_rank[r].append((a["name"], a["dtype"], [t["shard_numel"]]))
            else:
                t["shape"] = a["shape"]
                t["file"] = owner % WORLD
                per_rank[owner % WORLD].append((a["name"], a["dtype"], a["shape"]))
                owner += 1
            tensors.append(t)
        ck = os.path.join(tmp, "ck", "step-00000001")
        os.makedirs(ck)
        files = []
        for r in range(WORLD):
            name = f"rank-{r:05d}.npz"
            files.append({"name": name,
                          "bytes": write_sparse_npz(os.path.join(ck, name), per_rank[r])})
        manifest = {
            "format": "zero-opt-checkpoint", "version": 1, "model": "xl",
            "model_path": model, "model_hash": plan["model_hash"],
            "world_size": WORLD, "stage": 3, "precision": "fp32", "optimizer": "adamw",
            "steps": 1, "optimizer_steps": 1, "samples": 64,
            "rng": {"algorithm": "philox4x32-10", "seed": 0},
            "files": files, "tensors": tensors}
        json.dump(manifest, open(os.path.join(ck, "manifest.json"), "w"), indent=2)

        params = [t for t in tensors if t["role"] in ("parameter", "buffer")]
        numels = {t["name"]: int(np.prod(t["shape"], dtype=np.int64)) for t in params}
        total = sum(numels.values()) * 4
        largest_name = max(numels, key=numels.get)
        largest = numels[largest_name] * 4
        on_disk = sum(os.stat(os.path.join(ck, f["name"])).st_blocks * 512 for f in files)
        apparent = sum(f["bytes"] for f in files)
        print(f"GPT-2 XL checkpoint, stage 3 on {WORLD} ranks: {len(tensors)} tensors, "
              f"{apparent / 1e9:.1f} GB of rank files ({on_disk / 1e6:.1f} MB on disk); "
              f"weights {total / 1e9:.2f} GB, largest tensor '{largest_name}' "
              f"{largest / 1e6:.1f} MB", flush=True)

        shm = "/dev/shm"
        out_dir = shm if os.path.isdir(shm) and shutil.disk_usage(shm).free > 2 * total else tmp
        out_dir = tempfile.mkdtemp(prefix="zero-xl-out-", dir=out_dir)
        ok = True
        try:
            weights = os.path.join(out_dir, "weights.npz")
            rss = measured([zero_opt, "--consolidate", ck, "-o", weights])
            with zipfile.ZipFile(weights) as z:
                sizes = {i.filename[:-4]: i.file_size for i in z.infolist()}
            layout = sorted(sizes) == sorted(numels) and all(
                sizes[k] >= numels[k] * 4 for k in numels)
            good = rss < 2 * largest and layout
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} zero-opt --consolidate: "
                  f"{os.path.getsize(weights) / 1e9:.2f} GB written, every parameter whole: "
                  f"{layout}; peak RSS {rss / 1e6:.1f} MB < 2 x {largest / 1e6:.1f} MB",
                  flush=True)
            os.remove(weights)

            exported = os.path.join(out_dir, "xl.trained.onnx")
            rss = measured([zero_opt, "--consolidate", ck, "--export-onnx", exported])
            m = onnx.load(exported, load_external_data=False)
            ext = {t.name: {kv.key: kv.value for kv in t.external_data}
                   for t in m.graph.initializer
                   if t.data_location == onnx.TensorProto.EXTERNAL}
            data_size = os.path.getsize(exported + ".data")
            layout = (set(ext) == set(numels) and data_size >= total
                      and all(e["location"] == "xl.trained.onnx.data" and
                              int(e["length"]) == numels[k] * 4 for k, e in ext.items())
                      # the graph alone: no weight inside
                      and os.path.getsize(exported) < os.path.getsize(model) + (1 << 16))
            good = rss < 2 * largest and layout
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} zero-opt --consolidate --export-onnx: "
                  f"{len(ext)} initializers as external data ({data_size / 1e9:.2f} GB beside "
                  f"a {os.path.getsize(exported) / 1e3:.0f} kB model): {layout}; peak RSS "
                  f"{rss / 1e6:.1f} MB < 2 x {largest / 1e6:.1f} MB", flush=True)
        finally:
            shutil.rmtree(out_dir, ignore_errors=True)
        print("GPT-2 XL consolidation: " + ("bounded memory" if ok else "FAILED"))
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
