// Map every kernel's outer scf.forall to blocks and the nested ones to threads.
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %fns = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %fns : !transform.any_op {
    ^bb0(%f: !transform.any_op):
      %launch = transform.gpu.map_forall_to_blocks %f generate_gpu_launch : (!transform.any_op) -> !transform.any_op
      transform.gpu.map_nested_forall_to_threads %launch block_dims = [256, 1, 1] : (!transform.any_op) -> !transform.any_op
    }
    transform.yield
  }
}
