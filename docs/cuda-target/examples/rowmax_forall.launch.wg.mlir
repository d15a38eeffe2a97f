#map = affine_map<()[s0] -> (s0 + 128)>
#map1 = affine_map<()[s0] -> (s0 + 64)>
#map2 = affine_map<()[s0] -> (s0 + 32)>
#map3 = affine_map<()[s0] -> (s0 + 16)>
#map4 = affine_map<()[s0] -> (s0 + 8)>
#map5 = affine_map<()[s0] -> (s0 + 4)>
#map6 = affine_map<()[s0] -> (s0 + 2)>
module {
  func.func @kernel_rowmax(%arg0: memref<512x768xf32>, %arg1: memref<512xf32>) attributes {zero.kernel = "linalg.generic"} {
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c0 = arith.constant 0 : index
    %c768 = arith.constant 768 : index
    %c256 = arith.constant 256 : index
    %cst = arith.constant 0xFF800000 : f32
    %c1 = arith.constant 1 : index
    %c512 = arith.constant 512 : index
    gpu.launch blocks(%arg2, %arg3, %arg4) in (%arg8 = %c512, %arg9 = %c1, %arg10 = %c1) threads(%arg5, %arg6, %arg7) in (%arg11 = %c256, %arg12 = %c1, %arg13 = %c1) workgroup(%alloca : memref<256xf32, #gpu.address_space<workgroup>>) {
      %block_id_x = gpu.block_id  x
      %thread_id_x = gpu.thread_id  x
      %0 = scf.for %arg14 = %thread_id_x to %c768 step %c256 iter_args(%arg15 = %cst) -> (f32) {
        %9 = memref.load %arg0[%block_id_x, %arg14] : memref<512x768xf32>
        %10 = arith.maximumf %9, %arg15 : f32
        scf.yield %10 : f32
      }
      memref.store %0, %alloca[%thread_id_x] : memref<256xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %thread_id_x_0 = gpu.thread_id  x
      %1 = arith.cmpi ult, %thread_id_x_0, %c128 : index
      scf.if %1 {
        %9 = affine.apply #map()[%thread_id_x_0]
        %10 = memref.load %alloca[%thread_id_x_0] : memref<256xf32, #gpu.address_space<workgroup>>
        %11 = memref.load %alloca[%9] : memref<256xf32, #gpu.address_space<workgroup>>
        %12 = arith.maximumf %10, %11 : f32
        memref.store %12, %alloca[%thread_id_x_0] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %thread_id_x_1 = gpu.thread_id  x
      %2 = arith.cmpi ult, %thread_id_x_1, %c64 : index
      scf.if %2 {
        %9 = affine.apply #map1()[%thread_id_x_1]
        %10 = memref.load %alloca[%thread_id_x_1] : memref<256xf32, #gpu.address_space<workgroup>>
        %11 = memref.load %alloca[%9] : memref<256xf32, #gpu.address_space<workgroup>>
        %12 = arith.maximumf %10, %11 : f32
        memref.store %12, %alloca[%thread_id_x_1] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %thread_id_x_2 = gpu.thread_id  x
      %3 = arith.cmpi ult, %thread_id_x_2, %c32 : index
      scf.if %3 {
        %9 = affine.apply #map2()[%thread_id_x_2]
        %10 = memref.load %alloca[%thread_id_x_2] : memref<256xf32, #gpu.address_space<workgroup>>
        %11 = memref.load %alloca[%9] : memref<256xf32, #gpu.address_space<workgroup>>
        %12 = arith.maximumf %10, %11 : f32
        memref.store %12, %alloca[%thread_id_x_2] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %thread_id_x_3 = gpu.thread_id  x
      %4 = arith.cmpi ult, %thread_id_x_3, %c16 : index
      scf.if %4 {
        %9 = affine.apply #map3()[%thread_id_x_3]
        %10 = memref.load %alloca[%thread_id_x_3] : memref<256xf32, #gpu.address_space<workgroup>>
        %11 = memref.load %alloca[%9] : memref<256xf32, #gpu.address_space<workgroup>>
        %12 = arith.maximumf %10, %11 : f32
        memref.store %12, %alloca[%thread_id_x_3] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %thread_id_x_4 = gpu.thread_id  x
      %5 = arith.cmpi ult, %thread_id_x_4, %c8 : index
      scf.if %5 {
        %9 = affine.apply #map4()[%thread_id_x_4]
        %10 = memref.load %alloca[%thread_id_x_4] : memref<256xf32, #gpu.address_space<workgroup>>
        %11 = memref.load %alloca[%9] : memref<256xf32, #gpu.address_space<workgroup>>
        %12 = arith.maximumf %10, %11 : f32
        memref.store %12, %alloca[%thread_id_x_4] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %thread_id_x_5 = gpu.thread_id  x
      %6 = arith.cmpi ult, %thread_id_x_5, %c4 : index
      scf.if %6 {
        %9 = affine.apply #map5()[%thread_id_x_5]
        %10 = memref.load %alloca[%thread_id_x_5] : memref<256xf32, #gpu.address_space<workgroup>>
        %11 = memref.load %alloca[%9] : memref<256xf32, #gpu.address_space<workgroup>>
        %12 = arith.maximumf %10, %11 : f32
        memref.store %12, %alloca[%thread_id_x_5] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %thread_id_x_6 = gpu.thread_id  x
      %7 = arith.cmpi ult, %thread_id_x_6, %c2 : index
      scf.if %7 {
        %9 = affine.apply #map6()[%thread_id_x_6]
        %10 = memref.load %alloca[%thread_id_x_6] : memref<256xf32, #gpu.address_space<workgroup>>
        %11 = memref.load %alloca[%9] : memref<256xf32, #gpu.address_space<workgroup>>
        %12 = arith.maximumf %10, %11 : f32
        memref.store %12, %alloca[%thread_id_x_6] : memref<256xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %thread_id_x_7 = gpu.thread_id  x
      %8 = arith.cmpi ult, %thread_id_x_7, %c1 : index
      scf.if %8 {
        %9 = memref.load %alloca[%c0] : memref<256xf32, #gpu.address_space<workgroup>>
        %10 = memref.load %alloca[%c1] : memref<256xf32, #gpu.address_space<workgroup>>
        %11 = arith.maximumf %9, %10 : f32
        memref.store %11, %arg1[%block_id_x] : memref<512xf32>
      }
      gpu.barrier
      gpu.terminator
    }
    return
  }
}

