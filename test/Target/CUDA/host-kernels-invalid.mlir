// RUN: zero-opt %s --zero-gpu-host-kernels -split-input-file -verify-diagnostics

// A barrier splits the body into phases, each run for every thread in
// turn; a value loaded before it and used after it would be one thread's
// only (the last): no serial form.
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    // expected-error @below {{a value crosses a barrier: it has no host copy}}
    gpu.func @sync(%a: memref<8xf32>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<8xf32>
      gpu.barrier
      memref.store %x, %a[%t] : memref<8xf32>
      gpu.return
    }
  }
}

// -----

// A barrier inside a branch is one some threads may not reach.
module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    // expected-error @below {{kernel uses gpu.barrier, which makes threads depend on each other: it has no host copy}}
    gpu.func @branch(%a: memref<8xf32>, %c: i1) kernel {
      scf.if %c {
        gpu.barrier
      }
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    // expected-error @below {{kernel has workgroup or private memory: it has no host copy}}
    gpu.func @shared(%a: memref<8xf32>) workgroup(%s: memref<8xf32, #gpu.address_space<workgroup>>) kernel {
      %t = gpu.thread_id x
      %x = memref.load %a[%t] : memref<8xf32>
      memref.store %x, %s[%t] : memref<8xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @zero_kernels {
    // expected-error @below {{kernel has more than one block: it has no host copy}}
    gpu.func @branches(%a: memref<8xf32>, %c: i1) kernel {
      cf.cond_br %c, ^bb1, ^bb2
    ^bb1:
      gpu.return
    ^bb2:
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
