#!/usr/bin/python3
"""Export small training models (forward pass returning the loss) to ONNX.

Usage: /usr/bin/python3 export_models.py OUTDIR [--only NAME] [--check-torch]

For each model NAME this writes
  OUTDIR/NAME.onnx       the exported graph, parameters stored as initializers
  OUTDIR/NAME.data.npz   one array per graph input, 3 batches stacked on dim 0
and with --check-torch also
  OUTDIR/NAME.torch.npz  PyTorch's outputs, shaped (num_batches, *output_shape),
                         the same layout test/tools/run_ort.js writes.

Needs Debian's PyTorch and onnx, which load only under /usr/bin/python3.
"""
import argparse
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_BATCHES = 3
OPSET = 17


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.ln = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x, y):
        logits = self.fc2(F.gelu(self.ln(self.fc1(x))))
        return F.cross_entropy(logits, y), logits


class Chain(nn.Module):
    """A chain of `depth` Linear+ReLU layers: its forward is a path."""

    def __init__(self, depth=16, width=16):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.head = nn.Linear(width, 10)

    def forward(self, x, y):
        for layer in self.layers:
            x = F.relu(layer(x))
        logits = self.head(x)
        return F.cross_entropy(logits, y), logits


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x, y):
        h = F.max_pool2d(F.relu(self.conv1(x)), 2)
        h = F.relu(self.conv2(h))
        logits = self.fc(torch.flatten(h, 1))
        return F.cross_entropy(logits, y), logits


class CausalSelfAttention(nn.Module):
    def __init__(self, d, n_head, block_size, dropout=0.0):
        super().__init__()
        self.n_head = n_head
        self.scale = 1.0 / math.sqrt(d // n_head)
        # No qkv bias: the key bias would have an identically zero gradient
        # (softmax ignores a constant added along the key axis), and Adam
        # turns the float noise standing in for that zero into lr-sized
        # steps that no two implementations reproduce alike.
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d)
        # Buffer (not a constant) so the mask reaches the graph as a bool
        # initializer feeding a Where, the way real GPT exports look.
        self.register_buffer(
            "mask", torch.tril(torch.ones(block_size, block_size, dtype=torch.bool)))
        self.drop = nn.Dropout(dropout) if dropout else nn.Identity()

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.n_head
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.scale
        att = att.masked_fill(~self.mask[:T, :T], float("-inf"))
        att = self.drop(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.drop(self.proj(y))


class Block(nn.Module):
    def __init__(self, d, n_head, block_size, dropout=0.0):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, n_head, block_size, dropout)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.fc_out = nn.Linear(4 * d, d)
        self.drop = nn.Dropout(dropout) if dropout else nn.Identity()

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.drop(self.fc_out(F.gelu(self.fc(self.ln2(x)))))


class GPT(nn.Module):
    def __init__(self, vocab=32, d=16, n_head=2, n_layer=2, block_size=8,
                 dropout=0.0):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(block_size, d)
        self.register_buffer("pos", torch.arange(block_size, dtype=torch.int64))
        self.blocks = nn.ModuleList(
            [Block(d, n_head, block_size, dropout) for _ in range(n_layer)])
        self.drop = nn.Dropout(dropout) if dropout else nn.Identity()
        self.ln_f = nn.LayerNorm(d)

    def forward(self, tokens, targets):
        T = tokens.shape[1]
        h = self.drop(self.wte(tokens) + self.wpe(self.pos[:T]))
        for block in self.blocks:
            h = block(h)
        # Tied output projection: the embedding table is read twice.
        logits = self.ln_f(h) @ self.wte.weight.t()
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               targets.reshape(-1))
        return loss, logits


def mlp_data(gen, B):
    """16 features and one of 10 classes per sample, NUM_BATCHES of B."""
    n = NUM_BATCHES * B
    return {"x": torch.randn(n, 16, generator=gen),
            "y": torch.randint(0, 10, (n,), generator=gen)}


def mlp_spec(gen):
    return MLP(), 4, mlp_data(gen, 4)


def chain16_spec(gen):
    """Sixteen layers at a batch of 64: activations outweigh the weights."""
    return Chain(), 64, mlp_data(gen, 64)


def mlp64_spec(gen):
    """The MLP in double precision: parameters, activations and data."""
    model, B, data = mlp_spec(gen)
    data["x"] = data["x"].double()
    return model.double(), B, data


def cnn_spec(gen):
    B = 4
    n = NUM_BATCHES * B
    data = {"x": torch.randn(n, 1, 8, 8, generator=gen),
            "y": torch.randint(0, 10, (n,), generator=gen)}
    return CNN(), B, data


def gpt_spec(gen):
    B, T, V = 2, 8, 32
    n = NUM_BATCHES * B
    data = {"tokens": torch.randint(0, V, (n, T), generator=gen),
            "targets": torch.randint(0, V, (n, T), generator=gen)}
    return GPT(vocab=V, block_size=T), B, data


def gpt_wide_spec(gen):
    """The GPT with a 509-token vocabulary and width 64: rows of 509 logits
    and of 64 features, which the CUDA target splits across threads, and
    bf16 GEMMs it pads to 512 (zero-gpu-pad-gemm-dims)."""
    B, T, V = 2, 8, 509
    n = NUM_BATCHES * B
    data = {"tokens": torch.randint(0, V, (n, T), generator=gen),
            "targets": torch.randint(0, V, (n, T), generator=gen)}
    return GPT(vocab=V, d=64, n_head=2, block_size=T), B, data


def gpt_long_spec(gen):
    """The GPT over 1024 tokens, 2 sequences and a 1100-token vocabulary:
    4096 attention rows of 1024 scores and 2048 rows of 1100 logits, which
    the CUDA target splits into a warp of partials a row and runs with
    their statistics' users as row groups (zero-gpu-row-groups)."""
    B, T, V = 2, 1024, 1100
    n = NUM_BATCHES * B
    data = {"tokens": torch.randint(0, V, (n, T), generator=gen),
            "targets": torch.randint(0, V, (n, T), generator=gen)}
    return GPT(vocab=V, d=32, n_head=2, n_layer=1, block_size=T), B, data


def gpt_dropout_spec(gen):
    """The GPT with dropout 0.1 on embeddings, attention and residuals."""
    _, B, data = gpt_spec(gen)
    return GPT(vocab=32, block_size=8, dropout=0.1), B, data


class Classifier(nn.Module):
    """A model from torchvision or torch.nn with a cross-entropy loss."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, y):
        logits = self.model(x)
        return F.cross_entropy(logits, y), logits


class TextEncoder(nn.Module):
    """torch.nn.TransformerEncoder between an embedding and a linear head."""

    def __init__(self, vocab=100, d=64, classes=10):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, 4, 128, dropout=0.0,
                                           batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        return self.head(self.enc(self.emb(x)).mean(1))


def image_spec(make, double=False, B=4):
    """A 3x32x32, 10-class image model, micro-batch B; `double`: in float64
    throughout."""
    def spec(gen):
        import torchvision  # noqa: F401 (only the zoo needs it)
        n = NUM_BATCHES * B
        data = {"x": torch.randn(n, 3, 32, 32, generator=gen),
                "y": torch.randint(0, 10, (n,), generator=gen)}
        model = Classifier(make())
        if double:
            data["x"] = data["x"].double()
            model = model.double()
        return model, B, data
    return spec


def squeezenet():
    import torchvision
    m = torchvision.models.squeezenet1_1(num_classes=10)
    m.classifier[0].p = 0.0
    return m


def resnet18():
    import torchvision
    return torchvision.models.resnet18(num_classes=10)


def mobilenet_v2():
    import torchvision
    return torchvision.models.mobilenet_v2(num_classes=10, dropout=0.0)


def vit():
    import torchvision
    return torchvision.models.VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64,
        mlp_dim=128, num_classes=10, dropout=0.0)


def text_spec(gen):
    B, T = 4, 16
    n = NUM_BATCHES * B
    data = {"x": torch.randint(0, 100, (n, T), generator=gen),
            "y": torch.randint(0, 10, (n,), generator=gen)}
    return Classifier(TextEncoder()), B, data


MODELS = {"mlp": mlp_spec, "mlp64": mlp64_spec, "cnn": cnn_spec, "gpt": gpt_spec}
# Exported with --only: their training is random, PyTorch's draws differ.
def gpt_long_dropout_spec(gen):
    """The GPT over 1024 tokens with dropout 0.1 on embeddings, attention
    and residuals: the attention's dropout is drawn inside the fused
    kernels on the CUDA target."""
    _, B, data = gpt_long_spec(gen)
    return GPT(vocab=1100, d=32, n_head=2, n_layer=1, block_size=1024,
               dropout=0.1), B, data


RANDOM = {"gpt_dropout": gpt_dropout_spec,
          "gpt_long_dropout": gpt_long_dropout_spec}
# Exported with --only: shapes for one test.
class NormNet(nn.Module):
    """Token embeddings, a projection, a layer norm and a head: a GPT's
    layer norm with its input in a buffer of its own (not a gather)."""

    def __init__(self, vocab, d):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.proj = nn.Linear(d, d)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens, targets):
        logits = self.head(self.ln(self.proj(self.wte(tokens))))
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               targets.reshape(-1))
        return loss, logits


def norm_long_spec(gen):
    """A layer norm over 8 x 256 tokens of 1024 features: 2048 rows whose
    statistics and backward the CUDA target runs as row groups (the
    backward's two row sums and the ops between them one group, reading
    buffers through views), and whose weight and the projection's bias
    gradients are sums over the tokens split into column partials."""
    B, T, V = 8, 256, 128
    n = NUM_BATCHES * B
    data = {"tokens": torch.randint(0, V, (n, T), generator=gen),
            "targets": torch.randint(0, V, (n, T), generator=gen)}
    return NormNet(V, 1024), B, data


class WideMLP(nn.Module):
    def __init__(self, features=64, hidden=1024, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x, y):
        logits = self.fc2(F.gelu(self.fc1(x)))
        return F.cross_entropy(logits, y), logits


def mlp_wide_spec(gen):
    """An MLP over 4096 samples with 1024 hidden units: its [4096, 1024]
    elementwise ops are large enough that the CUDA target gives each
    thread several rows."""
    B = 4096
    n = NUM_BATCHES * B
    data = {"x": torch.randn(n, 64, generator=gen),
            "y": torch.randint(0, 10, (n,), generator=gen)}
    return WideMLP(), B, data


SHAPES = {"chain16": chain16_spec, "gpt_wide": gpt_wide_spec,
          "gpt_long": gpt_long_spec, "norm_long": norm_long_spec,
          "mlp_wide": mlp_wide_spec}
# Models that PyTorch and torchvision wrote, in small configurations.
# BatchNorm over 4 samples of 1x1 maps is ill-conditioned: PyTorch's own
# float32 and float64 runs of resnet18 part by 5% within 5 steps. Those
# models compare in float64, where the comparison measures semantics, not
# rounding; mobilenet_v2 takes 8 samples, as in float64 a 1e-13 change of
# its weights still moves its fifth SGD loss by 5% at 4 (1e-6 at 8).
ZOO = {"resnet18": image_spec(resnet18, double=True),
       "mobilenet_v2": image_spec(mobilenet_v2, double=True, B=8),
       "squeezenet": image_spec(squeezenet),
       "vit": image_spec(vit), "transformer": text_spec}
OUTPUT_NAMES = ["loss", "logits"]

ONNX_TO_NUMPY = {
    onnx.TensorProto.FLOAT: np.float32,
    onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.BOOL: np.bool_,
}


def build(name):
    # Seed per model so each model's weights and data do not depend on which
    # other models were built in the same run (--only gives the same files).
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    model, batch, data = {**MODELS, **ZOO, **RANDOM, **SHAPES}[name](gen)
    model.train()
    return model, batch, data


def export(model, batch, data, path):
    args = tuple(v[:batch] for v in data.values())
    torch.onnx.export(
        model, args, path,
        input_names=list(data.keys()),
        output_names=OUTPUT_NAMES,
        opset_version=OPSET,
        export_params=True,
        keep_initializers_as_inputs=False,
        # Training mode keeps every parameter as its own initializer; eval
        # mode would let the exporter fold and merge equal-valued ones.
        training=torch.onnx.TrainingMode.TRAINING,
        do_constant_folding=False,
    )


def shape_of(value_info):
    return [d.dim_value if d.HasField("dim_value") else d.dim_param
            for d in value_info.type.tensor_type.shape.dim]


def write_data(model_proto, data, path):
    arrays = {}
    for inp in model_proto.graph.input:
        if inp.name not in data:
            sys.exit(f"graph input {inp.name!r} has no data tensor")
        dtype = ONNX_TO_NUMPY[inp.type.tensor_type.elem_type]
        arr = data[inp.name].numpy()
        if arr.dtype != dtype or list(arr.shape[1:]) != shape_of(inp)[1:]:
            sys.exit(f"data for {inp.name!r} is {arr.dtype}{list(arr.shape)}, "
                     f"graph wants {np.dtype(dtype)}{shape_of(inp)}")
        arrays[inp.name] = np.ascontiguousarray(arr)
    np.savez(path, **arrays)


def summarize(name, model_proto):
    g = model_proto.graph

    def fmt(vi):
        dtype = onnx.TensorProto.DataType.Name(vi.type.tensor_type.elem_type)
        return f"{vi.name}:{dtype.lower()}{shape_of(vi)}"

    ops = sorted({n.op_type for n in g.node})
    print(f"[{name}] inputs: {', '.join(fmt(i) for i in g.input)}")
    print(f"[{name}] outputs: {', '.join(fmt(o) for o in g.output)}")
    print(f"[{name}] initializers: {len(g.initializer)}, nodes: {len(g.node)}")
    print(f"[{name}] ops: {' '.join(ops)}")


def run_torch(model, batch, data, path):
    """Forward over the data in batches, wrapping around like run_ort.js."""
    names = list(data.keys())
    n = data[names[0]].shape[0]
    num_batches = -(-n // batch)
    outs = [[] for _ in OUTPUT_NAMES]
    with torch.no_grad():
        for k in range(num_batches):
            args = []
            for nm in names:
                rows = [(k * batch + i) % data[nm].shape[0] for i in range(batch)]
                args.append(data[nm][rows])
            results = model(*args)
            for lst, r in zip(outs, results):
                lst.append(r.numpy())
    np.savez(path, **{nm: np.stack(lst) for nm, lst in zip(OUTPUT_NAMES, outs)})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", choices=sorted({**MODELS, **ZOO, **RANDOM, **SHAPES}))
    ap.add_argument("--check-torch", action="store_true",
                    help="also write NAME.torch.npz with PyTorch's outputs")
    opts = ap.parse_args()

    # One thread: reduction order stays fixed from run to run.
    torch.set_num_threads(1)
    os.makedirs(opts.outdir, exist_ok=True)
    for name in [opts.only] if opts.only else list(MODELS):
        model, batch, data = build(name)
        onnx_path = os.path.join(opts.outdir, f"{name}.onnx")
        export(model, batch, data, onnx_path)
        model_proto = onnx.load(onnx_path)
        onnx.checker.check_model(model_proto)
        write_data(model_proto, data, os.path.join(opts.outdir, f"{name}.data.npz"))
        summarize(name, model_proto)
        if opts.check_torch:
            run_torch(model, batch, data,
                      os.path.join(opts.outdir, f"{name}.torch.npz"))


if __name__ == "__main__":
    main()
