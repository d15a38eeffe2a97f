//===- ZeroDialect.td - zero dialect definition ------------*- tablegen -*-===//
#ifndef ZERO_DIALECT_TD
#define ZERO_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Zero_Dialect : Dialect {
  let name = "zero";
  let summary = "Roles, sharding and collectives of a ZeRO training step";
  let description = [{
    The `zero` dialect holds only what upstream dialects lack: the role a
    value plays in a training step (parameter, gradient, optimizer state),
    how it is sharded across data-parallel ranks, optimizer updates and the
    collectives that move shards. Compute stays in TOSA, linalg, tensor and
    arith.
  }];
  let cppNamespace = "::mlir::zero";
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

class Zero_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Zero_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class Zero_Op<string mnemonic, list<Trait> traits = []>
    : Op<Zero_Dialect, mnemonic, traits>;

#endif // ZERO_DIALECT_TD
