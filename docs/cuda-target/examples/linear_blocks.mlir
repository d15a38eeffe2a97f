func.func @k(%x: memref<4x6x8xf32>) {
  scf.forall (%i, %j, %k) in (4, 6, 8) {
    %v = memref.load %x[%i, %j, %k] : memref<4x6x8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i, %j, %k] : memref<4x6x8xf32>
  } {mapping = [#gpu.block<linear_dim_2>, #gpu.block<linear_dim_1>, #gpu.block<linear_dim_0>]}
  return
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %l = transform.gpu.map_forall_to_blocks %f generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
