#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
module {
  // gelu-ish elementwise with a broadcast bias
  func.func @kernel_ew(%x: memref<512x768xf32, strided<[768, 1], offset: ?>>, %b: memref<768xf32>, %y: memref<512x768xf32>) attributes {zero.kernel = "linalg.generic"} {
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x, %b : memref<512x768xf32, strided<[768, 1], offset: ?>>, memref<768xf32>) outs(%y : memref<512x768xf32>) {
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      %t = math.tanh %s : f32
      %e = math.exp %t : f32
      %u = math.erf %e : f32
      %l = math.log %u : f32
      %r = math.rsqrt %l : f32
      %y1 = arith.mulf %r, %half : f32
      linalg.yield %y1 : f32
    }
    return
  }
  // row max (softmax statistics)
  func.func @kernel_rowmax(%x: memref<512x768xf32>, %m: memref<512xf32>) attributes {zero.kernel = "linalg.generic"} {
    %ninf = arith.constant 0xFF800000 : f32
    linalg.fill ins(%ninf : f32) outs(%m : memref<512xf32>)
    linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
        ins(%x : memref<512x768xf32>) outs(%m : memref<512xf32>) {
    ^bb0(%a: f32, %o: f32):
      %r = arith.maximumf %a, %o : f32
      linalg.yield %r : f32
    }
    return
  }
}
