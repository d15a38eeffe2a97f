// Host side: two ways of launching on a stream.
module attributes {gpu.container_module} {
  gpu.module @kernels [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    gpu.func @scale(%x: memref<?xf32>, %n: index, %a: f32) kernel {
      %i = gpu.global_id x
      %in = arith.cmpi ult, %i, %n : index
      scf.if %in {
        %v = memref.load %x[%i] : memref<?xf32>
        %w = arith.mulf %v, %a : f32
        memref.store %w, %x[%i] : memref<?xf32>
      }
      gpu.return
    }
  }
  // (a) async tokens: gpu-to-llvm creates and destroys a stream per chain
  func.func @step_tokens(%x: memref<?xf32>, %n: index, %a: f32) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %g = arith.ceildivui %n, %c256 : index
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @kernels::@scale blocks in (%g, %c1, %c1) threads in (%c256, %c1, %c1) args(%x : memref<?xf32>, %n : index, %a : f32)
    gpu.wait [%t1]
    return
  }
  // (b) the runtime's stream passed in as an opaque pointer (async object)
  func.func @step_stream(%stream: !llvm.ptr, %x: memref<?xf32>, %n: index, %a: f32) {
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    %g = arith.ceildivui %n, %c256 : index
    gpu.launch_func <%stream : !llvm.ptr> @kernels::@scale blocks in (%g, %c1, %c1) threads in (%c256, %c1, %c1) args(%x : memref<?xf32>, %n : index, %a : f32)
    return
  }
}
