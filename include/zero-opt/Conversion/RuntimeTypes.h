//===- RuntimeTypes.h - MLIR element types as the runtime's -----*- C++ -*-===//
//
// The one map from MLIR element types to the runtime's (zero::rt::DType):
// buffers in plan.json, arrays in params.npz, and, through
// runtimeDataType, the element codes of collectives.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_CONVERSION_RUNTIMETYPES_H
#define ZERO_OPT_CONVERSION_RUNTIMETYPES_H

#include "zero-rt/Npz.h"

#include "mlir/IR/Types.h"

#include <optional>

namespace mlir::zero {

/// The runtime's element type of an MLIR element type; nullopt when the
/// runtime has none.
std::optional<::zero::rt::DType> runtimeDType(Type elementType);

} // namespace mlir::zero

#endif
