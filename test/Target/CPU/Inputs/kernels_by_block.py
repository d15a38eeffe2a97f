"""Which kernels the ops of each block call: reads a module printed with
--mlir-print-debuginfo --mlir-print-local-scope after zero-form-kernels,
takes each kernel call whose location names a block (/h.0/..., as ONNX
node names from PyTorch's exporter do), and prints per block how many
distinct kernels its ops call and whether the second block's are all among
the first block's."""
import re
import sys

path, first, second = sys.argv[1:4]
text = open(path).read()
calls = {first: set(), second: set()}
for m in re.finditer(r"call @(kernel_\d+_\w+)\(.*\bloc\((.*)\)\s*$", text, re.M):
    for block in calls:
        if f'"/{block}/' in m.group(2):
            calls[block].add(m.group(1))
print(f"{first}: {len(calls[first])} distinct kernels")
shared = calls[second] <= calls[first]
print(f"{second}: {len(calls[second])} distinct kernels"
      + (f", all of them also called by {first}" if shared else
         f", {len(calls[second] - calls[first])} not called by {first}: "
         + " ".join(sorted(calls[second] - calls[first]))))
m = re.search(r"zero.kernels = \{formed = (\d+) : i64, unique = (\d+) : i64\}", text)
defined = len(re.findall(r"func\.func private @kernel_\d+_\w+\(", text))
assert defined == int(m.group(2)), f"{defined} kernel functions, attribute says {m.group(2)}"
print(f"kernels: {m.group(1)} formed, {m.group(2)} after deduplication")
