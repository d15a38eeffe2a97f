// Map every block-level scf.forall the policy emits to its own gpu.launch,
// then its nested thread foralls to threads:
//   [block<x>]               (one parallel dim, tile 256)  -> 256 x 1 x 1
//   [block<y>, block<x>]     (tiles 8, 32)                 -> 32 x 8 x 1
//   [block<z>, y, x]         (tiles 1, 8, 32)              -> 32 x 8 x 1
//   [block<z>]               (wrapped serial ops)          -> 1 x 1 x 1
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %a = transform.structured.match ops{["scf.forall"]} attributes {mapping = [#gpu.block<x>]} in %root : (!transform.any_op) -> !transform.any_op
    %b = transform.structured.match ops{["scf.forall"]} attributes {mapping = [#gpu.block<y>, #gpu.block<x>]} in %root : (!transform.any_op) -> !transform.any_op
    %c = transform.structured.match ops{["scf.forall"]} attributes {mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]} in %root : (!transform.any_op) -> !transform.any_op
    %s = transform.structured.match ops{["scf.forall"]} attributes {mapping = [#gpu.block<z>]} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %a : !transform.any_op {
    ^bb0(%fa: !transform.any_op):
      %l = transform.gpu.map_forall_to_blocks %fa generate_gpu_launch : (!transform.any_op) -> !transform.any_op
      transform.gpu.map_nested_forall_to_threads %l block_dims = [256, 1, 1] sync_after_distribute = false : (!transform.any_op) -> !transform.any_op
    }
    %bc = transform.merge_handles %b, %c : !transform.any_op
    transform.foreach %bc : !transform.any_op {
    ^bb0(%fa: !transform.any_op):
      %l = transform.gpu.map_forall_to_blocks %fa generate_gpu_launch : (!transform.any_op) -> !transform.any_op
      transform.gpu.map_nested_forall_to_threads %l block_dims = [32, 8, 1] sync_after_distribute = false : (!transform.any_op) -> !transform.any_op
    }
    transform.foreach %s : !transform.any_op {
    ^bb0(%fa: !transform.any_op):
      %l = transform.gpu.map_forall_to_blocks %fa generate_gpu_launch : (!transform.any_op) -> !transform.any_op
      transform.gpu.map_nested_forall_to_threads %l block_dims = [1, 1, 1] sync_after_distribute = false : (!transform.any_op) -> !transform.any_op
    }
    transform.yield
  }
}
