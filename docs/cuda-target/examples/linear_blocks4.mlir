// 4 linear block dims: LLVM 22 builds a grid of 3 x 5 x 6 = 90 blocks for a
// 2 x 3 x 5 x 6 = 180-iteration forall (the outermost dim is lost).
func.func @k(%x: memref<2x3x5x6xf32>) {
  scf.forall (%a, %i, %j, %k) in (2, 3, 5, 6) {
    %v = memref.load %x[%a, %i, %j, %k] : memref<2x3x5x6xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%a, %i, %j, %k] : memref<2x3x5x6xf32>
  } {mapping = [#gpu.block<linear_dim_3>, #gpu.block<linear_dim_2>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %l = transform.gpu.map_forall_to_blocks %f generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
