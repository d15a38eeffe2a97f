//===- ZeroOps.td - zero dialect attributes and ops --------*- tablegen -*-===//
#ifndef ZERO_OPS_TD
#define ZERO_OPS_TD

include "zero-opt/Dialect/Zero/IR/ZeroDialect.td"
include "mlir/IR/EnumAttr.td"

def Zero_RoleInput : I32EnumAttrCase<"input", 0>;
def Zero_RoleParameter : I32EnumAttrCase<"parameter", 1>;
def Zero_RoleGradient : I32EnumAttrCase<"gradient", 2>;
def Zero_RoleOptimizerState : I32EnumAttrCase<"optimizer_state", 3>;
def Zero_RoleMasterWeight : I32EnumAttrCase<"master_weight", 4>;
def Zero_RoleOutput : I32EnumAttrCase<"output", 5>;

def Zero_Role : I32EnumAttr<"Role", "role of a value in the training step",
    [Zero_RoleInput, Zero_RoleParameter, Zero_RoleGradient,
     Zero_RoleOptimizerState, Zero_RoleMasterWeight, Zero_RoleOutput]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::zero";
}

def Zero_RoleAttr : EnumAttr<Zero_Dialect, Zero_Role, "role"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ZERO_OPS_TD
