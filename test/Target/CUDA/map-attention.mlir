// RUN: zero-opt %s --zero-gpu-map-attention --cse -split-input-file | FileCheck %s

// Causal bf16 attention over 128 queries of depth 32 for 2 heads: a block
// per 64 query rows of a head (grid 2 x 2), 128 threads (four warps of 16
// rows). A thread's rows are g and g + 8 of its warp's (lane / 4); its
// quad place t (lane % 4) picks the column pairs 2t and 2t + 8. The
// queries' A fragments (two depth steps of four pairs) are loaded once;
// the walk over keys goes to the block's diagonal (qb + 1 steps) carrying
// each row's maximum and sum and the four output tiles. A step makes 8
// score tiles of two products each, masks keys past the row, combines
// each row's maximum and sum over the quad (two xor shuffles each),
// rescales, and multiplies the rounded probabilities by the values: 4
// key steps of 4 output tiles. The end divides by the sums, rounds and
// stores each row's pair; the quad's first lane writes max + log(sum).
// CHECK-LABEL: func.func private @causal
// CHECK: scf.forall (%[[QB:.*]], %[[P:.*]]) in (2, 2) {
// CHECK: scf.forall (%[[T:.*]]) in (128) {
// CHECK-DAG: %[[W:.*]] = arith.divui %[[T]], %c32
// CHECK-DAG: %[[L:.*]] = arith.remui %[[T]], %c32
// CHECK-DAG: %[[G:.*]] = arith.divui %[[L]], %c4
// CHECK-DAG: %[[Q4:.*]] = arith.remui %[[L]], %c4
// CHECK-COUNT-8: vector.load %arg0[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK: %[[STEPS:.*]] = arith.addi %[[QB]], %c1
// CHECK: scf.for %[[KB:.*]] = %c0 to %[[STEPS]] step %c1 iter_args(%{{.*}} = %[[NEG:.*]], %{{.*}} = %[[NEG]], %{{.*}} = %[[ZERO:.*]], %{{.*}} = %[[ZERO]], %{{.*}} = %[[TILE:.*]], %{{.*}} = %[[TILE]], %{{.*}} = %[[TILE]], %{{.*}} = %[[TILE]]) -> (f32, f32, f32, f32, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK: vector.load %arg1[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK-COUNT-2: nvgpu.mma.sync(%{{.*}}, %{{.*}}, %{{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<2x2xf32>
// CHECK: arith.cmpi ugt
// CHECK: arith.select %{{.*}}, %[[NEG]], %{{.*}} : f32
// CHECK: vector.reduction <maximumf>
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: math.exp
// CHECK: vector.reduction <add>
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK: arith.truncf %{{.*}} : vector<4x2xf32> to vector<4x2xbf16>
// CHECK-COUNT-4: memref.load %arg2[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>
// CHECK: vector.from_elements %{{.*}} : vector<2x2xbf16>
// CHECK: nvgpu.mma.sync
// CHECK: scf.yield
// CHECK: arith.divf %cst{{.*}}, %{{.*}}#2 : f32
// CHECK: arith.divf %cst{{.*}}, %{{.*}}#3 : f32
// CHECK: arith.truncf %{{.*}} : vector<2x2xf32> to vector<2x2xbf16>
// CHECK: vector.store %{{.*}}, %arg3[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[Q4]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %arg4[%[[P]], %{{.*}}] : memref<2x128xf32>
// CHECK: } {mapping = [#gpu.thread<x>]}
// CHECK: } {mapping = [#gpu.block<x>, #gpu.block<y>]}
// CHECK-NOT: zero.attention
func.func private @causal(%q: memref<2x128x32xbf16>, %k: memref<2x128x32xbf16>, %v: memref<2x128x32xbf16>, %o: memref<2x128x32xbf16>, %l: memref<2x128xf32>) attributes {zero.kernel = "zero.attention"} {
  zero.attention %q, %k, %v into %o, %l scale 0.5 causal : memref<2x128x32xbf16>, memref<2x128x32xbf16>, memref<2x128x32xbf16>, memref<2x128x32xbf16>, memref<2x128xf32>
  return
}

// -----

// Not causal, f16, two leading dimensions (delinearized from the grid's
// y), 192 keys for 64 queries: every block walks all 3 key steps, nothing
// masked; depth 16 is one depth step and two output tiles. Strided views
// with contiguous rows are read in place.
// CHECK-LABEL: func.func private @f16
// CHECK: scf.forall (%{{.*}}, %[[P:.*]]) in (1, 6) {
// CHECK: %[[AT:.*]]:2 = affine.delinearize_index %[[P]] into (2, 3)
// CHECK: vector.load %arg0[%[[AT]]#0, %[[AT]]#1, %{{.*}}, %{{.*}}] : memref<2x3x64x16xf16, strided<[6144, 2048, 32, 1]>>, vector<2xf16>
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args({{.*}}) -> (f32, f32, f32, f32, vector<2x2xf32>, vector<2x2xf32>)
// CHECK-NOT: arith.cmpi ugt
// CHECK: arith.truncf %{{.*}} : vector<4x2xf32> to vector<4x2xf16>
// CHECK: scf.yield
func.func private @f16(%q: memref<2x3x64x16xf16, strided<[6144, 2048, 32, 1]>>, %k: memref<2x3x192x16xf16>, %v: memref<2x3x192x16xf16>, %o: memref<2x3x64x16xf16>, %l: memref<2x3x64xf32>) attributes {zero.kernel = "zero.attention"} {
  zero.attention %q, %k, %v into %o, %l scale 0.25 : memref<2x3x64x16xf16, strided<[6144, 2048, 32, 1]>>, memref<2x3x192x16xf16>, memref<2x3x192x16xf16>, memref<2x3x64x16xf16>, memref<2x3x64xf32>
  return
}

// -----

// The gradient, causal bf16, 128 queries and keys of depth 32 for 2
// heads: grid 4 x 2, the first 2 blocks of x take 64 keys each, the other
// 2 64 queries. A key block loads its warp's keys and values as A
// fragments (two depth steps of four pairs each) and walks the query
// blocks from its diagonal, carrying 4 value and 4 key gradient tiles: the
// transposed scores against the queries and the probability gradients
// against dout (8 tiles of two products each), the log-sum-exp and delta
// of each tile's two queries, the probabilities masked where the query
// comes before the key, then 4 steps of 16 queries times dout into dv and
// times the queries into dk. dv is stored as summed, dk times the scale.
// A query block loads its queries and dout as A fragments and each row's
// log-sum-exp and delta, walks the key blocks to its diagonal with 4 tiles
// of dq (scores against the keys, probability gradients against the
// values, keys past the query masked, times the keys) and stores dq times
// the scale.
// CHECK-LABEL: func.func private @grad
// CHECK: scf.forall (%[[BX:.*]], %[[P:.*]]) in (4, 2) {
// CHECK: scf.forall (%{{.*}}) in (128) {
// CHECK: %[[ISKEY:.*]] = arith.cmpi ult, %[[BX]], %c2 : index
// CHECK: scf.if %[[ISKEY]] {
// CHECK-COUNT-8: vector.load %arg1[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK-COUNT-8: vector.load %arg2[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK: scf.for %{{.*}} = %[[BX]] to %c2 step %c1 iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK: vector.load %arg0[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK-COUNT-16: nvgpu.mma.sync
// CHECK: vector.load %arg3[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK-COUNT-16: nvgpu.mma.sync
// CHECK: vector.load %arg4[%[[P]], %{{.*}}] : memref<2x128xf32>, vector<2xf32>
// CHECK: math.exp %{{.*}} : vector<2x2xf32>
// CHECK: arith.cmpi ult
// CHECK: vector.load %arg5[%[[P]], %{{.*}}] : memref<2x128xf32>, vector<2xf32>
// CHECK: arith.truncf %{{.*}} : vector<4x2xf32> to vector<4x2xbf16>
// CHECK-COUNT-4: memref.load %arg3[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>
// CHECK: arith.truncf %{{.*}} : vector<4x2xf32> to vector<4x2xbf16>
// CHECK-COUNT-4: memref.load %arg0[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>
// CHECK: scf.yield
// CHECK-NOT: arith.mulf
// CHECK: vector.store %{{.*}}, %arg8[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK: arith.mulf %{{.*}}, %[[SCALES:.*]] : vector<2x2xf32>
// CHECK: vector.store %{{.*}}, %arg7[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK: } else {
// CHECK: %[[QB:.*]] = arith.subi %[[BX]], %c2 : index
// CHECK-COUNT-8: vector.load %arg0[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK-COUNT-8: vector.load %arg3[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK-COUNT-2: memref.load %arg4[%[[P]], %{{.*}}] : memref<2x128xf32>
// CHECK-COUNT-2: memref.load %arg5[%[[P]], %{{.*}}] : memref<2x128xf32>
// CHECK: %[[STEPS:.*]] = arith.addi %[[QB]], %c1 : index
// CHECK: scf.for %{{.*}} = %c0 to %[[STEPS]] step %c1 iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK: vector.load %arg1[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK-COUNT-16: nvgpu.mma.sync
// CHECK: vector.load %arg2[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK-COUNT-16: nvgpu.mma.sync
// CHECK: math.exp
// CHECK: arith.cmpi ugt
// CHECK: arith.truncf %{{.*}} : vector<4x2xf32> to vector<4x2xbf16>
// CHECK-COUNT-4: memref.load %arg1[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>
// CHECK: scf.yield
// CHECK: arith.mulf %{{.*}}, %[[SCALES]] : vector<2x2xf32>
// CHECK: vector.store %{{.*}}, %arg6[%[[P]], %{{.*}}, %{{.*}}] : memref<2x128x32xbf16>, vector<2xbf16>
// CHECK: } {mapping = [#gpu.thread<x>]}
// CHECK: } {mapping = [#gpu.block<x>, #gpu.block<y>]}
// CHECK-NOT: zero.attention_grad
func.func private @grad(%q: memref<2x128x32xbf16>, %k: memref<2x128x32xbf16>, %v: memref<2x128x32xbf16>, %do: memref<2x128x32xbf16>, %l: memref<2x128xf32>, %dl: memref<2x128xf32>, %dq: memref<2x128x32xbf16>, %dk: memref<2x128x32xbf16>, %dv: memref<2x128x32xbf16>) attributes {zero.kernel = "zero.attention_grad"} {
  zero.attention_grad %q, %k, %v, %do, %l, %dl into %dq, %dk, %dv scale 0.5 causal : memref<2x128x32xbf16>, memref<2x128x32xbf16>, memref<2x128x32xbf16>, memref<2x128x32xbf16>, memref<2x128xf32>, memref<2x128xf32>, memref<2x128x32xbf16>, memref<2x128x32xbf16>, memref<2x128x32xbf16>
  return
}

// -----

// Not causal, f16, rank 3, 192 keys for 64 queries: 3 key blocks and one
// query block a head (grid 4 x 3); key blocks walk the one query block from
// the start, the query block all 3 key blocks; nothing masked.
// CHECK-LABEL: func.func private @grad_f16
// CHECK: scf.forall (%[[BX:.*]], %{{.*}}) in (4, 3) {
// CHECK: arith.cmpi ult, %[[BX]], %c3 : index
// CHECK: scf.for %{{.*}} = %c0 to %c1 step %c1 iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>, vector<2x2xf32>)
// CHECK-NOT: arith.cmpi
// CHECK: arith.truncf %{{.*}} : vector<4x2xf32> to vector<4x2xf16>
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args({{.*}}) -> (vector<2x2xf32>, vector<2x2xf32>)
// CHECK-NOT: arith.cmpi
// CHECK: scf.yield
func.func private @grad_f16(%q: memref<3x64x16xf16>, %k: memref<3x192x16xf16>, %v: memref<3x192x16xf16>, %do: memref<3x64x16xf16>, %l: memref<3x64xf32>, %dl: memref<3x64xf32>, %dq: memref<3x64x16xf16>, %dk: memref<3x192x16xf16>, %dv: memref<3x192x16xf16>) attributes {zero.kernel = "zero.attention_grad"} {
  zero.attention_grad %q, %k, %v, %do, %l, %dl into %dq, %dk, %dv scale 0.25 : memref<3x64x16xf16>, memref<3x192x16xf16>, memref<3x192x16xf16>, memref<3x64x16xf16>, memref<3x64xf32>, memref<3x64xf32>, memref<3x64x16xf16>, memref<3x192x16xf16>, memref<3x192x16xf16>
  return
}

// -----

// The heads of one projection as they lie ([B, T, H, D], seq_dim 1, strided
// views of [B, T, 3, H, D]): the grid's y is the (batch, head) pairs, each
// split into its batch and head, and every operand is indexed with the
// row second; the log-sum-exp ([B, T, H]) too. In the backward, the key
// side reads two rows' log-sum-exp and delta one by one (adjacent rows are
// H apart), where with the rows last it reads them as a pair.
// CHECK-LABEL: func.func private @heads
// CHECK: scf.forall (%[[QB:.*]], %[[P:.*]]) in (2, 6) {
// CHECK: %[[BH:.*]]:2 = affine.delinearize_index %[[P]] into (2, 3)
// CHECK: vector.load %arg0[%[[BH]]#0, %{{.*}}, %[[BH]]#1, %{{.*}}] : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1]>>, vector<2xbf16>
// CHECK: scf.for
// CHECK: vector.load %arg1[%[[BH]]#0, %{{.*}}, %[[BH]]#1, %{{.*}}] : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, vector<2xbf16>
// CHECK: memref.load %arg2[%[[BH]]#0, %{{.*}}, %[[BH]]#1, %{{.*}}] : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>
// CHECK: vector.store %{{.*}}, %arg3[%[[BH]]#0, %{{.*}}, %[[BH]]#1, %{{.*}}] : memref<2x128x3x32xbf16>, vector<2xbf16>
// CHECK: memref.store %{{.*}}, %arg4[%[[BH]]#0, %{{.*}}, %[[BH]]#1] : memref<2x128x3xf32>
func.func private @heads(%q: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1]>>, %k: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, %v: memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, %o: memref<2x128x3x32xbf16>, %l: memref<2x128x3xf32>) attributes {zero.kernel = "zero.attention"} {
  zero.attention %q, %k, %v into %o, %l scale 0.5 causal seq_dim 1 : memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1]>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 96>>, memref<2x128x3x32xbf16, strided<[36864, 288, 32, 1], offset: 192>>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>
  return
}

// -----

// CHECK-LABEL: func.func private @grad_heads
// CHECK: scf.forall (%{{.*}}, %[[P:.*]]) in (4, 6) {
// CHECK: %[[BH:.*]]:2 = affine.delinearize_index %[[P]] into (2, 3)
// CHECK: scf.if
// CHECK: scf.for
// CHECK: memref.load %arg1[%[[BH]]#0, %[[C0:.*]], %[[BH]]#1] : memref<2x128x3xf32>
// CHECK: %[[C1:.*]] = arith.addi %[[C0]], %c1
// CHECK: memref.load %arg1[%[[BH]]#0, %[[C1]], %[[BH]]#1] : memref<2x128x3xf32>
// CHECK: } else {
// CHECK: memref.load %arg1[%[[BH]]#0, %{{.*}}, %[[BH]]#1] : memref<2x128x3xf32>
func.func private @grad_heads(%q: memref<2x128x3x32xbf16>, %l: memref<2x128x3xf32>) attributes {zero.kernel = "zero.attention_grad"} {
  zero.attention_grad %q, %q, %q, %q, %l, %l into %q, %q, %q scale 0.5 causal seq_dim 1 : memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>, memref<2x128x3xf32>, memref<2x128x3xf32>, memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>, memref<2x128x3x32xbf16>
  return
}

// -----

// A dropout of the probabilities, [B, T, H, D] with B = 2, H = 3, 64
// rows: the pair's row of the global batch is the micro-batch times B
// plus b, its elements count from h * 64 queries. Each tile's four flags
// are one Philox draw on vector<2x2xi32> (element (h * 64 + i) * 64 + j,
// row, step, stream 3), kept below 15099494; the kept probabilities are
// scaled and the rest 0 before their product with the values, after the
// row sums (the log-sum-exp is the softmax's).
// CHECK-LABEL: func.func private @dropout
// CHECK: %[[BH:.*]]:2 = affine.delinearize_index %{{.*}} into (2, 3)
// CHECK: %[[STEP:.*]] = arith.trunci %arg2 : i64 to i32
// CHECK: %[[RB:.*]] = arith.muli %arg3, %c2_i64 : i64
// CHECK: %[[B64:.*]] = arith.index_cast %[[BH]]#0 : index to i64
// CHECK: %[[R64:.*]] = arith.addi %[[RB]], %[[B64]] : i64
// CHECK: %[[ROW:.*]] = arith.trunci %[[R64]] : i64 to i32
// CHECK: %[[BASE:.*]] = arith.muli %[[BH]]#1, %c64 : index
// CHECK: %[[F:.*]] = vector.broadcast %{{.*}} : f32 to vector<2x2xf32>
// CHECK: scf.for
// CHECK: vector.reduction <add>
// CHECK: %[[I:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK: %[[IK:.*]] = arith.muli %[[I]], %c64 : index
// CHECK: %[[E:.*]] = vector.from_elements %{{.*}} : vector<2x2xi32>
// CHECK: %[[RV:.*]] = vector.broadcast %[[ROW]] : i32 to vector<2x2xi32>
// CHECK: %[[SV:.*]] = vector.broadcast %[[STEP]] : i32 to vector<2x2xi32>
// CHECK: arith.constant dense<3> : vector<2x2xi32>
// CHECK: arith.extui %[[E]] : vector<2x2xi32> to vector<2x2xi64>
// CHECK: arith.constant dense<15099494> : vector<2x2xi32>
// CHECK: %[[KEEP:.*]] = arith.cmpi ult, %{{.*}} : vector<2x2xi32>
// CHECK: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[F]] : vector<2x2xf32>
// CHECK: arith.select %[[KEEP]], %[[SCALED]], %{{.*}} : vector<2x2xi1>, vector<2x2xf32>
// CHECK: nvgpu.mma.sync
func.func private @dropout(%q: memref<2x64x3x16xbf16>, %l: memref<2x64x3xf32>, %step: i64, %mb: i64) attributes {zero.kernel = "zero.attention"} {
  zero.attention %q, %q, %q into %q, %l scale 0.5 causal seq_dim 1 dropout <seed = 7, stream = 3, keep = 15099494> scaled 1.109375 rng(%step, %mb) : memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>
  return
}

// -----

// The backward draws the forward's flags on both sides: the key side's
// tiles have keys for rows (its elements count the query from the
// tile's columns), the query side's as the forward's. Each side drops out
// the probabilities' gradient before the scores' gradient; the key side
// also the probabilities for the values' gradient.
// CHECK-LABEL: func.func private @grad_dropout
// CHECK: scf.if
// CHECK: scf.for
// CHECK: arith.cmpi ult, %{{.*}} : vector<2x2xi32>
// CHECK: arith.select {{.*}} : vector<2x2xi1>, vector<2x2xf32>
// CHECK: arith.select {{.*}} : vector<2x2xi1>, vector<2x2xf32>
// CHECK: } else {
// CHECK: scf.for
// CHECK: arith.cmpi ult, %{{.*}} : vector<2x2xi32>
// CHECK: arith.select {{.*}} : vector<2x2xi1>, vector<2x2xf32>
func.func private @grad_dropout(%q: memref<2x64x3x16xbf16>, %l: memref<2x64x3xf32>, %step: i64, %mb: i64) attributes {zero.kernel = "zero.attention_grad"} {
  zero.attention_grad %q, %q, %q, %q, %l, %l into %q, %q, %q scale 0.5 causal seq_dim 1 dropout <seed = 7, stream = 3, keep = 15099494> scaled 1.109375 rng(%step, %mb) : memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3xf32>, memref<2x64x3xf32>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>, memref<2x64x3x16xbf16>
  return
}
