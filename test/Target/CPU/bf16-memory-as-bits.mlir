// RUN: zero-opt %s --zero-cpu-bf16-memory-as-bits | FileCheck %s

// A rounded value stores its bits; a loaded value that is only widened
// (bitcast to i16) or copied loads i16.
// CHECK-LABEL: llvm.func @round_and_copy
// CHECK: %[[X:.*]] = llvm.load %arg0 {alignment = 2 : i64} : !llvm.ptr -> i16
// CHECK: %[[W:.*]] = llvm.zext %[[X]] : i16 to i32
// CHECK: %[[Y:.*]] = llvm.load %arg1 : !llvm.ptr -> i16
// CHECK: llvm.store %[[Y]], %arg2 : i16, !llvm.ptr
// CHECK: llvm.store %{{.*}}, %arg2 {alignment = 2 : i64} : i16, !llvm.ptr
// CHECK-NOT: bf16
llvm.func @round_and_copy(%a: !llvm.ptr, %b: !llvm.ptr, %c: !llvm.ptr, %r: i16) -> i32 {
  %x = llvm.load %a {alignment = 2 : i64} : !llvm.ptr -> bf16
  %xb = llvm.bitcast %x : bf16 to i16
  %w = llvm.zext %xb : i16 to i32
  %y = llvm.load %b : !llvm.ptr -> bf16
  llvm.store %y, %c : bf16, !llvm.ptr
  %rb = llvm.bitcast %r : i16 to bf16
  llvm.store %rb, %c {alignment = 2 : i64} : bf16, !llvm.ptr
  llvm.return %w : i32
}

// A bf16 value used otherwise stays bf16.
// CHECK-LABEL: llvm.func @other_use
// CHECK: llvm.load %arg0 : !llvm.ptr -> bf16
// CHECK: llvm.select
llvm.func @other_use(%a: !llvm.ptr, %c: i1, %d: bf16) -> bf16 {
  %x = llvm.load %a : !llvm.ptr -> bf16
  %s = llvm.select %c, %x, %d : i1, bf16
  llvm.return %s : bf16
}
