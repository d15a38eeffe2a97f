func.func @k(%a: memref<8x16xf32, strided<[48, 1], offset: ?>>, %b: memref<8x16xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.copy %a, %b : memref<8x16xf32, strided<[48, 1], offset: ?>> to memref<8x16xf32>
    gpu.terminator
  }
  return
}
