// What a zero-opt "block per row" reduction mapping would produce for
//   fill(-inf) + generic {parallel, reduction} max over the last dim.
module {
  func.func @kernel_rowmax(%x: memref<512x768xf32>, %m: memref<512xf32>) attributes {zero.kernel = "linalg.generic"} {
    %c1 = arith.constant 1 : index
    %c512 = arith.constant 512 : index
    %c256 = arith.constant 256 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c512, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %c0 = arith.constant 0 : index
      %c768 = arith.constant 768 : index
      %step = arith.constant 256 : index
      %neutral = arith.constant 0xFF800000 : f32   // arith::getNeutralElement(maximumf)
      %fillv = arith.constant 0xFF800000 : f32     // the fill's value (accumulator init)
      %p = scf.for %j = %tx to %c768 step %step iter_args(%acc = %neutral) -> (f32) {
        %v = memref.load %x[%bx, %j] : memref<512x768xf32>
        %r = arith.maximumf %v, %acc : f32
        scf.yield %r : f32
      }
      %all = gpu.all_reduce maximumf %p uniform {} : (f32) -> f32
      %first = arith.cmpi eq, %tx, %c0 : index
      scf.if %first {
        %o = arith.maximumf %all, %fillv : f32
        memref.store %o, %m[%bx] : memref<512xf32>
      }
      gpu.terminator
    }
    return
  }
  // sum of squares in bf16 with an f32 accumulator (custom combine region)
  func.func @kernel_rowsumsq(%x: memref<512x768xbf16>, %s: memref<512xf32>) attributes {zero.kernel = "linalg.generic"} {
    %c1 = arith.constant 1 : index
    %c512 = arith.constant 512 : index
    %c128 = arith.constant 128 : index
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c512, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
      %c0 = arith.constant 0 : index
      %c768 = arith.constant 768 : index
      %step = arith.constant 128 : index
      %zero = arith.constant 0.0 : f32
      %p = scf.for %j = %tx to %c768 step %step iter_args(%acc = %zero) -> (f32) {
        %v = memref.load %x[%bx, %j] : memref<512x768xbf16>
        %sq = arith.mulf %v, %v : bf16
        %e = arith.extf %sq : bf16 to f32
        %r = arith.addf %e, %acc : f32
        scf.yield %r : f32
      }
      %all = gpu.all_reduce %p uniform {
      ^bb0(%a: f32, %b: f32):
        %t = arith.addf %a, %b : f32
        gpu.yield %t : f32
      } : (f32) -> f32
      %first = arith.cmpi eq, %tx, %c0 : index
      scf.if %first {
        memref.store %all, %s[%bx] : memref<512xf32>
      }
      gpu.terminator
    }
    return
  }
}
