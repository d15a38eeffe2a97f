// RUN: zero-opt %s --zero-gpu-host-kernels -split-input-file -verify-diagnostics

// A warp reduction the host emulator has no meeting for.
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    // expected-error @below {{kernel uses gpu.subgroup_reduce, which the host emulator does not run: it has no host copy}}
    gpu.func @subgroup(%a: memref<32xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<32xf32>
      %s = gpu.subgroup_reduce add %x : (f32) -> f32
      memref.store %s, %a[%t] : memref<32xf32>
      gpu.return
    }
  }
}

// -----

// Shuffles of 32-bit values only: a 64-bit one is two on the GPU.
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    // expected-error @below {{kernel uses gpu.shuffle on f64, i32, i32, which the host emulator does not run: it has no host copy}}
    gpu.func @wide(%a: memref<32xf64>) kernel {
      %t = gpu.thread_id x
      %one = arith.constant 1 : i32
      %width = arith.constant 32 : i32
      %x = memref.load %a[%t] : memref<32xf64>
      %y, %ok = gpu.shuffle xor %x, %one, %width : f64
      memref.store %y, %a[%t] : memref<32xf64>
      gpu.return
    }
  }
}

// -----

// Matrix products of m16n8k16 only.
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    // expected-error @below {{kernel uses nvgpu.mma.sync on vector<2x2xf16>, vector<1x2xf16>, vector<2x2xf32>, which the host emulator does not run: it has no host copy}}
    gpu.func @k8(%out: memref<2x2xf32>) kernel {
      %a = arith.constant dense<1.0> : vector<2x2xf16>
      %b = arith.constant dense<1.0> : vector<1x2xf16>
      %c = arith.constant dense<0.0> : vector<2x2xf32>
      %d = nvgpu.mma.sync (%a, %b, %c) {mmaShape = [16, 8, 8]} : (vector<2x2xf16>, vector<1x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
      %c0 = arith.constant 0 : index
      vector.transfer_write %d, %out[%c0, %c0] : vector<2x2xf32>, memref<2x2xf32>
      gpu.return
    }
  }
}

// -----

// Workgroup memory of whole bytes only.
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    // expected-error @below {{kernel has a workgroup or private buffer that is not a static identity-layout memref of whole bytes: it has no host copy}}
    gpu.func @bits(%a: memref<8xi1>) workgroup(%s: memref<8xi1, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<8xi1>
      memref.store %x, %s[%t] : memref<8xi1, #gpu.address_space<workgroup>>
      gpu.barrier
      gpu.return
    }
  }
}

// -----

// A copy's name is taken already.
module attributes {gpu.container_module} {
  func.func private @zero_host_kernel_k()
  gpu.module @zero_kernels {
    // expected-error @below {{a host copy named zero_host_kernel_k exists already}}
    gpu.func @k(%a: memref<8xf32>) kernel {
      gpu.return
    }
  }
}


// -----

// Vectors are not what a launch passes.
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    // expected-error @below {{argument 0 of type 'vector<4xf32>' is not a value a launch passes}}
    gpu.func @vec(%v: vector<4xf32>) kernel {
      gpu.return
    }
  }
}
