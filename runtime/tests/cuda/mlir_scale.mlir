// Host code for the CUDA runtime test, lowered by MLIR's own gpu-to-llvm:
// the calls it makes are the mgpu* signatures the runtime must provide.
// data[i] *= factor on the device; fill[i] = factor through a memset.
module attributes {gpu.container_module} {
  gpu.module @zero_test_kernels {
    gpu.func @scale(%buf: memref<?xf32>, %factor: f32, %n: index) kernel {
      %bx = gpu.block_id x
      %bd = gpu.block_dim x
      %tx = gpu.thread_id x
      %i0 = arith.muli %bx, %bd : index
      %i = arith.addi %i0, %tx : index
      %in = arith.cmpi ult, %i, %n : index
      cf.cond_br %in, ^body, ^done
    ^body:
      %v = memref.load %buf[%i] : memref<?xf32>
      %w = arith.mulf %v, %factor : f32
      memref.store %w, %buf[%i] : memref<?xf32>
      cf.br ^done
    ^done:
      gpu.return
    }
  }

  func.func @zero_cuda_mlir_scale(%data: memref<?xf32>, %fill: memref<?xf32>,
                                  %n: index, %factor: f32)
      attributes {llvm.emit_c_interface} {
    %c1 = arith.constant 1 : index
    %c127 = arith.constant 127 : index
    %c128 = arith.constant 128 : index
    %t0 = gpu.wait async
    %d, %t1 = gpu.alloc async [%t0] (%n) : memref<?xf32>
    %t2 = gpu.memcpy async [%t1] %d, %data : memref<?xf32>, memref<?xf32>
    %u0 = gpu.wait async
    %z, %u1 = gpu.alloc async [%u0] (%n) : memref<?xf32>
    %u2 = gpu.memset async [%u1] %z, %factor : memref<?xf32>, f32
    %j = gpu.wait async [%t2, %u2]
    %m = arith.addi %n, %c127 : index
    %blocks = arith.divui %m, %c128 : index
    %t3 = gpu.launch_func async [%j] @zero_test_kernels::@scale
        blocks in (%blocks, %c1, %c1) threads in (%c128, %c1, %c1)
        args(%d : memref<?xf32>, %factor : f32, %n : index)
    %t4 = gpu.memcpy async [%t3] %data, %d : memref<?xf32>, memref<?xf32>
    %t5 = gpu.memcpy async [%t4] %fill, %z : memref<?xf32>, memref<?xf32>
    %t6 = gpu.dealloc async [%t5] %d : memref<?xf32>
    %t7 = gpu.dealloc async [%t6] %z : memref<?xf32>
    gpu.wait [%t7]
    return
  }
}
