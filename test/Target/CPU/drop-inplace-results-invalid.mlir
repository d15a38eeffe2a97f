// RUN: zero-opt %s -split-input-file -verify-diagnostics --zero-cpu-drop-inplace-results

// An index past the results is a malformed list: one error, no crash.
// expected-error @below {{zero.inplace_results lists result 3 of a function with 1 results}}
func.func @step(%a: memref<4xf32>) -> (memref<4xf32> {zero.updates = 0 : i64})
    attributes {zero.entry, zero.inplace_results = array<i64: 3>} {
  return %a : memref<4xf32>
}
