module {
  func.func @kernel_bf16(%x: memref<4096xbf16>, %y: memref<4096xbf16>, %z: memref<4096xf16>) attributes {zero.kernel = "linalg.generic"} {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c256 = arith.constant 256 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c16, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %i0 = arith.muli %bx, %c256 : index
      %i = arith.addi %i0, %tx : index
      %a = memref.load %x[%i] : memref<4096xbf16>
      %b = memref.load %y[%i] : memref<4096xbf16>
      %s = arith.addf %a, %b : bf16
      %m = arith.mulf %s, %b : bf16
      %e = math.exp %m : bf16
      %t = math.tanh %e : bf16
      %d = arith.divf %t, %a : bf16
      memref.store %d, %y[%i] : memref<4096xbf16>
      %h = memref.load %z[%i] : memref<4096xf16>
      %h2 = arith.mulf %h, %h : f16
      %h3 = arith.addf %h2, %h : f16
      %h4 = math.exp %h3 : f16
      %h5 = math.rsqrt %h4 : f16
      memref.store %h5, %z[%i] : memref<4096xf16>
      gpu.terminator
    }
    return
  }
}
