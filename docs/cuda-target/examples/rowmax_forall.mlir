// Block-per-row reduction in forall form (what a zero-opt mapping pass would
// emit): thread partials with a grid-stride loop, then a shared-memory tree.
// The same IR runs on the CPU after scf-forall-to-for (the foralls are
// sequential there: each forall completes before the next one starts,
// exactly the barrier semantics the GPU mapping inserts).
#wg = #gpu.address_space<workgroup>
module {
  func.func @kernel_rowmax(%x: memref<512x768xf32>, %m: memref<512xf32>) attributes {zero.kernel = "linalg.generic"} {
    %c0 = arith.constant 0 : index
    %c768 = arith.constant 768 : index
    %c256 = arith.constant 256 : index
    %neutral = arith.constant 0xFF800000 : f32
    %fillv = arith.constant 0xFF800000 : f32
    scf.forall (%row) in (512) {
      %part = memref.alloca() : memref<256xf32, #wg>
      scf.forall (%t) in (256) {
        %p = scf.for %j = %t to %c768 step %c256 iter_args(%acc = %neutral) -> (f32) {
          %v = memref.load %x[%row, %j] : memref<512x768xf32>
          %r = arith.maximumf %v, %acc : f32
          scf.yield %r : f32
        }
        memref.store %p, %part[%t] : memref<256xf32, #wg>
      } {mapping = [#gpu.thread<x>]}
      scf.forall (%t) in (128) {
        %o = affine.apply affine_map<(d0) -> (d0 + 128)>(%t)
        %a = memref.load %part[%t] : memref<256xf32, #wg>
        %b = memref.load %part[%o] : memref<256xf32, #wg>
        %r = arith.maximumf %a, %b : f32
        memref.store %r, %part[%t] : memref<256xf32, #wg>
      } {mapping = [#gpu.thread<x>]}
      scf.forall (%t) in (64) {
        %o = affine.apply affine_map<(d0) -> (d0 + 64)>(%t)
        %a = memref.load %part[%t] : memref<256xf32, #wg>
        %b = memref.load %part[%o] : memref<256xf32, #wg>
        %r = arith.maximumf %a, %b : f32
        memref.store %r, %part[%t] : memref<256xf32, #wg>
      } {mapping = [#gpu.thread<x>]}
      scf.forall (%t) in (32) {
        %o = affine.apply affine_map<(d0) -> (d0 + 32)>(%t)
        %a = memref.load %part[%t] : memref<256xf32, #wg>
        %b = memref.load %part[%o] : memref<256xf32, #wg>
        %r = arith.maximumf %a, %b : f32
        memref.store %r, %part[%t] : memref<256xf32, #wg>
      } {mapping = [#gpu.thread<x>]}
      scf.forall (%t) in (16) {
        %o = affine.apply affine_map<(d0) -> (d0 + 16)>(%t)
        %a = memref.load %part[%t] : memref<256xf32, #wg>
        %b = memref.load %part[%o] : memref<256xf32, #wg>
        %r = arith.maximumf %a, %b : f32
        memref.store %r, %part[%t] : memref<256xf32, #wg>
      } {mapping = [#gpu.thread<x>]}
      scf.forall (%t) in (8) {
        %o = affine.apply affine_map<(d0) -> (d0 + 8)>(%t)
        %a = memref.load %part[%t] : memref<256xf32, #wg>
        %b = memref.load %part[%o] : memref<256xf32, #wg>
        %r = arith.maximumf %a, %b : f32
        memref.store %r, %part[%t] : memref<256xf32, #wg>
      } {mapping = [#gpu.thread<x>]}
      scf.forall (%t) in (4) {
        %o = affine.apply affine_map<(d0) -> (d0 + 4)>(%t)
        %a = memref.load %part[%t] : memref<256xf32, #wg>
        %b = memref.load %part[%o] : memref<256xf32, #wg>
        %r = arith.maximumf %a, %b : f32
        memref.store %r, %part[%t] : memref<256xf32, #wg>
      } {mapping = [#gpu.thread<x>]}
      scf.forall (%t) in (2) {
        %o = affine.apply affine_map<(d0) -> (d0 + 2)>(%t)
        %a = memref.load %part[%t] : memref<256xf32, #wg>
        %b = memref.load %part[%o] : memref<256xf32, #wg>
        %r = arith.maximumf %a, %b : f32
        memref.store %r, %part[%t] : memref<256xf32, #wg>
      } {mapping = [#gpu.thread<x>]}
      scf.forall (%t) in (1) {
        %a = memref.load %part[%c0] : memref<256xf32, #wg>
        %c1 = arith.constant 1 : index
        %b = memref.load %part[%c1] : memref<256xf32, #wg>
        %r = arith.maximumf %a, %b : f32
        %o = arith.maximumf %r, %fillv : f32
        memref.store %o, %m[%row] : memref<512xf32>
      } {mapping = [#gpu.thread<x>]}
    } {mapping = [#gpu.block<x>]}
    return
  }
}
