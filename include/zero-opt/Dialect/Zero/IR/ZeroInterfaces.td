//===- ZeroInterfaces.td - zero dialect interfaces ---------*- tablegen -*-===//
#ifndef ZERO_INTERFACES_TD
#define ZERO_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Zero_AutoDiffOpInterface : OpInterface<"AutoDiffOpInterface"> {
  let cppNamespace = "::mlir::zero";
  let description = [{
    Reverse-mode derivative rule of an op. Rules are attached to upstream
    ops (TOSA, tensor, linalg) as external models, so a dialect outside
    zero-opt can add its own without touching the autodiff pass.
  }];
  let methods = [
    InterfaceMethod<[{
        Given the adjoints of the op's results (null where a result has
        none, meaning zero), appends one adjoint per operand to
        `operandAdjoints`: null for operands that are not `needed` or have
        no derivative. New ops are created with `b` at its insertion point.
      }],
      "::llvm::LogicalResult", "buildAdjoints",
      (ins "::mlir::OpBuilder &":$b,
           "::llvm::ArrayRef<::mlir::Value>":$resultAdjoints,
           "::llvm::ArrayRef<bool>":$needed,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandAdjoints)>,
  ];
}

def Zero_OptimizerOpInterface : OpInterface<"OptimizerOpInterface"> {
  let cppNamespace = "::mlir::zero";
  let description = [{
    An optimizer update of one parameter. Partitioning passes use it to
    find the parameter, its gradient and its state, which are sharded
    alike.
  }];
  let methods = [
    InterfaceMethod<"The parameter before the update.", "::mlir::Value",
                    "getParameter">,
    InterfaceMethod<"Its gradient.", "::mlir::Value", "getGradient">,
    InterfaceMethod<"State tensors read by the update, in order.",
                    "::mlir::OperandRange", "getStateOperands">,
    InterfaceMethod<"The updated parameter.", "::mlir::Value",
                    "getUpdatedParameter">,
    InterfaceMethod<"State tensors after the update, in the same order.",
                    "::mlir::ResultRange", "getUpdatedStates">,
  ];
}

#endif
