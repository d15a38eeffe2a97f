// RUN: zero-opt %s --split-input-file --zero-gpu-online-softmax | FileCheck %s

// A softmax's statistics split into 4 interleaved partials per row (as
// zero-gpu-split-reductions leaves them): the partial maxima and sums
// become one pass over %x with two outputs; the maxima are combined as
// before, the sums rescaled to the row's maximum as they are combined, and
// the partial maxima freed after that. From -inf, the partial sums need no
// fill: a sum is 0 until its maximum is finite.
// CHECK-LABEL: func.func @split
// CHECK: %[[PM:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK-NEXT: %[[PS:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[PM]]
// CHECK-NEXT: linalg.generic {{.*}} ins(%arg0 : memref<2x2x4xf32>) outs(%[[PM]], %[[PS]] : memref<2x4xf32>, memref<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT: %[[V:.*]] = arith.mulf %[[X]]
// CHECK-NEXT: %[[M2:.*]] = arith.maximumf %[[V]], %[[M]]
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[V]], %[[M2]]
// CHECK-NEXT: %[[T:.*]] = math.exp %[[D]]
// CHECK-NEXT: %[[D2:.*]] = arith.subf %[[M]], %[[M2]]
// CHECK-NEXT: %[[E2:.*]] = math.exp %[[D2]]
// CHECK-NEXT: %[[NI:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[EMPTY:.*]] = arith.cmpf oeq, %[[M]], %[[NI]]
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[SE:.*]] = arith.mulf %[[S]], %[[E2]]
// CHECK-NEXT: %[[R:.*]] = arith.select %[[EMPTY]], %[[Z]], %[[SE]]
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[R]], %[[T]]
// CHECK-NEXT: %[[NI2:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[NONE:.*]] = arith.cmpf oeq, %[[M2]], %[[NI2]]
// CHECK-NEXT: %[[Z2:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[S3:.*]] = arith.select %[[NONE]], %[[Z2]], %[[S2]]
// CHECK-NEXT: linalg.yield %[[M2]], %[[S3]]
// CHECK: %[[MX:.*]] = memref.alloc() : memref<2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[PM]] : memref<2x4xf32>) outs(%[[MX]]
// CHECK-NOT: memref.dealloc %[[PM]]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SM:.*]] : memref<2xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[PS]], %[[PM]], %[[MX]] : memref<2x4xf32>, memref<2x4xf32>, memref<2xf32>) outs(%[[SM]]
// CHECK-NEXT: ^bb0(%[[SP:.*]]: f32, %[[MP:.*]]: f32, %[[ROW:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT: %[[CD:.*]] = arith.subf %[[MP]], %[[ROW]]
// CHECK-NEXT: %[[CE:.*]] = math.exp %[[CD]]
// CHECK-NEXT: %[[CI:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[CEMPTY:.*]] = arith.cmpf oeq, %[[MP]], %[[CI]]
// CHECK-NEXT: %[[CZ:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[CS:.*]] = arith.mulf %[[SP]], %[[CE]]
// CHECK-NEXT: %[[CR:.*]] = arith.select %[[CEMPTY]], %[[CZ]], %[[CS]]
// CHECK-NEXT: %[[CA:.*]] = arith.addf %[[CR]], %[[O]]
// CHECK-NEXT: linalg.yield %[[CA]]
// CHECK: memref.dealloc %[[PM]]
// CHECK-NOT: math.exp
// CHECK: call @use(%[[MX]], %[[SM]])

#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#p3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#r3 = affine_map<(d0, d1, d2) -> (d0)>
#i2 = affine_map<(d0, d1) -> (d0, d1)>
#o2 = affine_map<(d0, d1) -> (d0)>

func.func private @use(memref<2xf32>, memref<2xf32>)

func.func @split(%x: memref<2x2x4xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %low = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %c = arith.constant 0.5 : f32
  %pm = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%ninf : f32) outs(%pm : memref<2x4xf32>)
  linalg.generic {indexing_maps = [#x3, #p3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<2x2x4xf32>) outs(%pm : memref<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %c : f32
    %m = arith.maximumf %s, %o : f32
    linalg.yield %m : f32
  }
  %mx = memref.alloc() : memref<2xf32>
  linalg.fill ins(%low : f32) outs(%mx : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%pm : memref<2x4xf32>) outs(%mx : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  memref.dealloc %pm : memref<2x4xf32>
  %ps = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%zero : f32) outs(%ps : memref<2x4xf32>)
  linalg.generic {indexing_maps = [#x3, #r3, #p3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x, %mx : memref<2x2x4xf32>, memref<2xf32>) outs(%ps : memref<2x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.mulf %a, %c : f32
    %d = arith.subf %s, %m : f32
    %e = math.exp %d : f32
    %t = arith.addf %e, %o : f32
    linalg.yield %t : f32
  }
  %sm = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sm : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%ps : memref<2x4xf32>) outs(%sm : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  }
  memref.dealloc %ps : memref<2x4xf32>
  call @use(%mx, %sm) : (memref<2xf32>, memref<2xf32>) -> ()
  return
}

// -----

// A cross-entropy's rows of 11: 2 partials of 4 lanes over the first 8
// and a tail of 3 the split folds into the maximum after its combine and
// into the sum after its own; the maximum read through a [2, 1] view. The
// partials' maximum and sum become one pass over the 8; the combine
// rescales each partial sum to the row's maximum, tail included, and the
// tail's sum reads that maximum as before.
// CHECK-LABEL: func.func @split_tail
// CHECK: linalg.generic {{.*}} ins(%[[X:.*]] : memref<2x2x4xf32, strided<[11, 4, 1]>>) outs(%[[PM:.*]], %[[PS:.*]] : memref<2x4xf32>, memref<2x4xf32>)
// CHECK-NOT: ins(%[[X]]
// CHECK: linalg.generic {{.*}} ins(%[[PM]] : memref<2x4xf32>) outs(%[[MX:.*]] : memref<2xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[TAIL:.*]] : memref<2x3xf32, strided<[11, 1], offset: 8>>) outs(%[[MX]] : memref<2xf32>)
// CHECK-NOT: ins(%[[X]]
// CHECK: linalg.generic {{.*}} ins(%[[PS]], %[[PM]], %[[MX]] : memref<2x4xf32>, memref<2x4xf32>, memref<2xf32>) outs(%[[SM:.*]] : memref<2xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[TAIL]], %[[MX1:.*]] : memref<2x3xf32, strided<[11, 1], offset: 8>>, memref<2x1xf32>) outs(%[[SM]] : memref<2xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.subf
// CHECK-NEXT: math.exp
// CHECK: call @use(%[[MX]], %[[SM]])

#t3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tp3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#tm3 = affine_map<(d0, d1, d2) -> (d0, 0)>
#ti2 = affine_map<(d0, d1) -> (d0, d1)>
#tm2 = affine_map<(d0, d1) -> (d0, 0)>
#to2 = affine_map<(d0, d1) -> (d0)>

func.func private @use(memref<2xf32>, memref<2xf32>)

func.func @split_tail(%x: memref<2x11xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %main = memref.subview %x[0, 0] [2, 8] [1, 1] : memref<2x11xf32> to memref<2x8xf32, strided<[11, 1]>>
  %parts = memref.expand_shape %main [[0], [1, 2]] output_shape [2, 2, 4] : memref<2x8xf32, strided<[11, 1]>> into memref<2x2x4xf32, strided<[11, 4, 1]>>
  %tail = memref.subview %x[0, 8] [2, 3] [1, 1] : memref<2x11xf32> to memref<2x3xf32, strided<[11, 1], offset: 8>>
  %pm = memref.alloc() : memref<2x4xf32>
  %ps = memref.alloc() : memref<2x4xf32>
  %mx = memref.alloc() : memref<2xf32>
  %sm = memref.alloc() : memref<2xf32>
  linalg.fill ins(%ninf : f32) outs(%pm : memref<2x4xf32>)
  linalg.generic {indexing_maps = [#t3, #tp3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%parts : memref<2x2x4xf32, strided<[11, 4, 1]>>) outs(%pm : memref<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  linalg.fill ins(%ninf : f32) outs(%mx : memref<2xf32>)
  linalg.generic {indexing_maps = [#ti2, #to2], iterator_types = ["parallel", "reduction"]}
      ins(%pm : memref<2x4xf32>) outs(%mx : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#ti2, #to2], iterator_types = ["parallel", "reduction"]}
      ins(%tail : memref<2x3xf32, strided<[11, 1], offset: 8>>) outs(%mx : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  %mx1 = memref.expand_shape %mx [[0, 1]] output_shape [2, 1] : memref<2xf32> into memref<2x1xf32>
  linalg.fill ins(%zero : f32) outs(%ps : memref<2x4xf32>)
  linalg.generic {indexing_maps = [#t3, #tm3, #tp3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%parts, %mx1 : memref<2x2x4xf32, strided<[11, 4, 1]>>, memref<2x1xf32>) outs(%ps : memref<2x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %t = arith.addf %e, %o : f32
    linalg.yield %t : f32
  }
  linalg.fill ins(%zero : f32) outs(%sm : memref<2xf32>)
  linalg.generic {indexing_maps = [#ti2, #to2], iterator_types = ["parallel", "reduction"]}
      ins(%ps : memref<2x4xf32>) outs(%sm : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#ti2, #tm2, #to2], iterator_types = ["parallel", "reduction"]}
      ins(%tail, %mx1 : memref<2x3xf32, strided<[11, 1], offset: 8>>, memref<2x1xf32>) outs(%sm : memref<2xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %t = arith.addf %e, %o : f32
    linalg.yield %t : f32
  }
  memref.dealloc %pm : memref<2x4xf32>
  memref.dealloc %ps : memref<2x4xf32>
  call @use(%mx, %sm) : (memref<2xf32>, memref<2xf32>) -> ()
  return
}

// -----

// Rows not split: one reduction with the row maximum and sum as outputs;
// the maximum starts from the lowest finite value, so the sum from 0.
// CHECK-LABEL: func.func @rows
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[MX:.*]] : memref<2xf32>)
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.0
// CHECK-NEXT: linalg.fill ins(%[[Z]] : f32) outs(%[[SM:.*]] : memref<2xf32>)
// CHECK-NEXT: linalg.generic {{.*}} ins(%arg0 : memref<2x8xf32>) outs(%[[MX]], %[[SM]] : memref<2xf32>, memref<2xf32>)
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: call @use(%[[MX]], %[[SM]])

#i2 = affine_map<(d0, d1) -> (d0, d1)>
#o2 = affine_map<(d0, d1) -> (d0)>

func.func private @use(memref<2xf32>, memref<2xf32>)

func.func @rows(%x: memref<2x8xf32>) {
  %low = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %mx = memref.alloc() : memref<2xf32>
  linalg.fill ins(%low : f32) outs(%mx : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x8xf32>) outs(%mx : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  %sm = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sm : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mx : memref<2x8xf32>, memref<2xf32>) outs(%sm : memref<2xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %t = arith.addf %e, %o : f32
    linalg.yield %t : f32
  }
  call @use(%mx, %sm) : (memref<2xf32>, memref<2xf32>) -> ()
  return
}

// -----

// Left alone: the sum's exponent is not the value the maximum is of (the
// maximum of x, exp(2x - M)), or the input is written between the two.
// CHECK-LABEL: func.func @other_value
// CHECK-COUNT-2: linalg.generic
// CHECK-LABEL: func.func @written_between
// CHECK-COUNT-3: linalg.generic

#i2 = affine_map<(d0, d1) -> (d0, d1)>
#o2 = affine_map<(d0, d1) -> (d0)>

func.func private @use(memref<2xf32>, memref<2xf32>)

func.func @other_value(%x: memref<2x8xf32>) {
  %low = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %mx = memref.alloc() : memref<2xf32>
  linalg.fill ins(%low : f32) outs(%mx : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x8xf32>) outs(%mx : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  %sm = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sm : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mx : memref<2x8xf32>, memref<2xf32>) outs(%sm : memref<2xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %a2 = arith.addf %a, %a : f32
    %d = arith.subf %a2, %m : f32
    %e = math.exp %d : f32
    %t = arith.addf %e, %o : f32
    linalg.yield %t : f32
  }
  call @use(%mx, %sm) : (memref<2xf32>, memref<2xf32>) -> ()
  return
}

func.func @written_between(%x: memref<2x8xf32>, %y: memref<2x8xf32>) {
  %low = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %mx = memref.alloc() : memref<2xf32>
  linalg.fill ins(%low : f32) outs(%mx : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x8xf32>) outs(%mx : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#i2, #i2], iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<2x8xf32>) outs(%x : memref<2x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  %sm = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sm : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mx : memref<2x8xf32>, memref<2xf32>) outs(%sm : memref<2xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %t = arith.addf %e, %o : f32
    linalg.yield %t : f32
  }
  call @use(%mx, %sm) : (memref<2xf32>, memref<2xf32>) -> ()
  return
}

// -----

// Left alone: the sum's buffer is read between the two (it would hold the
// sum there already).
// CHECK-LABEL: func.func @sum_read_between
// CHECK: linalg.generic {{.*}} outs(%[[MX:.*]] : memref<2xf32>)
// CHECK: linalg.copy ins(%arg1
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[MX]] : memref<2x8xf32>, memref<2xf32>) outs(%arg1 : memref<2xf32>)

#i2 = affine_map<(d0, d1) -> (d0, d1)>
#o2 = affine_map<(d0, d1) -> (d0)>

func.func private @use(memref<2xf32>, memref<2xf32>)

func.func @sum_read_between(%x: memref<2x8xf32>, %sm: memref<2xf32>, %y: memref<2xf32>) {
  %low = arith.constant -3.40282347E+38 : f32
  %zero = arith.constant 0.0 : f32
  %mx = memref.alloc() : memref<2xf32>
  linalg.fill ins(%low : f32) outs(%mx : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x8xf32>) outs(%mx : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  linalg.copy ins(%sm : memref<2xf32>) outs(%y : memref<2xf32>)
  linalg.fill ins(%zero : f32) outs(%sm : memref<2xf32>)
  linalg.generic {indexing_maps = [#i2, #o2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mx : memref<2x8xf32>, memref<2xf32>) outs(%sm : memref<2xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    %t = arith.addf %e, %o : f32
    linalg.yield %t : f32
  }
  call @use(%mx, %sm) : (memref<2xf32>, memref<2xf32>) -> ()
  return
}
