//===- Passes.td - CPU target passes -----------------------*- tablegen -*-===//
#ifndef ZERO_OPT_TARGET_CPU_PASSES
#define ZERO_OPT_TARGET_CPU_PASSES

include "mlir/Pass/PassBase.td"

def ZeroCPUEntryPoint : Pass<"zero-cpu-entry-point", "ModuleOp"> {
  let summary = "Add the C ABI entry point of a compiled step";
  let description = [{
    Runs on bufferized IR where the step function takes only statically
    shaped, identity-layout memrefs (results already turned into out
    parameters). Adds `void <name>_entry(void **buffers)`: the runtime passes
    one pointer per argument, in order, and the entry rebuilds the memref
    descriptors and calls the step. This keeps the runtime independent of
    MLIR's memref calling convention.
  }];
  let options = [
    Option<"funcName", "func", "std::string", "\"main\"",
           "Function to expose">,
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ZeroCPUExpandStridedCopies
    : Pass<"zero-cpu-expand-strided-copies", "func::FuncOp"> {
  let summary = "Turn non-contiguous memref.copy into linalg.copy";
  let description = [{
    The LLVM lowering turns contiguous `memref.copy` into a memcpy but calls
    a library function (`memrefCopy`) for strided views. Compiled steps must
    not depend on MLIR's runner libraries, so strided copies become
    `linalg.copy`, which later lowers to loops.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

#endif
