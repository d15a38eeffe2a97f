#!/usr/bin/python3
"""Step time of the bench GPT on 2 ranks: zero-opt at ZeRO stage 3 under
mpirun against PyTorch DistributedDataParallel (gloo), same model, same
global batch, in the same run; one OpenBLAS thread per rank on both sides.

Model: as bench/gpt_step.py (4 layers, d = 256, 4 heads, T = 64, vocab
512, 3.3M parameters), micro-batch 8 per rank (global batch 16), AdamW.
zero-opt: `--stage=3 --world-size=2` with DeepSpeed's defaults, run by
`mpirun -np 2 zero-run`; rank 0's logged step times. PyTorch: two
processes, DDP over gloo, timed around zero_grad + forward + backward
(with its all-reduce) + step on rank 0. Reports the median step after
--warmup of each, over --runs runs (the median of the runs' medians).

Usage: /usr/bin/python3 bench/gpt_ddp.py [--build build] [--steps 20] [--runs 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e", "models"))
import export_models  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt_step  # noqa: E402

V, D, H, L, T, B = gpt_step.V, gpt_step.D, gpt_step.H, gpt_step.L, gpt_step.T, gpt_step.B
N = 2


def make_model():
    torch.manual_seed(0)
    return export_models.GPT(vocab=V, d=D, n_head=H, n_layer=L, block_size=T)


def ddp_rank(rank, init, tokens, targets, steps, warmup, result):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=N)
    module = make_model().train()
    # The causal mask is a constant bool buffer, which gloo cannot broadcast.
    DDP = torch.nn.parallel.DistributedDataParallel
    DDP._set_params_and_buffers_to_ignore_for_model(
        module, [n for n, b in module.named_buffers() if b.dtype == torch.bool])
    model = DDP(module)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    times = []
    for s in range(steps + warmup):
        # Rank r's micro-batch of global step s, as zero-run reads it.
        rows = slice((s * N + rank) * B, (s * N + rank + 1) * B)
        dist.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = model(tokens[rows], targets[rows])[0]
        loss.backward()
        opt.step()
        if s >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    if rank == 0:
        result.put(statistics.median(times))
    dist.destroy_process_group()


def run_ddp(tokens, targets, steps, warmup, tmp):
    ctx = mp.get_context("spawn")
    result = ctx.Queue()
    init = "file://" + os.path.join(tmp, f"ddp-init-{time.time_ns()}")
    procs = [ctx.Process(target=ddp_rank, args=(r, init, tokens, targets, steps,
                                                warmup, result)) for r in range(N)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        if p.exitcode:
            raise SystemExit("PyTorch DDP rank failed")
    return result.get()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    total = args.steps + args.warmup
    gen = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, V, (N * B * total, T), generator=gen)
    targets = torch.randint(0, V, (N * B * total, T), generator=gen)
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ours, theirs = [], []
    with tempfile.TemporaryDirectory(prefix="zero-ddp-") as tmp:
        onnx_path = gpt_step.export(make_model().train(), tokens, targets, tmp)
        out = os.path.join(tmp, "out")
        subprocess.run([os.path.join(bindir, "zero-opt"), onnx_path, "-o", out,
                        "--stage=3", f"--world-size={N}", "--optimizer=adamw",
                        "--lr=1e-3", "--weight-decay=0.01"],
                       check=True, capture_output=True)
        for run in range(args.runs):
            log = os.path.join(tmp, f"log{run}.jsonl")
            subprocess.run(["mpirun", "--oversubscribe", "-np", str(N),
                            "-x", "OPENBLAS_NUM_THREADS", "-x", "OMP_NUM_THREADS",
                            os.path.join(bindir, "zero-run"), out, "--data",
                            os.path.join(tmp, "data.npz"), "--steps", str(total),
                            "--log", log], check=True, capture_output=True, env=env)
            ours.append(statistics.median(
                [json.loads(l)["time_ms"] for l in open(log)][args.warmup:]))
            theirs.append(run_ddp(tokens, targets, args.steps, args.warmup, tmp))
            print(f"| {run + 1} | {ours[-1]:.1f} ms | {theirs[-1]:.1f} ms | "
                  f"{ours[-1] / theirs[-1]:.2f} |", flush=True)
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(f"| **median** | **{mo:.1f} ms** | **{mt:.1f} ms** | **{mo / mt:.2f}** |")


if __name__ == "__main__":
    main()
