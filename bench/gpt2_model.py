#!/usr/bin/python3
"""Writes a GPT-2-shaped training graph as ONNX, with its weights as ONNX
external data.

The graph is GPT-2's (pre-LayerNorm blocks, GELU MLP, causal attention,
tied token embedding, mean cross-entropy over next tokens), built node by
node with onnx.helper so that any size can be written without a framework
holding the weights. The weights go to OUT.data as external data, the
format of ONNX models past protobuf's 2 GB limit. With --sparse (the
default for the memory bench) that file is only reserved: zero-opt's
--report=memory reads shapes, never weight values, so GPT-2 XL's 6 GB are
neither written nor read. With --init the weights are real (small models
that are trained).

Presets: xl = GPT-2 XL (48 layers, d 1600, 25 heads, vocab 50257, context
1024: 1.56B parameters).

Usage: /usr/bin/python3 bench/gpt2_model.py OUT.onnx [--preset xl]
       [--layers L --d D --heads H --vocab V --seq T --batch B] [--init]
       [--attn-dropout P]
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

PRESETS = {
    "xl": dict(layers=48, d=1600, heads=25, vocab=50257, seq=1024, batch=8),
    "tiny": dict(layers=2, d=32, heads=4, vocab=64, seq=16, batch=2),
}


class Graph:
    def __init__(self, data_file, init, seed):
        self.nodes, self.inits, self.weights = [], [], []
        self.data_file, self.init = data_file, init
        self.offset = 0
        self.rng = np.random.default_rng(seed)
        self.count = 0
        # Node names carry the block they belong to, as PyTorch's exporter
        # writes them (/h.0/MatMul_12): zero-opt's locations and reports.
        self.scope = ""

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def node(self, op, inputs, n_out=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(n_out)]
        scope = f"/{self.scope}" if self.scope else ""
        self.nodes.append(helper.make_node(op, inputs, outs,
                                           name=self.name(f"{scope}/{op}"), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, name, array):
        """A constant node (a float initializer would be trained)."""
        self.nodes.append(helper.make_node(
            "Constant", [], [name], name="/" + name,
            value=numpy_helper.from_array(array, name)))
        return name

    def weight(self, name, shape, std=0.02, fill=None):
        """A trained float32 weight, stored as external data."""
        t = TensorProto()
        t.name = name
        t.data_type = TensorProto.FLOAT
        t.dims.extend(shape)
        nbytes = int(np.prod(shape)) * 4
        if self.init:
            v = (np.full(shape, fill, np.float32) if fill is not None else
                 (self.rng.standard_normal(shape) * std).astype(np.float32))
            self.weights.append(v)
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", os.path.basename(self.data_file)),
                     ("offset", str(self.offset)), ("length", str(nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += nbytes
        self.inits.append(t)
        return name


def build(cfg, out, init, seed=0, attn_dropout=0.0):
    L, d, H, V, T, B = (cfg[k] for k in ("layers", "d", "heads", "vocab", "seq", "batch"))
    hd = d // H
    g = Graph(out + ".data", init, seed)
    i64 = lambda *v: np.array(v, dtype=np.int64)
    shape_bthd = g.const("shape_bthd", i64(B, T, H, hd))
    shape_btd = g.const("shape_btd", i64(B, T, d))
    shape_flat = g.const("shape_flat", i64(B * T, V))
    shape_tgt = g.const("shape_tgt", i64(B * T))
    split3 = g.const("split_qkv", i64(d, d, d))
    causal = g.const("causal", np.tril(np.ones((T, T), dtype=bool)))
    neg = g.const("neg_inf", np.array(-1e9, dtype=np.float32))
    scale = g.const("attn_scale", np.array(1 / math.sqrt(hd), dtype=np.float32))
    half = g.const("half", np.array(0.5, dtype=np.float32))
    if attn_dropout:
        drop_ratio = g.const("attn_pdrop", np.array(attn_dropout, dtype=np.float32))
        training = g.const("training", np.array(True))
    one = g.const("one", np.array(1.0, dtype=np.float32))
    rsqrt2 = g.const("rsqrt2", np.array(1 / math.sqrt(2), dtype=np.float32))

    def layer_norm(x, prefix):
        return g.node("LayerNormalization",
                      [x, g.weight(prefix + ".weight", [d], fill=1.0),
                       g.weight(prefix + ".bias", [d], fill=0.0)],
                      axis=-1, epsilon=1e-5)

    def linear(x, prefix, n_in, n_out):
        y = g.node("MatMul", [x, g.weight(prefix + ".weight", [n_in, n_out])])
        return g.node("Add", [y, g.weight(prefix + ".bias", [n_out], fill=0.0)])

    wte = g.weight("wte", [V, d])
    x = g.node("Add", [g.node("Gather", [wte, "tokens"], axis=0),
                       g.weight("wpe", [T, d], std=0.01)])
    for l in range(L):
        p = f"h.{l}"
        g.scope = p
        qkv = linear(layer_norm(x, p + ".ln_1"), p + ".attn.c_attn", d, 3 * d)
        q, k, v = g.node("Split", [qkv, split3], n_out=3, axis=-1)
        heads = lambda t, perm: g.node(
            "Transpose", [g.node("Reshape", [t, shape_bthd])], perm=perm)
        q, k, v = heads(q, [0, 2, 1, 3]), heads(k, [0, 2, 3, 1]), heads(v, [0, 2, 1, 3])
        att = g.node("Mul", [g.node("MatMul", [q, k]), scale])
        att = g.node("Softmax", [g.node("Where", [causal, att, neg])], axis=-1)
        if attn_dropout:
            att = g.node("Dropout", [att, drop_ratio, training])
        y = g.node("Transpose", [g.node("MatMul", [att, v])], perm=[0, 2, 1, 3])
        y = linear(g.node("Reshape", [y, shape_btd]), p + ".attn.c_proj", d, d)
        x = g.node("Add", [x, y])
        m = linear(layer_norm(x, p + ".ln_2"), p + ".mlp.c_fc", d, 4 * d)
        gelu = g.node("Mul", [g.node("Mul", [m, half]), g.node(
            "Add", [g.node("Erf", [g.node("Mul", [m, rsqrt2])]), one])])
        x = g.node("Add", [x, linear(gelu, p + ".mlp.c_proj", 4 * d, d)])
    g.scope = ""
    h = layer_norm(x, "ln_f")
    logits = g.node("MatMul", [h, g.node("Transpose", [wte], perm=[1, 0])])
    loss = g.node("SoftmaxCrossEntropyLoss",
                  [g.node("Reshape", [logits, shape_flat]),
                   g.node("Reshape", ["targets", shape_tgt])], reduction="mean")
    g.nodes.append(helper.make_node("Identity", [loss], ["loss"], name="/loss"))

    graph = helper.make_graph(
        g.nodes, "gpt2",
        [helper.make_tensor_value_info("tokens", TensorProto.INT64, [B, T]),
         helper.make_tensor_value_info("targets", TensorProto.INT64, [B, T])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="zero-opt bench/gpt2_model.py")
    model.ir_version = 8
    with open(out, "wb") as f:
        f.write(model.SerializeToString())
    with open(out + ".data", "wb") as f:
        if init:
            for w in g.weights:
                f.write(w.tobytes())
        else:
            f.truncate(g.offset)  # reserved, not written: a sparse file
    params = sum(int(np.prod(t.dims)) for t in g.inits
                 if t.data_location == TensorProto.EXTERNAL)
    return params


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--preset", choices=sorted(PRESETS))
    for k in ("layers", "d", "heads", "vocab", "seq", "batch"):
        ap.add_argument("--" + k, type=int)
    ap.add_argument("--init", action="store_true",
                    help="write real random weights instead of reserving the file")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--attn-dropout", type=float, default=0.0,
                    help="dropout on the attention's probabilities (GPT-2's "
                         "attn_pdrop), in training mode")
    args = ap.parse_args()
    cfg = dict(PRESETS[args.preset or "tiny"])
    for k in cfg:
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    if cfg["d"] % cfg["heads"]:
        sys.exit("gpt2_model.py: --d must be a multiple of --heads")
    if not 0 <= args.attn_dropout < 1:
        sys.exit(f"gpt2_model.py: --attn-dropout is {args.attn_dropout}; give a "
                 "ratio in [0, 1)")
    n = build(cfg, args.out, args.init, args.seed, args.attn_dropout)
    print(f"{args.out}: {n:,} parameters ({', '.join(f'{k} {v}' for k, v in cfg.items())})")


if __name__ == "__main__":
    main()
