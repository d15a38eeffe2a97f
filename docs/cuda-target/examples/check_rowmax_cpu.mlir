// CPU numerics check: the forall-form GPU kernel (sequentialized) against
// the original linalg kernel. Build: see RECIPE.md section 5.
#id = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func private @printF32(f32)
  func.func private @printNewline()
  func.func @kernel_rowmax_ref(%x: memref<512x768xf32>, %m: memref<512xf32>) {
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
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c512 = arith.constant 512 : index
    %c768 = arith.constant 768 : index
    %x = memref.alloc() : memref<512x768xf32>
    // x[i, j] = sin(i * 7.31 + j * 0.37) * (1 + i)
    scf.for %i = %c0 to %c512 step %c1 {
      scf.for %j = %c0 to %c768 step %c1 {
        %ii = arith.index_cast %i : index to i32
        %jj = arith.index_cast %j : index to i32
        %fi = arith.sitofp %ii : i32 to f32
        %fj = arith.sitofp %jj : i32 to f32
        %a = arith.constant 7.31 : f32
        %b = arith.constant 0.37 : f32
        %one = arith.constant 1.0 : f32
        %t0 = arith.mulf %fi, %a : f32
        %t1 = arith.mulf %fj, %b : f32
        %t2 = arith.addf %t0, %t1 : f32
        %s = math.sin %t2 : f32
        %sc = arith.addf %fi, %one : f32
        %v = arith.mulf %s, %sc : f32
        memref.store %v, %x[%i, %j] : memref<512x768xf32>
      }
    }
    %m1 = memref.alloc() : memref<512xf32>
    %m2 = memref.alloc() : memref<512xf32>
    call @kernel_rowmax_ref(%x, %m1) : (memref<512x768xf32>, memref<512xf32>) -> ()
    call @kernel_rowmax(%x, %m2) : (memref<512x768xf32>, memref<512xf32>) -> ()
    %z = arith.constant 0.0 : f32
    %d = scf.for %i = %c0 to %c512 step %c1 iter_args(%acc = %z) -> (f32) {
      %a = memref.load %m1[%i] : memref<512xf32>
      %b = memref.load %m2[%i] : memref<512xf32>
      %e = arith.subf %a, %b : f32
      %ae = math.absf %e : f32
      %n = arith.maximumf %ae, %acc : f32
      scf.yield %n : f32
    }
    %s0 = memref.load %m2[%c0] : memref<512xf32>
    %c511 = arith.constant 511 : index
    %s1 = memref.load %m2[%c511] : memref<512xf32>
    call @printF32(%s0) : (f32) -> ()
    call @printNewline() : () -> ()
    call @printF32(%s1) : (f32) -> ()
    call @printNewline() : () -> ()
    call @printF32(%d) : (f32) -> ()
    call @printNewline() : () -> ()
    return
  }
}
