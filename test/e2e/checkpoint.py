#!/usr/bin/python3
"""Checkpoints (zero-run --save-checkpoint / --resume): exact, crash-safe,
reshardable.

- Exact resume: the GPT test model on 2 ranks at stages 0-3 in fp32, at
  stages 1 and 3 in bf16, at stage 2 in fp16 (whose early steps overflow,
  so the loss scaler's state matters) and the GPT with dropout at stage 3
  (the masks follow the step): 10 steps straight equal 5 steps, a
  checkpoint, a new process resuming it, and 5 more steps, bitwise, in
  losses and in the weights gathered at the end.
- Mixed precision across stages: a bf16 stage-1 checkpoint (its 16-bit
  parameters one update behind their masters between steps) resumed at
  stage 0 continues as the stage-1 run, bitwise.
- Crash safety: 20 trials SIGKILL a rank at a random instant of a run that
  checkpoints after every step (most of its time goes to writing them);
  each next run resumes the folder, and every resume succeeds from the
  newest whole checkpoint, whose next 2 steps equal, bitwise, the
  uninterrupted run's.
- Reshard: N=4 stage 3 -> N=2 stage 1 -> N=3 stage 2 at a global batch of
  24; after each resume the losses and final weights equal those of a
  1-rank run resumed from the same checkpoint (rtol 1e-5 / atol 1e-5, the
  equivalence suite's).
- Consolidation: zero-opt --consolidate of each of those checkpoints
  equals, bitwise and in dtype, zero-run --save-weights of the same run
  (fp32 master weights for bf16 and fp16).
- Errors: a checkpoint of another model (other parameters; same
  parameters but another graph), a truncated shard file, a missing
  manifest: one error line each, exit 1, no hang.

Usage: /usr/bin/python3 test/e2e/checkpoint.py --build build
"""
import argparse
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from remat import MPIRUN, MODELS_DIR, ROOT, run


def losses_of(log):
    return np.array([json.loads(l)["loss"] for l in open(log)], dtype=np.float64)


class Runner:
    def __init__(self, bindir, tmp):
        self.bindir, self.tmp = bindir, tmp

    def compile(self, model, label, n, flags):
        out = os.path.join(self.tmp, f"{model}.{label}")
        if not os.path.isdir(out):
            run([os.path.join(self.bindir, "zero-opt"),
                 os.path.join(self.tmp, f"{model}.onnx"), "-o", out,
                 f"--world-size={n}", "--optimizer=adamw", "--lr=1e-3"]
                + list(flags))
        return out

    def cmd(self, out, model, n, steps, extra):
        c = [os.path.join(self.bindir, "zero-run"), out, "--data",
             os.path.join(self.tmp, f"{model}.data.npz"), "--steps",
             str(steps)] + list(extra)
        return MPIRUN + ["-np", str(n)] + c if n > 1 else c

    def train(self, out, model, n, steps, tag, extra=()):
        """Runs to STEPS; returns (losses, weights)."""
        log = os.path.join(self.tmp, tag + ".jsonl")
        w = os.path.join(self.tmp, tag + ".npz")
        run(self.cmd(out, model, n, steps,
                     ["--log", log, "--save-weights", w] + list(extra)))
        return losses_of(log), np.load(w)


def same_weights(a, b):
    return sorted(a.files) == sorted(b.files) and all(
        np.array_equal(a[k], b[k]) for k in a.files)


def exact_resume(r):
    ok = True
    cases = [("gpt", f"s{s}", ["--stage=%d" % s, "--persistence-threshold=0"])
             for s in range(4)]
    cases += [("gpt", "bf16.s1", ["--stage=1", "--precision=bf16"]),
              ("gpt", "bf16.s3", ["--stage=3", "--persistence-threshold=0",
                                  "--precision=bf16"]),
              ("gpt", "fp16.s2", ["--stage=2", "--precision=fp16"]),
              ("gpt_dropout", "s3", ["--stage=3", "--persistence-threshold=0"])]
    for model, label, flags in cases:
        out = r.compile(model, label, 2, flags)
        tag = f"{model}.{label}"
        full_l, full_w = r.train(out, model, 2, 10, tag + ".full")
        ck = os.path.join(r.tmp, tag + ".ck")
        first_l, first_w = r.train(out, model, 2, 5, tag + ".first",
                                   ["--save-checkpoint", ck])
        # Consolidated, the checkpoint is what --save-weights wrote.
        cons = os.path.join(r.tmp, tag + ".consolidated.npz")
        run([os.path.join(r.bindir, "zero-opt"), "--consolidate", ck, "-o",
             cons])
        cons_w = np.load(cons)
        consolidated = same_weights(first_w, cons_w) and all(
            first_w[k].dtype == cons_w[k].dtype for k in first_w.files)
        rest_l, rest_w = r.train(out, model, 2, 10, tag + ".rest",
                                 ["--resume", ck])
        log = os.path.join(r.tmp, tag + ".full.jsonl")
        skipped = sum(bool(json.loads(l).get("skipped")) for l in open(log))
        good = (np.array_equal(np.concatenate([first_l, rest_l]), full_l,
                               equal_nan=True)
                and same_weights(full_w, rest_w) and consolidated)
        ok &= good
        note = f", {skipped} steps skipped on overflow" if "fp16" in label else ""
        print(f"{'ok  ' if good else 'FAIL'} exact resume {model} {label}: "
              f"5 + 5 steps == 10 steps, losses and weights bitwise{note}; "
              f"zero-opt --consolidate == --save-weights: {consolidated}",
              flush=True)
    return ok


def mixed_reshard(r):
    """At stages 1-2 a bf16 parameter is gathered from its master's shards
    when the next step starts, so between steps its buffer is one update
    behind; a checkpoint holds it as the master rounded. Stage 0 reads it
    from there: resumed at stage 0, the bf16 stage-1 checkpoint of
    exact_resume continues as the stage-1 run does, bitwise (2 ranks: every
    sum over ranks is of two terms, the same in any order)."""
    out = r.compile("gpt", "bf16.s0", 2, ["--stage=0", "--precision=bf16"])
    ck = os.path.join(r.tmp, "gpt.bf16.s1.ck")
    full_l = losses_of(os.path.join(r.tmp, "gpt.bf16.s1.full.jsonl"))
    full_w = np.load(os.path.join(r.tmp, "gpt.bf16.s1.full.npz"))
    rest_l, rest_w = r.train(out, "gpt", 2, 10, "gpt.bf16.s1-s0",
                             ["--resume", ck])
    good = (np.array_equal(rest_l, full_l[5:]) and same_weights(full_w, rest_w))
    print(f"{'ok  ' if good else 'FAIL'} resume bf16 stage 1 -> stage 0 (GPT, "
          f"2 ranks): 5 steps from the checkpoint == steps 5-9 of the stage-1 "
          f"run, losses and weights bitwise (first loss "
          f"{rest_l[0]:.9e} vs {full_l[5]:.9e})", flush=True)
    return good


def frozen_consolidation(r):
    """A frozen initializer travels in the checkpoint (rank 0's file):
    consolidation gives the same file as --save-weights."""
    out = r.compile("mlp", "frozen", 2, ["--freeze=fc1.weight"])
    ck = os.path.join(r.tmp, "mlp.frozen.ck")
    _, w = r.train(out, "mlp", 2, 3, "mlp.frozen", ["--save-checkpoint", ck])
    cons = os.path.join(r.tmp, "mlp.frozen.consolidated.npz")
    run([os.path.join(r.bindir, "zero-opt"), "--consolidate", ck, "-o", cons])
    good = "fc1.weight" in w.files and same_weights(w, np.load(cons))
    print(f"{'ok  ' if good else 'FAIL'} consolidation with a frozen "
          f"initializer (MLP, fc1.weight frozen, 2 ranks) == --save-weights",
          flush=True)
    return good


def fresh_ok(root, fresh):
    """Whether a run may be killed: a resumed one at once, a fresh one once
    its first checkpoint is whole."""
    return not fresh or bool(glob.glob(os.path.join(root, "step-*")))


def crash_safety(r, trials=20):
    model, n = "gpt_dropout", 2
    out = r.compile(model, "s3", n, [])
    ref_l, _ = r.train(out, model, n, 600, "crash.ref")
    # A run ends by itself 2 steps before the reference does, so that the
    # newest checkpoint can always be resumed and compared, however late a
    # loaded machine lets the kill come.
    total = len(ref_l) - 2
    root = os.path.join(r.tmp, "crash.ck")
    rng = random.Random(1234)
    ok, mid_write, resumes = True, 0, 0
    for trial in range(trials):
        extra = ["--save-checkpoint", root, "--checkpoint-every", "1",
                 "--keep-checkpoints", "3"]
        # Each run resumes the last one's checkpoints, until the reference
        # run ends: then a fresh folder.
        whole = sorted(glob.glob(os.path.join(root, "step-*")))
        fresh = not whole or int(os.path.basename(whole[-1])[5:]) > 300
        if whole and fresh:
            shutil.rmtree(root)
        elif whole:
            extra += ["--resume", root]
        p = subprocess.Popen(r.cmd(out, model, n, total, extra),
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        # Wait for the ranks, then kill one at a random instant.
        ranks = []
        deadline = time.time() + 30
        while len(ranks) < n and time.time() < deadline:
            ranks = subprocess.run(["pgrep", "-s", str(p.pid), "-x",
                                    "zero-run"], capture_output=True,
                                   text=True).stdout.split()
            time.sleep(0.02)
        # A fresh run is killed once it has written a checkpoint: how long
        # it takes to start depends on the machine's load, not on this test.
        while not fresh_ok(root, fresh) and time.time() < deadline + 60:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.3, 1.2))
        victim = rng.choice(ranks) if ranks else None
        if victim:
            try:
                os.kill(int(victim), signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            print(f"FAIL crash trial {trial}: the other ranks hung", flush=True)
            ok = False
        # Nothing of this run may outlive it.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        mid_write += bool(glob.glob(os.path.join(root, ".tmp-step-*")))
        # The newest whole checkpoint resumes, and continues as the
        # uninterrupted run does.
        whole = sorted(glob.glob(os.path.join(root, "step-*")))
        if not whole:
            continue
        k = int(os.path.basename(whole[-1])[5:])
        if k + 2 > len(ref_l):
            print(f"FAIL crash trial {trial}: ran past the reference", flush=True)
            return False
        log = os.path.join(r.tmp, f"crash.{trial}.jsonl")
        res = subprocess.run(r.cmd(out, model, n, k + 2,
                                   ["--resume", root, "--log", log]),
                             capture_output=True, text=True, timeout=120)
        resumes += 1
        good = res.returncode == 0 and np.array_equal(losses_of(log),
                                                      ref_l[k:k + 2])
        if not good:
            print(f"FAIL crash trial {trial}: resume from step {k}: rc "
                  f"{res.returncode}\n{res.stderr}", flush=True)
        ok &= good
    ok &= resumes == trials
    print(f"{'ok  ' if ok else 'FAIL'} crash safety: {trials} SIGKILLs, "
          f"{mid_write} left a checkpoint half written, {resumes} resumes "
          f"from the newest whole checkpoint, each equal to the uninterrupted "
          f"run", flush=True)
    return ok


def reshard(r):
    model, ok = "gpt_dropout", True
    # Global batch 24: micro-batches of 2, accumulated 24 / (2N) times.
    def flags(n, stage):
        return [f"--stage={stage}", "--persistence-threshold=0",
                f"--gradient-accumulation-steps={12 // n}"]
    one = r.compile(model, "g24.n1", 1, flags(1, 0))
    chain = [(4, 3), (2, 1), (3, 2)]
    prev = None
    for i, (n, stage) in enumerate(chain):
        out = r.compile(model, f"g24.n{n}.s{stage}", n, flags(n, stage))
        ck = os.path.join(r.tmp, f"reshard.{i}.ck")
        extra = ["--save-checkpoint", ck] + (["--resume", prev] if prev else [])
        l, w = r.train(out, model, n, 3 * (i + 1), f"reshard.{i}", extra)
        if prev:
            ref_l, ref_w = r.train(one, model, 1, 3 * (i + 1),
                                   f"reshard.{i}.ref", ["--resume", prev])
            rel = float(np.max(np.abs(l - ref_l) / np.abs(ref_l)))
            err = max(float(np.max(np.abs(w[k] - ref_w[k]))) for k in ref_w.files)
            good = len(l) == 3 and rel <= 1e-5 and err <= 1e-5
            ok &= good
            pn, ps = chain[i - 1]
            print(f"{'ok  ' if good else 'FAIL'} reshard N={pn} stage {ps} -> "
                  f"N={n} stage {stage}: 3 steps vs 1 rank resumed from the "
                  f"same checkpoint: loss max rel err {rel:.1e}, weight max "
                  f"abs err {err:.1e} (limits 1e-05)", flush=True)
        prev = ck
    return ok


def errors(r):
    ok = True
    gpt = r.compile("gpt", "s3", 2, ["--stage=3", "--persistence-threshold=0"])
    src = os.path.join(r.tmp, "gpt.s3.ck")  # from exact_resume
    mlp = r.compile("mlp", "s0", 2, [])
    drop = r.compile("gpt_dropout", "s3", 2, [])
    bad = os.path.join(r.tmp, "bad.ck")

    def expect(label, out, model, ck, wanted):
        nonlocal ok
        res = subprocess.run(r.cmd(out, model, 2, 10, ["--resume", ck]),
                             capture_output=True, text=True, timeout=120)
        lines = [l for l in res.stderr.splitlines() if "error:" in l]
        good = (res.returncode != 0 and len(lines) == 1
                and all(w in lines[0] for w in wanted))
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} error, {label}: "
              f"{lines[0] if lines else res.stderr.strip()!r}", flush=True)

    expect("another model", mlp, "mlp", src, ["was written for", "parameter"])
    expect("another graph, same parameters", drop, "gpt_dropout", src,
           ["another graph"])
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(src, bad)
    step = sorted(glob.glob(os.path.join(bad, "step-*")))[-1]
    shard = os.path.join(step, "rank-00001.npz")
    with open(shard, "r+b") as f:
        f.truncate(os.path.getsize(shard) // 2)
    expect("truncated shard", gpt, "gpt", bad, ["rank-00001.npz", "truncated"])
    os.remove(os.path.join(step, "manifest.json"))
    expect("missing manifest", gpt, "gpt", step, ["manifest.json"])
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("gpt", "mlp", "gpt_dropout"):
            run([sys.executable, os.path.join(MODELS_DIR, "export_models.py"),
                 tmp, "--only", name])
        r = Runner(bindir, tmp)
        ok = exact_resume(r)
        ok &= mixed_reshard(r)
        ok &= frozen_consolidation(r)
        ok &= reshard(r)
        ok &= crash_safety(r)
        ok &= errors(r)
    print("checkpoint tests passed" if ok else "checkpoint tests FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
