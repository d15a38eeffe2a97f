module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %ew = transform.structured.match ops{["func.func"]} attributes {sym_name = "kernel_ew"} in %root : (!transform.any_op) -> !transform.any_op
    %gen = transform.structured.match ops{["linalg.generic"]} in %ew : (!transform.any_op) -> !transform.any_op
    %tiled, %forall = transform.structured.tile_using_forall %gen tile_sizes [4, 256] (mapping = [#gpu.block<y>, #gpu.block<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %tiled2, %forall2 = transform.structured.tile_using_forall %tiled tile_sizes [1, 1] (mapping = [#gpu.thread<y>, #gpu.thread<x>]) : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %launch = transform.gpu.map_forall_to_blocks %ew generate_gpu_launch : (!transform.any_op) -> !transform.any_op
    transform.gpu.map_nested_forall_to_threads %launch block_dims = [256, 4, 1] : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
