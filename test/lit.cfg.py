# -*- Python -*-
import os
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "ZERO_OPT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtxt", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zero_obj_root, "test")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "CMakeLists.txt", "Inputs",
                   "tools", "fuzz", "e2e", "conformance", "gradcheck"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", "/usr/bin/python3"))
# Compiles share one object cache of their own, not the user's.
config.environment["ZERO_OPT_CACHE_DIR"] = os.path.join(
    config.zero_obj_root, "test", "object-cache")
# Device code needs ptxas and libdevice: without the toolkit those tests
# report UNSUPPORTED.
if config.cuda_toolkit_dir and os.path.exists(
        os.path.join(config.cuda_toolkit_dir, "bin", "ptxas")):
    config.available_features.add("cuda-toolkit")
    # ptxas's own threads (CUDA 12.4 on): the CUDA target's default.
    ptxas_help = subprocess.run(
        [os.path.join(config.cuda_toolkit_dir, "bin", "ptxas"), "--help"],
        capture_output=True, text=True).stdout
    if "--split-compile" in ptxas_help:
        config.available_features.add("ptxas-split-compile")
else:
    lit_config.note("no CUDA toolkit: the device-code tests are skipped")
# Running CUDA programs needs the project's CUDA runtime; running them
# somewhere needs a GPU (test/gpu does that, lit checks the way they fail
# without one).
if os.path.exists(os.path.join(config.zero_obj_root, "lib",
                               "libZeroRuntimeCUDA.so")):
    config.available_features.add("cuda-runtime")
try:
    gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                          text=True, timeout=60).stdout
    if any(line.startswith("GPU ") for line in gpus.splitlines()):
        config.available_features.add("gpu")
except (OSError, subprocess.SubprocessError):
    pass
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.zero_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["zero-opt", "zero-run", "zero-gradcheck"],
                                   [config.zero_tools_dir])
