#!/usr/bin/python3
"""The CUDA target's kernels checked on the CPU (zero-opt --simulate-gpu).

zero-gpu-map-kernels tiles every kernel to GPU blocks and threads as
--target=cuda does; --simulate-gpu compiles that mapped IR for the CPU,
the foralls running one after another (the order the barriers between
launches give) and every thread reducing in loop order, as a GPU thread
does. For the MLP, CNN and GPT test models in fp32 and bf16, at stage 0
on 1 rank and at stage 3 on 2 ranks (sharded updates, gathered
parameters), and the GPT in fp16 with clipping at stage 2 on 2 ranks, a
GPT-2-shaped model (its QKV bias in its GEMM's C) in bf16 at stages 0
and 3 and fp32 at stage 3 (SGD), and a GPT with a
509-token vocabulary (rows that zero-gpu-split-reductions splits into
partials and a tail, the loss's statistics in one pass) in fp32 at stage
3 on 2 ranks (SGD: AdamW's first step turns rounding in a near-zero
gradient into a step of the learning rate's size) and in bf16 (GEMMs that
zero-gpu-pad-gemm-dims pads to 512) at stage 0 on 1 rank, 5
AdamW steps from the same weights on the same data:

- the compile reports GPU launches (the kernels were mapped), row groups
  for a GPT over 1024 tokens (zero-gpu-row-groups: a softmax's statistics
  and their users in one launch, a barrier between them; its probabilities
  and their gradient written only where the split attention GEMMs read
  them), and ops whose threads take several rows for an MLP over 4096
  samples (mlp_wide);
- every loss and every saved weight equals the CPU target's within the
  equivalence suite's tolerance in fp32 (losses rtol 1e-5, weights atol
  1e-5) and mixed_precision.py's in bf16 and fp16 (1e-2, 2e-3). The
  simulated build also runs zero-gpu-scalar-copies, the CUDA target's
  handling of the step's scalars (element moves as copies, device scalars
  read by the kernels that use them). The two differ
  only in the order of floating-point sums: the CPU target lets a
  reduction split across vector lanes, a mapped kernel sums in loop order.

Not covered here (docs/cuda-target.md): libdevice's math (the CPU's
approximations run instead), the launch shapes of upstream's
map_forall_to_blocks/threads, and the GPU itself (test/gpu/).

Usage: /usr/bin/python3 test/e2e/gpu_kernels.py --build build
"""
import argparse
import json
import os
import re
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from remat import MODELS_DIR, MPIRUN, ROOT, run  # noqa: E402

TOL = {"fp32": (1e-5, 1e-5), "bf16": (1e-2, 2e-3), "fp16": (1e-2, 2e-3)}
STEPS = 5


def train(bindir, tmp, name, precision, stage, n, simulate, extra=()):
    """Losses, weights and the number of GPU launches of one compile."""
    tag = f"{name}.{precision}.s{stage}.n{n}.{'gpu' if simulate else 'cpu'}"
    out = os.path.join(tmp, tag)
    flags = (["--simulate-gpu"] if simulate else []) + list(extra)
    r = run([os.path.join(bindir, "zero-opt"), os.path.join(tmp, f"{name}.onnx"),
             "-o", out, f"--world-size={n}", f"--stage={stage}",
             f"--precision={precision}", "--optimizer=adamw", "--lr=1e-3",
             "--persistence-threshold=0", "--time-report"] + flags)
    m = re.search(r"mapped to (\d+) GPU launches \((\d+) row groups, "
                  r"(\d+) guarded selects, (\d+) with several outputs a "
                  r"thread, (\d+) writing part of their rows, (\d+) loops "
                  r"loading in batches\)", r.stderr)
    log, w = out + ".jsonl", out + ".npz"
    cmd = [os.path.join(bindir, "zero-run"), out, "--data",
           os.path.join(tmp, f"{name}.data.npz"), "--steps", str(STEPS),
           "--log", log, "--save-weights", w]
    run(MPIRUN + ["-np", str(n)] + cmd if n > 1 else cmd)
    # A non-finite loss is logged as null.
    losses = np.array([np.nan if (x := json.loads(l)["loss"]) is None else x
                       for l in open(log)], dtype=np.float64)
    return (losses, np.load(w),
            tuple(int(g) for g in m.groups()) if m else (0, 0, 0, 0, 0, 0))


def check(bindir, tmp, name, precision, stage, n, extra=(), row_groups=False,
          coarsened=False, partial=False):
    # Both builds at once: each compile and run is mostly one core's work.
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(train, bindir, tmp, name, precision, stage, n, sim,
                            extra)
                for sim in (False, True)]
        (ref_l, ref_w, (ref_launches, *_)), (l, w, (launches, groups, guarded,
                                                    several, parts,
                                                    batched)) = [
            r.result() for r in runs]
    ltol, wtol = TOL[precision]
    rel = float(np.max(np.abs(l - ref_l) / np.abs(ref_l))) if len(l) == len(ref_l) else np.inf
    werr = max(float(np.max(np.abs(w[k].astype(np.float64) - ref_w[k])))
               for k in ref_w.files)
    finite = np.all(np.isfinite(l))
    ok = (len(l) == STEPS and finite and rel <= ltol and werr <= wtol
          and launches > 0 and ref_launches == 0
          and (groups > 0 if row_groups else True)
          and (several > 0 if coarsened else True)
          # A causal softmax's probabilities and their gradient written
          # only where the split attention GEMMs read them.
          and (parts > 0 if partial else True)
          # A causal mask guards the scores' loads (zero-gpu-guard-loads).
          and (guarded > 0 if name.startswith("gpt") else True)
          # Every model reduces (its loss at least) in a thread's loop.
          and batched > 0
          and sorted(w.files) == sorted(ref_w.files))
    print(f"{'ok  ' if ok else 'FAIL'} {name:9s} {precision} stage {stage} on {n}"
          f"{' ' + ' '.join(extra) if extra else ''}: "
          f"{launches} GPU launches, {groups} row groups"
          f"{' (some expected)' if row_groups else ''}, "
          f"{guarded} guarded selects, {several} with several outputs a thread"
          f"{' (some expected)' if coarsened else ''}, "
          f"{parts} writing part of their rows"
          f"{' (some expected)' if partial else ''}, "
          f"{batched} loops loading in batches; "
          f"loss max rel {rel:.2e} (tol {ltol:g}), "
          f"weights max abs {werr:.2e} (tol {wtol:g})")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    ok = True
    with tempfile.TemporaryDirectory(prefix="zero-gpu-kernels-") as tmp:
        for name in ("mlp", "cnn", "gpt"):
            run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
                 tmp, "--only", name])
            for precision in ("fp32", "bf16"):
                ok &= check(bindir, tmp, name, precision, 0, 1)
                ok &= check(bindir, tmp, name, precision, 3, 2)
        # Rows long enough to split (the 509-token cross-entropy, its
        # softmax's statistics): partials per row and an ordered combine,
        # the loss's maximum and sum in one pass with the split's tail
        # after it (zero-gpu-online-softmax). With SGD: one fc_out weight's
        # first gradient is 8.0e-8 on the CPU and 7.0e-8 here (rounding
        # beside gradients near 1e-2), which AdamW's first step turns into
        # 0.889 and 0.875 of the learning rate (1.4e-5 apart).
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
             tmp, "--only", "gpt_wide"])
        ok &= check(bindir, tmp, "gpt_wide", "fp32", 3, 2, ("--optimizer=sgd",))
        # In bf16 its vocabulary GEMMs run on operands padded to 512
        # (zero-gpu-pad-gemm-dims); the CPU target's are not padded.
        ok &= check(bindir, tmp, "gpt_wide", "bf16", 0, 1)
        # fp16 loss scaling and clipping: scalars the step computes on the
        # device (the overflow flag, the unscale-and-clip factor), which
        # the GPU's kernels read from device memory themselves.
        ok &= check(bindir, tmp, "gpt", "fp16", 2, 2,
                    ("--gradient-clipping=1.0",))
        # Rows enough for row groups (the attention softmax's, the loss's
        # statistics with their users in one launch, a barrier between
        # them): each block's rows through every op in turn, in order on
        # the CPU.
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
             tmp, "--only", "gpt_long"])
        ok &= check(bindir, tmp, "gpt_long", "fp32", 0, 1, row_groups=True,
                    partial=True)
        ok &= check(bindir, tmp, "gpt_long", "bf16", 3, 2, row_groups=True,
                    partial=True)
        # A layer norm over 2048 rows of 1024: its backward as one row group
        # (an op over unit loops, buffers read through views), its weight
        # and bias gradients as column partials split twice. In fp32 with
        # SGD, which moves the weights by the gradients themselves (AdamW's
        # first steps move each by about lr whatever the gradient's size,
        # so a near-zero gradient summed in another order moved one
        # projection weight 2.4e-5 where SGD's agree to 2e-9).
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
             tmp, "--only", "norm_long"])
        ok &= check(bindir, tmp, "norm_long", "fp32", 0, 1,
                    ("--optimizer=sgd",), row_groups=True)
        ok &= check(bindir, tmp, "norm_long", "bf16", 3, 2, row_groups=True)
        # [4096, 1024] elementwise ops: each thread takes several rows.
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"),
             tmp, "--only", "mlp_wide"])
        ok &= check(bindir, tmp, "mlp_wide", "fp32", 0, 1, coarsened=True)
        ok &= check(bindir, tmp, "mlp_wide", "bf16", 3, 2, coarsened=True)
        # GPT-2's blocks (bench/gpt2_model.py): the QKV projection's bias is
        # added alone to its GEMM's product, so the GEMM starts from the
        # bias broadcast into C and accumulates (zero-gpu-bias-into-gemms;
        # bias-into-gemms-gpt.test shows it applies), a 16-bit sum rounded
        # once where the CPU target rounds the product and then the sum.
        # With SGD: the key's bias has no gradient but rounding (softmax
        # ignores a constant added to a row's scores), and AdamW turns that
        # rounding, whichever its sign, into steps of the learning rate's
        # size (5.2e-3 apart after 5 steps; fp32 at stage 3 1.3e-5 apart
        # even without the fold, the sums' order alone).
        run(["/usr/bin/python3", os.path.join(ROOT, "bench", "gpt2_model.py"),
             os.path.join(tmp, "gpt2.onnx"), "--init", "--layers", "2",
             "--d", "64", "--heads", "2", "--vocab", "128", "--seq", "32",
             "--batch", "2"])
        tokens = np.random.default_rng(0).integers(0, 128, size=(32, 32))
        np.savez(os.path.join(tmp, "gpt2.data.npz"), tokens=tokens,
                 targets=np.roll(tokens, -1, axis=1))
        ok &= check(bindir, tmp, "gpt2", "bf16", 0, 1, ("--optimizer=sgd",))
        ok &= check(bindir, tmp, "gpt2", "bf16", 3, 2, ("--optimizer=sgd",))
        ok &= check(bindir, tmp, "gpt2", "fp32", 3, 2, ("--optimizer=sgd",))
    print("gpu kernels on the CPU: " + ("all agree" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
