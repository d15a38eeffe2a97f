#!/usr/bin/python3
"""Bytes by element type: a float64 model at ZeRO stage 3 on 2 ranks.

The MLP of test/e2e/models exported in double precision (parameters, data
and every activation float64) is compiled at stage 3 for 2 ranks with
small reduce, all-gather and prefetch buckets (so buckets close and
prefetch stops by DeepSpeed's element counts), trained STEPS steps under
mpirun and compared with:

- PyTorch training the same double model on the same global batch
  (train_torch.py): per-step losses (rtol 1e-8, the log's precision) and
  final weights (atol 1e-12), which must come back as float64;
- its own plan: bytes each rank sends equal plan.json's exactly, and the
  runtime's peak bytes, overall and per memory category, equal the plan's;
- the stage-3 formulas with 8-byte elements: parameters and gradients
  8 Psi/N, Adam's two moments 16 Psi/N (Psi/N padded per tensor);
- the float32 MLP planned with the same settings: the same collectives
  (bucket limits count elements, not bytes) moving exactly twice the bytes.
plan.json must name float64 as the model's dtype and every parameter's,
gradient's and optimizer state's, and the loss and gradient norm the step
returns (and all-reduces) are float64 too.

Usage: /usr/bin/python3 test/e2e/float64.py --build build
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(ROOT, "test/e2e/models")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
STEPS, N = 3, 2
BUCKETS = {"stage": 3, "stage3_param_persistence_threshold": 0,
           "reduce_bucket_size": 300, "allgather_bucket_size": 300,
           "stage3_prefetch_bucket_size": 300}


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=600)
    if r.returncode:
        sys.exit(f"FAIL: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    zopt, zrun = os.path.join(bindir, "zero-opt"), os.path.join(bindir, "zero-run")
    checks = []

    def check(ok, what):
        checks.append(ok)
        print(f"{'ok  ' if ok else 'FAIL'} {what}")

    with tempfile.TemporaryDirectory(prefix="zero-f64-") as tmp:
        for name in ("mlp64", "mlp"):
            run(["/usr/bin/python3", os.path.join(MODELS, "export_models.py"), tmp,
                 "--only", name])
        cfg = os.path.join(tmp, "ds.json")
        json.dump({"train_micro_batch_size_per_gpu": 4, "zero_optimization": BUCKETS,
                   "gradient_clipping": 1.0,
                   "optimizer": {"type": "AdamW",
                                 "params": {"lr": 1e-3, "weight_decay": 0.01}}},
                  open(cfg, "w"))
        model, data = os.path.join(tmp, "mlp64.onnx"), os.path.join(tmp, "mlp64.data.npz")
        out = os.path.join(tmp, "out64")
        run([zopt, model, "--config", cfg, f"--world-size={N}", "-O1", "-o", out])
        log, w, st = (os.path.join(tmp, f) for f in ("log.jsonl", "w.npz", "stats.json"))
        run(["mpirun", "--oversubscribe", "-np", str(N), zrun, out, "--data", data,
             "--steps", str(STEPS), "--log", log, "--save-weights", w, "--stats", st])
        ref = os.path.join(tmp, "torch.npz")
        run(["/usr/bin/python3", os.path.join(MODELS, "train_torch.py"), "mlp64", model,
             data, ref, "--steps", str(STEPS), "--optimizer", "adamw", "--lr", "1e-3",
             "--weight-decay", "0.01", "--clip", "1.0", "--world-size", str(N)])
        plan = json.load(open(os.path.join(out, "plan.json")))
        stats = json.load(open(st))
        fn = plan["functions"]["train_step"]

        # Element types in the plan.
        typed = [a for a in fn["arguments"]
                 if a["category"] in ("parameters", "gradients", "optimizer_state")]
        scalars = {r["name"]: r["dtype"] for r in fn["results"]}
        check(plan["dtype"] == "float64" and typed
              and all(a["dtype"] == "float64" for a in typed)
              and scalars == {"loss": "float64", "grad_norm": "float64"},
              f"plan.json: model dtype {plan['dtype']}, {len(typed)} model-state "
              f"buffers all float64, results {scalars}")

        # Against PyTorch in double precision.
        torch_ref = np.load(ref)
        losses = [json.loads(l)["loss"] for l in open(log)]
        lerr = max(abs(a - b) / abs(b) for a, b in zip(losses, torch_ref["losses"]))
        weights = np.load(w)
        werr = max(float(np.abs(weights[k] - torch_ref["param:" + k]).max())
                   for k in weights.files)
        check(len(losses) == STEPS and lerr <= 1e-8 and werr <= 1e-12
              and all(weights[k].dtype == np.float64 for k in weights.files),
              f"PyTorch float64: loss rel {lerr:.1e}, weights abs {werr:.1e}")

        # Against its own plan.
        planned = fn["communication"]["bytes_sent_per_rank"]
        measured = stats["bytes_sent_per_rank"]
        check(all(measured[k] == planned[k] * STEPS for k in planned),
              f"bytes sent per step {planned}, measured {measured} over {STEPS} steps")
        mem = fn["memory"]
        cats_ok = all(stats["memory"]["categories"][c]["peak"] == v["peak"]
                      for c, v in mem["categories"].items())
        check(stats["memory"]["peak"] == mem["peak"] and cats_ok,
              f"peak {stats['memory']['peak']} B (plan {mem['peak']}), every "
              f"category equal: {cats_ok}")

        # Stage-3 formulas with 8-byte elements.
        shard = sum(-(-a["shard"]["numel"] // N) for a in fn["arguments"]
                    if a["role"] == "parameter")
        want = {"parameters": 8 * shard, "gradients": 8 * shard,
                "optimizer_state": 16 * shard}
        check(mem["model_states"] == want,
              f"model states {mem['model_states']} == 8-byte formulas {want}")

        # The float32 twin: same element-count buckets, half the bytes.
        out32 = os.path.join(tmp, "out32")
        run([zopt, os.path.join(tmp, "mlp.onnx"), "--config", cfg, f"--world-size={N}",
             "--report=memory", "-o", out32])
        fn32 = json.load(open(os.path.join(out32, "plan.json")))["functions"]["train_step"]
        c32, c64 = fn32["communication"], fn["communication"]
        check(c32["calls"] == c64["calls"]
              and all(c64["bytes_sent_per_rank"][k] == 2 * v
                      for k, v in c32["bytes_sent_per_rank"].items()),
              f"float32 twin: calls {c32['calls']} == {c64['calls']}, bytes "
              f"{c32['bytes_sent_per_rank']} x 2")
    print("float64 at stage 3: " + ("all checks passed" if all(checks) else "FAILED"))
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
