//===- NodeImporter.h - lowering one ONNX node ------------------*- C++ -*-===//
//
// Each ONNX op has a lowering function that reads the node through a
// NodeImporter and produces TOSA (or tensor/linalg where TOSA lacks the
// op). The NodeImporter is a TosaBuilder; what it adds are ONNX's rules:
// numpy broadcasting (rank equalization), strided slices, zero points.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_LIB_IMPORT_ONNX_NODEIMPORTER_H
#define ZERO_OPT_LIB_IMPORT_ONNX_NODEIMPORTER_H

#include "zero-opt/Dialect/Zero/Utils/TosaBuilder.h"
#include "zero-opt/Import/ONNX/ONNXImporter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "onnx/onnx_pb.h"

#include <optional>

namespace mlir::zero::onnx_import {

/// Values shared by all node lowerings of one graph.
struct GraphState {
  llvm::StringMap<Value> values;
  /// Known contents of constant tensors: initializers kept as constants,
  /// Constant nodes and values computed by ONNX data propagation.
  llvm::StringMap<DenseElementsAttr> constants;
  /// Static types from shape inference, by value name.
  llvm::StringMap<RankedTensorType> types;
  const std::unordered_map<std::string, onnx::TensorShapeProto> *shapeData =
      nullptr;
  /// The opset the model was written for (lowerings of ops whose semantics
  /// changed without the version converter adapting them consult it).
  int64_t originalOpset = 0;
  /// Arguments that are buffers (running statistics), by name, and the
  /// values that replace them after the step, in the order set.
  llvm::StringSet<> buffers;
  std::vector<std::pair<std::string, Value>> bufferUpdates;
  /// BatchNormalization statistics over all data-parallel replicas.
  bool syncBatchNorm = false;
  /// Random numbers: the seed, the next node's stream, and the function
  /// argument holding (step, micro-batch of the global batch), added to
  /// the entry block when a node first draws.
  uint64_t randomSeed = 0;
  uint32_t randomStreams = 0;
  Value rngCounter;
  Value randomCounter(OpBuilder &b);
  /// The y of the first Gradient node: the loss of a training algorithm.
  std::string lossName;
  /// Where constants are materialized when a lowering needs them as values.
  Block *entry = nullptr;
  Location fileLoc;

  explicit GraphState(Location fileLoc) : fileLoc(fileLoc) {}
  /// The value named `name`, materializing a known constant on first use.
  Value lookup(StringRef name);
  bool isDefined(StringRef name) const {
    return values.count(name) || constants.count(name);
  }
};

class NodeImporter : public TosaBuilder {
public:
  NodeImporter(OpBuilder &b, Location loc, const onnx::NodeProto &node,
               GraphState &state)
      : TosaBuilder(b, loc), node(node), state(state) {}

  const onnx::NodeProto &node;
  GraphState &state;

  // --- Node access -------------------------------------------------------
  unsigned numInputs() const { return node.input_size(); }
  bool hasInput(unsigned i) const {
    return (int)i < node.input_size() && !node.input(i).empty();
  }
  bool hasOutput(unsigned i) const {
    return (int)i < node.output_size() && !node.output(i).empty();
  }
  Value input(unsigned i) const;
  RankedTensorType inputType(unsigned i) const;
  /// The inferred static type of output i; null when unknown.
  RankedTensorType outputType(unsigned i) const;
  /// Contents of input i when known at compile time.
  std::optional<DenseElementsAttr> constInput(unsigned i) const;
  /// Integer contents of input i, required to be known at compile time.
  FailureOr<SmallVector<int64_t>> constInts(unsigned i, StringRef what);
  void setOutput(unsigned i, Value v);
  /// Defines output i as a compile-time constant, materialized on use.
  void setConstantOutput(unsigned i, DenseElementsAttr attr);

  const onnx::AttributeProto *attr(StringRef name) const;
  int64_t intAttr(StringRef name, int64_t dflt) const;
  float floatAttr(StringRef name, float dflt) const;
  /// A float attribute as the decimal it was written as (1e-5, not
  /// 9.99999974e-6), for models computing in double precision.
  double decimalAttr(StringRef name, double dflt) const;
  std::string stringAttr(StringRef name, StringRef dflt) const;
  std::optional<SmallVector<int64_t>> intsAttr(StringRef name) const;

  /// Emits an error at the node and returns failure.
  InFlightDiagnostic error();
  /// Emits an "unsupported" error naming a feature zero-opt lacks.
  LogicalResult unsupported(const Twine &what);

  // --- Builders ----------------------------------------------------------
  // Those of TosaBuilder, except where ONNX's variants below hide them:
  // transpose, slice and mul.

  /// Normalizes a possibly negative axis; fails with an error if out of range.
  FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank);
  /// `v` itself for the identity permutation, which ONNX models spell out.
  Value transpose(Value v, ArrayRef<int32_t> perm);
  /// Static slice with positive strides: tosa.slice for unit strides,
  /// tensor.extract_slice otherwise; `v` itself when it covers everything.
  Value slice(Value v, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
              ArrayRef<int64_t> strides);
  Value zeroPoint(Type elt);
  /// Reshapes `v` to `rank` by prepending unit dimensions.
  Value expandRank(Value v, int64_t rank);
  /// Broadcast result type of two operands (numpy rules).
  FailureOr<SmallVector<int64_t>> broadcastShape(ArrayRef<int64_t> a,
                                                 ArrayRef<int64_t> b);
  /// Broadcasts `v` to `shape` (materialized with tosa.tile).
  Value broadcastTo(Value v, ArrayRef<int64_t> shape);

  /// Elementwise binary op with numpy broadcasting; `resultElt` defaults to
  /// the operand element type.
  template <typename OpTy>
  FailureOr<Value> binary(Value lhs, Value rhs, Type resultElt = {});
  /// TosaBuilder::mul after numpy broadcasting.
  FailureOr<Value> mul(Value lhs, Value rhs);
  FailureOr<Value> div(Value lhs, Value rhs);
  /// Sum over `axes` times 1/count.
  Value reduceMean(Value v, ArrayRef<int64_t> axes);
  /// Batched matmul of rank-3 f32/f16 tensors.
  Value matmul3d(Value a, Value b);

  static RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
    return RankedTensorType::get(
        shape, cast<RankedTensorType>(v.getType()).getElementType());
  }
  static Type eltOf(Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType();
  }
};

template <typename OpTy>
FailureOr<Value> NodeImporter::binary(Value lhs, Value rhs, Type resultElt) {
  auto shape = broadcastShape(shapeOf(lhs), shapeOf(rhs));
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  lhs = expandRank(lhs, rank);
  rhs = expandRank(rhs, rank);
  if (!resultElt)
    resultElt = eltOf(lhs);
  return OpTy::create(b, loc, RankedTensorType::get(*shape, resultElt), lhs,
                      rhs)
      .getResult();
}

/// A node lowering. Returns failure after emitting an error.
using LoweringFn = LogicalResult (*)(NodeImporter &);

/// Registration of the lowerings defined in each file.
void registerElementwiseLowerings(llvm::StringMap<LoweringFn> &map);
void registerTensorLowerings(llvm::StringMap<LoweringFn> &map);
void registerNNLowerings(llvm::StringMap<LoweringFn> &map);
/// Dropout (RandomOps.cpp).
void registerRandomLowerings(llvm::StringMap<LoweringFn> &map);
/// Ops of the ai.onnx.preview.training domain.
void registerTrainingLowerings(llvm::StringMap<LoweringFn> &map);

/// Evaluates the node at compile time when all its inputs are known and its
/// op is one that shape arithmetic uses; true when its outputs were set.
FailureOr<bool> foldConstantNode(NodeImporter &n);
/// The default-domain ops that foldConstantNode evaluates.
std::vector<std::string> foldableOps();

/// ONNX TensorProto element type to MLIR; null if unsupported.
Type convertElementType(MLIRContext *ctx, int32_t onnxType);
/// Reads an ONNX tensor into an attribute; fails with `error` set.
FailureOr<DenseElementsAttr>
convertTensor(MLIRContext *ctx, const onnx::TensorProto &t, std::string &error);

} // namespace mlir::zero::onnx_import

#endif
