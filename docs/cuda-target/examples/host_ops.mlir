// Every host-side gpu op a step could use, to list the mgpu* symbols.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_80">, #nvvm.target<chip = "sm_90", features = "+ptx80">] {
    gpu.func @k(%x: memref<1024xf32>) kernel {
      %i = gpu.thread_id x
      %v = memref.load %x[%i] : memref<1024xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %x[%i] : memref<1024xf32>
      gpu.return
    }
  }
  func.func @ops(%h: memref<1024xf32>) {
    %c1 = arith.constant 1 : index
    %c0f = arith.constant 0.0 : f32
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] () : memref<1024xf32>
    %t2 = gpu.memcpy async [%t1] %d, %h : memref<1024xf32>, memref<1024xf32>
    %t3 = gpu.launch_func async [%t2] @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%d : memref<1024xf32>)
    %u0 = gpu.wait async
    %u1 = gpu.memset async [%u0] %d, %c0f : memref<1024xf32>, f32
    %t4 = gpu.wait async [%t3, %u1]
    %t5 = gpu.memcpy async [%t4] %h, %d : memref<1024xf32>, memref<1024xf32>
    %t6 = gpu.dealloc async [%t5] %d : memref<1024xf32>
    gpu.wait [%t6]
    return
  }
}
