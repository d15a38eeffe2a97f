#!/usr/bin/python3
"""ONNX export of a trained model (zero-run --export-onnx, zero-opt
--consolidate DIR --export-onnx).

For the MLP, CNN and GPT test models, trained 3 AdamW steps on 2 ranks
(GPT and MLP at stage 3, CNN at stage 1 in bf16, whose master weights are
what is exported):
- zero-run --export-onnx at the end of training, and zero-opt --consolidate
  --export-onnx of the checkpoint that run wrote, with the weights in the
  model and as external data beside it;
- each exported model's initializers equal --save-weights of the run
  (bitwise, the initializers' own dtype);
- ONNX Runtime on each exported model equals zero-run --infer with
  --load-weights of the saved weights on every output (rtol 1e-5, atol
  1e-6: forward_parity.py's tolerance), and differs from ONNX Runtime on
  the model before training (the weights did change);
- errors: another model than the one trained, --consolidate with nothing to
  write, --external-data without --export-onnx, --export-onnx with --infer:
  one error line each, exit 1, no file left.

Usage: /usr/bin/python3 test/e2e/onnx_export.py --build build
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

from remat import MPIRUN, MODELS_DIR, ROOT, run

RTOL, ATOL = 1e-5, 1e-6


def fails(cmd, expected):
    """The command exits 1 with one error line containing `expected`."""
    r = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in r.stderr.splitlines() if "error" in l]
    good = r.returncode == 1 and len(lines) == 1 and expected in lines[0]
    print(f"{'ok  ' if good else 'FAIL'} error: {lines[0] if lines else r.stderr.strip()!r}",
          flush=True)
    return good


def initializers(path):
    m = onnx.load(path, load_external_data=False)
    onnx.external_data_helper.load_external_data_for_model(m, os.path.dirname(path))
    return {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}


def external_names(path):
    m = onnx.load(path, load_external_data=False)
    return {t.name for t in m.graph.initializer
            if t.data_location == onnx.TensorProto.EXTERNAL}


class Check:
    def __init__(self, bindir, tmp):
        self.bindir, self.tmp = bindir, tmp
        self.ok = True

    def tool(self, name):
        return os.path.join(self.bindir, name)

    def report(self, good, what):
        self.ok &= good
        print(f"{'ok  ' if good else 'FAIL'} {what}", flush=True)

    def ort(self, model, data, tag):
        out = os.path.join(self.tmp, tag + ".ort.npz")
        run(["node", os.path.join(ROOT, "test", "tools", "run_ort.js"), model, data, out])
        return out

    def close(self, ours, ref):
        r = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "test", "tools", "compare_npz.py"),
                            ours, ref, "--rtol", str(RTOL), "--atol", str(ATOL)],
                           capture_output=True, text=True)
        return r.returncode == 0, r.stdout.strip().replace("\n", "; ")

    def model(self, name, flags):
        t = self.tmp
        onnx_path = os.path.join(t, f"{name}.onnx")
        data = os.path.join(t, f"{name}.data.npz")
        out = os.path.join(t, f"{name}.train")
        run([self.tool("zero-opt"), onnx_path, "-o", out, "--world-size=2",
             "--optimizer=adamw", "--lr=1e-2"] + flags)
        ck = os.path.join(t, f"{name}.ck")
        weights = os.path.join(t, f"{name}.w.npz")
        end = os.path.join(t, f"{name}.end.onnx")
        run(MPIRUN + ["-np", "2", self.tool("zero-run"), out, "--data", data, "--steps", "3",
                      "--save-weights", weights, "--save-checkpoint", ck,
                      "--export-onnx", end])
        cons = os.path.join(t, f"{name}.ck.onnx")
        run([self.tool("zero-opt"), "--consolidate", ck, "--export-onnx", cons,
             "--external-data=always"])

        # The reference for the exported models: our forward pass with the
        # trained weights, on one rank.
        infer = os.path.join(t, f"{name}.infer")
        run([self.tool("zero-opt"), onnx_path, "-o", infer, "--mode=infer"])
        ours = os.path.join(t, f"{name}.ours.npz")
        run([self.tool("zero-run"), infer, "--infer", "--load-weights", weights,
             "--data", data, "--out", ours])

        saved = np.load(weights)
        before = self.ort(onnx_path, data, f"{name}.before")
        unchanged, _ = self.close(before, ours)
        for path, how in [(end, "zero-run --export-onnx"),
                          (cons, "zero-opt --consolidate --export-onnx --external-data=always")]:
            inits = initializers(path)
            same = all(k in inits and inits[k].dtype == saved[k].dtype
                       and np.array_equal(inits[k], saved[k]) for k in saved.files)
            ext = external_names(path)
            big = {k for k in saved.files if saved[k].nbytes >= 1024}
            layout = (ext == big and os.path.exists(path + ".data")) if "always" in how \
                else not ext
            good, detail = self.close(ours, self.ort(path, data, os.path.basename(path)))
            self.report(same and layout and good and not unchanged,
                        f"{name}: {how}: initializers == --save-weights: {same}; "
                        f"{'external data for ' + str(len(ext)) + ' tensors' if ext else 'weights inside'}"
                        f" ({'as expected' if layout else 'WRONG'}); ONNX Runtime == zero-run "
                        f"--infer (rtol {RTOL}): {detail}; differs from the untrained model: "
                        f"{not unchanged}")
        return out, ck, infer

    def errors(self, out, ck, infer):
        t = self.tmp
        bad = os.path.join(t, "bad.onnx")
        good = True
        good &= fails([self.tool("zero-opt"), "--consolidate", ck, "--export-onnx", bad,
                       "--model", os.path.join(t, "mlp.onnx")],
                      "not the model that was trained")
        good &= fails([self.tool("zero-opt"), "--consolidate", ck],
                      "needs -o weights.npz or --export-onnx")
        good &= fails([self.tool("zero-run"), infer, "--data", os.path.join(t, "gpt.data.npz"),
                       "--external-data=always"],
                      "--external-data goes with --export-onnx")
        good &= fails([self.tool("zero-run"), infer, "--infer", "--data",
                       os.path.join(t, "gpt.data.npz"), "--export-onnx", bad],
                      "--export-onnx writes the trained model")
        good &= not os.path.exists(bad) and not os.path.exists(bad + ".tmp")
        self.report(good, "export errors: one line each, no file left")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    bindir = os.path.join(os.path.abspath(args.build), "bin")
    with tempfile.TemporaryDirectory(prefix="zero-export-") as tmp:
        run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_models.py"), tmp])
        c = Check(bindir, tmp)
        c.model("mlp", ["--stage=3", "--persistence-threshold=0"])
        c.model("cnn", ["--stage=1", "--precision=bf16"])
        out, ck, infer = c.model("gpt", ["--stage=3", "--persistence-threshold=0"])
        c.errors(out, ck, infer)
        print("onnx export: " + ("all checks passed" if c.ok else "FAILED"))
        return 0 if c.ok else 1


if __name__ == "__main__":
    sys.exit(main())
