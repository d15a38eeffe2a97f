#!/usr/bin/python3
"""Expected outputs for node tests whose shipped outputs contradict their
model, recomputed with ONNX's own reference implementation.

test_adam_multiple: the upstream generator computed its outputs with
epsilon=1e-2 but left the attribute off the node, so the model's epsilon is
the spec default 1e-6 (onnx/onnx#7749). Here onnx.backend.test.case.node.adam
.apply_adam (ONNX's reference, not ours) is applied to the test's inputs with
the attributes the model actually carries.

Usage: /usr/bin/python3 reference_overrides.py NODE_TEST_DIR OUT_DIR
Writes OUT_DIR/<test>/test_data_set_0/output_<k>.pb.
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.node.adam import apply_adam


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def adam_multiple(test_dir):
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    node = model.graph.node[0]
    a = attrs(node)
    data = os.path.join(test_dir, "test_data_set_0")
    ins = [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, f"input_{i}.pb")))
           for i in range(len(model.graph.input))]
    r, t = ins[0], ins[1]
    k = (len(ins) - 2) // 4
    xs, gs, vs, hs = (ins[2 + j * k: 2 + (j + 1) * k] for j in range(4))
    outs = [[], [], []]
    for x, g, v, h in zip(xs, gs, vs, hs):
        res = apply_adam(r, t, x, g, v, h, a.get("norm_coefficient", 0.0),
                         a.get("norm_coefficient_post", 0.0), a.get("alpha", 0.9),
                         a.get("beta", 0.999), a.get("epsilon", 1e-6))
        for lst, val in zip(outs, res):
            lst.append(val.astype(np.float32))
    return outs[0] + outs[1] + outs[2]


OVERRIDES = {"test_adam_multiple": adam_multiple}


def main():
    node_dir, out_dir = sys.argv[1], sys.argv[2]
    for name, fn in OVERRIDES.items():
        dest = os.path.join(out_dir, name, "test_data_set_0")
        os.makedirs(dest, exist_ok=True)
        for i, arr in enumerate(fn(os.path.join(node_dir, name))):
            with open(os.path.join(dest, f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(arr).SerializeToString())
        print(f"{name}: expected outputs recomputed with ONNX's reference "
              f"implementation (the shipped ones used epsilon=1e-2, which the "
              f"model does not carry)")


if __name__ == "__main__":
    main()
