// RUN: zero-opt %s --split-input-file --zero-gather-one-hot-reductions | FileCheck %s

#row = affine_map<(d0, d1) -> (d0, 0)>
#cls = affine_map<(d0, d1) -> (0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>

// The loss's pick: log-probabilities summed where the class is the label.
// The scores are read at the label's class; a label outside [0, 5) keeps
// the sum's zero.
// CHECK-LABEL: func.func @pick
// CHECK-SAME: (%[[LABELS:.*]]: tensor<4x1xi64>, %[[SCORES:.*]]: tensor<4x5xf32>, %[[LSE:.*]]: tensor<4x1xf32>)
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: %[[DEST:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ROW:.*]], #[[ROW]], #[[OUT:.*]], #[[OUT]]], iterator_types = ["parallel"]}
// CHECK-SAME: ins(%[[LABELS]], %[[LSE]], %[[INIT]] : tensor<4x1xi64>, tensor<4x1xf32>, tensor<4xf32>) outs(%[[DEST]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[L:.*]]: i64, %[[S:.*]]: f32, %[[ACC:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[I:.*]] = arith.index_cast %[[L]] : i64 to index
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[I]], %c5 : index
// CHECK: %[[SAFE:.*]] = arith.select %[[IN]], %[[I]], %c0 : index
// CHECK: %[[CLS:.*]] = arith.index_cast %[[SAFE]] : index to i64
// CHECK: %[[ROWI:.*]] = linalg.index 0 : index
// CHECK: %[[X:.*]] = tensor.extract %[[SCORES]][%[[ROWI]], %[[SAFE]]] : tensor<4x5xf32>
// CHECK: %[[V:.*]] = arith.subf %[[X]], %[[S]] : f32
// CHECK: %[[EQ:.*]] = arith.cmpi eq, %[[L]], %[[CLS]] : i64
// CHECK: %[[P:.*]] = arith.select %[[EQ]], %[[V]], %{{.*}} : f32
// CHECK: %[[R:.*]] = arith.addf %[[P]], %[[ACC]] : f32
// CHECK: linalg.yield %[[R]] : f32
// CHECK-NOT: "reduction"
func.func @pick(%labels: tensor<4x1xi64>, %scores: tensor<4x5xf32>, %lse: tensor<4x1xf32>) -> tensor<4xf32> {
  %ids = arith.constant dense<[[0, 1, 2, 3, 4]]> : tensor<1x5xi64>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#row, #cls, #id, #row, #out], iterator_types = ["parallel", "reduction"]}
      ins(%labels, %ids, %scores, %lse : tensor<4x1xi64>, tensor<1x5xi64>, tensor<4x5xf32>, tensor<4x1xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%l: i64, %c: i64, %x: f32, %s: f32, %acc: f32):
    %v = arith.subf %x, %s : f32
    %eq = arith.cmpi eq, %l, %c : i64
    %p = arith.select %eq, %v, %zero : f32
    %sum = arith.addf %p, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#lab = affine_map<(d0, d1, d2) -> (d0, 0)>
#cls = affine_map<(d0, d1, d2) -> (0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out3 = affine_map<(d0, d1, d2) -> (d0)>

// The gradient's one-hot tensor, written for an elementwise user and
// summed (negated) over the classes and a loop of one iteration: the sum
// computes the one-hot body at the label, and the one-hot op stays for
// its other user.
// CHECK-LABEL: func.func @one_hot_operand
// CHECK-SAME: (%[[LABELS:.*]]: tensor<4x1xi64>, %[[G:.*]]: tensor<4x5x1xf32>)
// CHECK: %[[HOT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[LAB:.*]], #[[O:.*]], #[[O]]], iterator_types = ["parallel"]} ins(%[[LABELS]], %{{.*}} : tensor<4x1xi64>, tensor<4xf32>)
// CHECK-NOT: tensor.extract
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.negf
// CHECK-NEXT: arith.addf
// CHECK: %[[USE:.*]] = linalg.generic {{.*}} ins(%[[HOT]], %[[G]] :
// CHECK: return %[[SUM]], %[[USE]]
func.func @one_hot_operand(%labels: tensor<4x1xi64>, %g: tensor<4x5x1xf32>) -> (tensor<4xf32>, tensor<4x5x1xf32>) {
  %ids = arith.constant dense<[[0, 1, 2, 3, 4]]> : tensor<1x5xi64>
  %zero = arith.constant 0.0 : f32
  %c = arith.constant -2.5e-1 : f32
  %e = tensor.empty() : tensor<4x5x1xf32>
  %hot = linalg.generic {indexing_maps = [#lab, #cls, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%labels, %ids : tensor<4x1xi64>, tensor<1x5xi64>) outs(%e : tensor<4x5x1xf32>) {
  ^bb0(%l: i64, %k: i64, %o: f32):
    %eq = arith.cmpi eq, %l, %k : i64
    %p = arith.select %eq, %c, %zero : f32
    linalg.yield %p : f32
  } -> tensor<4x5x1xf32>
  %es = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%es : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #out3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%hot : tensor<4x5x1xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %n = arith.negf %in : f32
    %s = arith.addf %n, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %eu = tensor.empty() : tensor<4x5x1xf32>
  %use = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%hot, %g : tensor<4x5x1xf32>, tensor<4x5x1xf32>) outs(%eu : tensor<4x5x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x5x1xf32>
  return %sum, %use : tensor<4xf32>, tensor<4x5x1xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#lab = affine_map<(d0, d1) -> (d0, 0)>
#cls = affine_map<(d0, d1) -> (0, d1)>
#w = affine_map<(d0, d1) -> (0, d1)>
#sum = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sout = affine_map<(d0, d1, d2) -> (d0, d1)>

// A weighted loss's per-sample weight, imported unfused: the one-hot
// condition and the select are two ops, and the sum reads the select
// through an expand by a unit dimension. Both bodies are computed at the
// label, the class ids on the left of the comparison; the weights are
// read at the label's class.
// CHECK-LABEL: func.func @weight
// CHECK-SAME: (%[[LABELS:.*]]: tensor<3x1xi64>, %[[W:.*]]: tensor<1x5xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[L:.*]], #[[O:.*]], #[[O]]], iterator_types = ["parallel", "parallel"]} ins(%[[LABELS]], %{{.*}} : tensor<3x1xi64>, tensor<3x1xf32>)
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %c0 : index
// CHECK: %[[CLS:.*]] = arith.index_cast %[[SAFE]] : index to i64
// CHECK: tensor.extract %[[W]][%c0, %[[SAFE]]] : tensor<1x5xf32>
// CHECK: arith.cmpi eq, %[[CLS]], %{{.*}} : i64
// CHECK-NOT: "reduction"
func.func @weight(%labels: tensor<3x1xi64>, %w: tensor<1x5xf32>) -> tensor<3x1xf32> {
  %ids = arith.constant dense<[[0, 1, 2, 3, 4]]> : tensor<1x5xi64>
  %zero = arith.constant -0.0 : f32
  %eh = tensor.empty() : tensor<3x5xi1>
  %hot = linalg.generic {indexing_maps = [#cls, #lab, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids, %labels : tensor<1x5xi64>, tensor<3x1xi64>) outs(%eh : tensor<3x5xi1>) {
  ^bb0(%k: i64, %l: i64, %o: i1):
    %eq = arith.cmpi eq, %k, %l : i64
    linalg.yield %eq : i1
  } -> tensor<3x5xi1>
  %ew = tensor.empty() : tensor<3x5xf32>
  %sel = linalg.generic {indexing_maps = [#id, #w, #id], iterator_types = ["parallel", "parallel"]}
      ins(%hot, %w : tensor<3x5xi1>, tensor<1x5xf32>) outs(%ew : tensor<3x5xf32>) {
  ^bb0(%h: i1, %x: f32, %o: f32):
    %p = arith.select %h, %x, %zero : f32
    linalg.yield %p : f32
  } -> tensor<3x5xf32>
  %x3 = tensor.expand_shape %sel [[0, 1], [2]] output_shape [3, 1, 5] : tensor<3x5xf32> into tensor<3x1x5xf32>
  %es = tensor.empty() : tensor<3x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%es : tensor<3x1xf32>) -> tensor<3x1xf32>
  %r = linalg.generic {indexing_maps = [#sum, #sout], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x3 : tensor<3x1x5xf32>) outs(%init : tensor<3x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<3x1xf32>
  return %r : tensor<3x1xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#cls = affine_map<(d0, d1) -> (0, d1)>

// The import's pick before fusion: a linalg.reduce of a select whose
// true value is the log-probability, itself computed from the scores by
// elementwise ops (the one-hot condition reads a zero splat through the
// select). Each op that varies with the class is computed at the label's
// class; only the scores, which no elementwise op writes, are read, and
// the log-probabilities are never written whole.
// CHECK-LABEL: func.func @reduce_of_log_probabilities
// CHECK-SAME: (%[[LABELS:.*]]: tensor<4xi64>, %[[SCORES:.*]]: tensor<4x5xf32>, %[[MAX:.*]]: tensor<4x1xf32>, %[[LSE:.*]]: tensor<4x1xf32>)
// CHECK-NOT: linalg.reduce
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%{{.*}}, %[[LSE]], %[[MAX]], %{{.*}} : tensor<4x1xi64>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4xf32>)
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %c0 : index
// CHECK: tensor.extract %[[SCORES]][%{{.*}}, %[[SAFE]]] : tensor<4x5xf32>
// CHECK: arith.subf
// CHECK: arith.subf
// CHECK: arith.cmpi eq
// CHECK: arith.select
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @reduce_of_log_probabilities(%labels: tensor<4xi64>, %scores: tensor<4x5xf32>, %max: tensor<4x1xf32>, %lse: tensor<4x1xf32>) -> tensor<4xf32> {
  %ids = arith.constant dense<[[0, 1, 2, 3, 4]]> : tensor<1x5xi64>
  %zeros = arith.constant dense<0.0> : tensor<4x5xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x5xf32>
  %shifted = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scores, %max : tensor<4x5xf32>, tensor<4x1xf32>) outs(%e0 : tensor<4x5xf32>) {
  ^bb0(%x: f32, %m: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x5xf32>
  %e1 = tensor.empty() : tensor<4x5xf32>
  %logp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%shifted, %lse : tensor<4x5xf32>, tensor<4x1xf32>) outs(%e1 : tensor<4x5xf32>) {
  ^bb0(%x: f32, %s: f32, %o: f32):
    %d = arith.subf %x, %s : f32
    linalg.yield %d : f32
  } -> tensor<4x5xf32>
  %y = tensor.expand_shape %labels [[0, 1]] output_shape [4, 1] : tensor<4xi64> into tensor<4x1xi64>
  %eh = tensor.empty() : tensor<4x5xi1>
  %hot = linalg.generic {indexing_maps = [#row, #cls, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %ids : tensor<4x1xi64>, tensor<1x5xi64>) outs(%eh : tensor<4x5xi1>) {
  ^bb0(%l: i64, %k: i64, %o: i1):
    %eq = arith.cmpi eq, %l, %k : i64
    linalg.yield %eq : i1
  } -> tensor<4x5xi1>
  %e2 = tensor.empty() : tensor<4x5xf32>
  %picked = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%hot, %logp, %zeros : tensor<4x5xi1>, tensor<4x5xf32>, tensor<4x5xf32>) outs(%e2 : tensor<4x5xf32>) {
  ^bb0(%h: i1, %v: f32, %z: f32, %o: f32):
    %p = arith.select %h, %v, %z : f32
    linalg.yield %p : f32
  } -> tensor<4x5xf32>
  %es = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%es : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%picked : tensor<4x5xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %sum : tensor<4xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, 0)>
#cls = affine_map<(d0, d1) -> (0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>

// The selected value is a constant broadcast by an op that yields it from
// outside its body (as rematerialization leaves it): computed at the
// label, it is the constant.
// CHECK-LABEL: func.func @outer_yield
// CHECK: %[[C:.*]] = arith.constant -2.500000e-01 : f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK: arith.select %{{.*}}, %[[C]], %{{.*}} : f32
// CHECK-NOT: "reduction"
func.func @outer_yield(%labels: tensor<4x1xi64>) -> tensor<4xf32> {
  %ids = arith.constant dense<[[0, 1, 2, 3, 4]]> : tensor<1x5xi64>
  %zero = arith.constant 0.0 : f32
  %c = arith.constant -2.5e-1 : f32
  %eb = tensor.empty() : tensor<4x5xf32>
  %b = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]} outs(%eb : tensor<4x5xf32>) {
  ^bb0(%o: f32):
    linalg.yield %c : f32
  } -> tensor<4x5xf32>
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#row, #cls, #id, #out], iterator_types = ["parallel", "reduction"]}
      ins(%labels, %ids, %b : tensor<4x1xi64>, tensor<1x5xi64>, tensor<4x5xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%l: i64, %k: i64, %v: f32, %acc: f32):
    %eq = arith.cmpi eq, %l, %k : i64
    %p = arith.select %eq, %v, %zero : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, 0)>
#cls = affine_map<(d0, d1) -> (0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d0)>

// Sums that are not one-hot picks stay: the constant is not 0..C-1, the
// select keeps a non-zero value, the comparison is not equality, the label
// varies with the class, the summand is scaled after the select.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-5: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: tensor.extract
func.func @kept(%labels: tensor<4x1xi64>, %all: tensor<4x5xi64>, %x: tensor<4x5xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %ids = arith.constant dense<[[0, 1, 2, 3, 4]]> : tensor<1x5xi64>
  %perm = arith.constant dense<[[0, 2, 1, 3, 4]]> : tensor<1x5xi64>
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r0 = linalg.generic {indexing_maps = [#row, #cls, #id, #out], iterator_types = ["parallel", "reduction"]}
      ins(%labels, %perm, %x : tensor<4x1xi64>, tensor<1x5xi64>, tensor<4x5xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%l: i64, %c: i64, %v: f32, %acc: f32):
    %eq = arith.cmpi eq, %l, %c : i64
    %p = arith.select %eq, %v, %zero : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %r1 = linalg.generic {indexing_maps = [#row, #cls, #id, #out], iterator_types = ["parallel", "reduction"]}
      ins(%labels, %ids, %x : tensor<4x1xi64>, tensor<1x5xi64>, tensor<4x5xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%l: i64, %c: i64, %v: f32, %acc: f32):
    %eq = arith.cmpi eq, %l, %c : i64
    %p = arith.select %eq, %v, %one : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %r2 = linalg.generic {indexing_maps = [#row, #cls, #id, #out], iterator_types = ["parallel", "reduction"]}
      ins(%labels, %ids, %x : tensor<4x1xi64>, tensor<1x5xi64>, tensor<4x5xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%l: i64, %c: i64, %v: f32, %acc: f32):
    %eq = arith.cmpi sle, %l, %c : i64
    %p = arith.select %eq, %v, %zero : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #cls, #id, #out], iterator_types = ["parallel", "reduction"]}
      ins(%all, %ids, %x : tensor<4x5xi64>, tensor<1x5xi64>, tensor<4x5xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%l: i64, %c: i64, %v: f32, %acc: f32):
    %eq = arith.cmpi eq, %l, %c : i64
    %p = arith.select %eq, %v, %zero : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %r4 = linalg.generic {indexing_maps = [#row, #cls, #id, #out], iterator_types = ["parallel", "reduction"]}
      ins(%labels, %ids, %x : tensor<4x1xi64>, tensor<1x5xi64>, tensor<4x5xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%l: i64, %c: i64, %v: f32, %acc: f32):
    %eq = arith.cmpi eq, %l, %c : i64
    %p = arith.select %eq, %v, %zero : f32
    %m = arith.mulf %p, %v : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r0, %r1, %r2, %r3, %r4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#lab3 = affine_map<(d0, d1, d2) -> (d0, 0, 0)>
#cls3 = affine_map<(d0, d1, d2) -> (0, d1, 0)>
#out3 = affine_map<(d0, d1, d2) -> (d0)>

// Two reduction loops of more than one iteration: not a sum over classes.
// CHECK-LABEL: func.func @two_reductions
// CHECK: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK-NOT: tensor.extract
func.func @two_reductions(%labels: tensor<4x1x1xi64>, %x: tensor<4x5x2xf32>) -> tensor<4xf32> {
  %ids = arith.constant dense<[[[0], [1], [2], [3], [4]]]> : tensor<1x5x1xi64>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#lab3, #cls3, #id3, #out3], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%labels, %ids, %x : tensor<4x1x1xi64>, tensor<1x5x1xi64>, tensor<4x5x2xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%l: i64, %c: i64, %v: f32, %acc: f32):
    %eq = arith.cmpi eq, %l, %c : i64
    %p = arith.select %eq, %v, %zero : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
