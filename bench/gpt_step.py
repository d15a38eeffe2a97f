#!/usr/bin/python3
"""Step time of a 3.4M-parameter GPT: zero-opt + zero-run against PyTorch
eager, both on one OpenBLAS thread, in the same run.

Model: 4 layers, d = 256, 4 heads, T = 64, vocab 512 (tied embeddings,
causal mask), micro-batch 8, AdamW. The model is compiled once per
--precisions entry (fp32, bf16, fp16: zero-opt's --precision); then
--rounds rounds each run zero-run (a fresh process) and PyTorch for
--warmup + --steps steps, one after the other, so that the machine's
drift reaches both sides alike. Reports each round's median step times
and their ratios, and the medians over the rounds. PyTorch runs in fp32
(its CPU autocast is not faster here).

--seq, --batch and --layers change the context, micro-batch and depth
(a long context: --seq 1024 --batch 2 --layers 2, whose attention GEMMs
zero-split-masked-matmuls splits by the causal mask).

Usage: /usr/bin/python3 bench/gpt_step.py [--build build] [--steps 15]
       [--rounds 5] [--precisions fp32,bf16] [--seq T] [--batch B]
       [--layers L]
"""
import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e", "models"))
import export_models  # noqa: E402

V, D, H, L, T, B = 512, 256, 4, 4, 64, 8


def export(model, tokens, targets, folder):
    """FOLDER/gpt.onnx (the training graph, micro-batch B) and
    FOLDER/data.npz; returns the model's path."""
    onnx_path = os.path.join(folder, "gpt.onnx")
    torch.onnx.export(model, (tokens[:B], targets[:B]), onnx_path,
                      input_names=["tokens", "targets"],
                      output_names=["loss", "logits"], opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    np.savez(os.path.join(folder, "data.npz"), tokens=tokens.numpy(),
             targets=targets.numpy())
    return onnx_path


def main():
    global T, B, L
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--precisions", default="fp32")
    ap.add_argument("--seq", type=int, default=T)
    ap.add_argument("--batch", type=int, default=B)
    ap.add_argument("--layers", type=int, default=L)
    args = ap.parse_args()
    T, B, L = args.seq, args.batch, args.layers
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = export_models.GPT(vocab=V, d=D, n_head=H, n_layer=L, block_size=T)
    model.train()
    nparams = sum(p.numel() for p in model.parameters())
    gen = torch.Generator().manual_seed(1)
    n = B * (args.steps + args.warmup)
    tokens = torch.randint(0, V, (n, T), generator=gen)
    targets = torch.randint(0, V, (n, T), generator=gen)
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    initial = copy.deepcopy(model.state_dict())

    def pytorch_steps():
        # Each round trains from the initial weights, as zero-run does.
        model.load_state_dict(initial)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3,
                                weight_decay=0.01)
        times = []
        for s in range(args.steps + args.warmup):
            x, y = tokens[s * B:(s + 1) * B], targets[s * B:(s + 1) * B]
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = model(x, y)[0]
            loss.backward()
            opt.step()
            times.append((time.perf_counter() - t0) * 1e3)
        return times[args.warmup:]

    print(f"model: GPT {L} layers, d={D}, {H} heads, T={T}, vocab {V}, "
          f"{nparams / 1e6:.2f}M parameters, micro-batch {B}, AdamW")
    with tempfile.TemporaryDirectory(prefix="zero-bench-") as tmp:
        # Exported before PyTorch trains, so both start from the same weights.
        onnx_path = export(model, tokens, targets, tmp)
        precisions = args.precisions.split(",")
        outs = {}
        for p in precisions:
            outs[p] = os.path.join(tmp, "out-" + p)
            t0 = time.time()
            subprocess.run([os.path.join(bindir, "zero-opt"), onnx_path, "-o",
                            outs[p], "--optimizer=adamw", "--lr=1e-3",
                            "--weight-decay=0.01", f"--precision={p}"],
                           check=True, capture_output=True)
            print(f"zero-opt compile ({p}): {time.time() - t0:.1f} s")
        print(f"median step over {args.steps} steps (after {args.warmup} "
              f"warmup), per round:")
        ours = {p: [] for p in precisions}
        theirs, ratios = [], {p: [] for p in precisions}
        for r in range(args.rounds):
            line = []
            for p in precisions:
                log = os.path.join(tmp, "log.jsonl")
                subprocess.run([os.path.join(bindir, "zero-run"), outs[p], "--data",
                                os.path.join(tmp, "data.npz"), "--steps",
                                str(args.steps + args.warmup), "--log", log],
                               check=True, capture_output=True)
                ours[p].append(statistics.median(
                    [json.loads(l)["time_ms"] for l in open(log)][args.warmup:]))
                line.append(f"zero-opt {p} {ours[p][-1]:6.1f} ms")
            mt = statistics.median(pytorch_steps())
            theirs.append(mt)
            for p in precisions:
                ratios[p].append(ours[p][-1] / mt)
            print(f"  round {r + 1}: " + ", ".join(line) +
                  f", PyTorch eager fp32 {mt:6.1f} ms, ratio "
                  + ", ".join(f"{p} {ours[p][-1] / mt:.2f}" for p in precisions))
    print(f"median over {args.rounds} rounds:")
    for p in precisions:
        print(f"  zero-opt + zero-run {p:5}: {statistics.median(ours[p]):8.1f} ms, "
              f"ratio to PyTorch {statistics.median(ratios[p]):.2f}")
    print(f"  PyTorch eager fp32      : {statistics.median(theirs):8.1f} ms")
    if len(precisions) > 1:
        base = precisions[0]
        for p in precisions[1:]:
            rel = [a / b for a, b in zip(ours[p], ours[base])]
            print(f"  ratio {p}/{base} (same rounds): {statistics.median(rel):.2f}")


if __name__ == "__main__":
    main()
