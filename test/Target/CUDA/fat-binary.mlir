// RUN: zero-opt %s --zero-gpu-fat-binary=toolkit=/nonexistent -split-input-file -verify-diagnostics | FileCheck %s

// One cubin: nothing to pack, no toolkit needed.
// CHECK-LABEL: module
// CHECK: gpu.binary @one [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "CUBIN">]
module {
  gpu.binary @one [#gpu.object<#nvvm.target<chip = "sm_90">, bin = "CUBIN">]
}

// -----

module {
  // expected-error @below {{zero-gpu-fat-binary needs cubins (gpu-module-to-binary format=bin) for NVVM targets}}
  gpu.binary @ptx [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = "PTX">, #gpu.object<#nvvm.target<chip = "sm_90">, bin = "CUBIN">]
}

// -----

module {
  // expected-error @below {{no fatbinary under the CUDA toolkit '/nonexistent' (set the toolkit option)}}
  gpu.binary @two [#gpu.object<#nvvm.target<chip = "sm_80">, bin = "A">, #gpu.object<#nvvm.target<chip = "sm_90">, bin = "B">]
}
