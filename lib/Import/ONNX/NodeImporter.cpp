//===- NodeImporter.cpp - shared helpers of the node lowerings -*- C++ -*-===//
#include "NodeImporter.h"
#include "ModelLoader.h"
#include "zero-opt/Export/ONNX/ModelFile.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace mlir;
using namespace mlir::zero::onnx_import;

Value GraphState::lookup(StringRef name) {
  if (Value v = values.lookup(name))
    return v;
  auto it = constants.find(name);
  if (it == constants.end())
    return {};
  OpBuilder b(entry, entry->begin());
  Value v =
      tosa::ConstOp::create(b, NameLoc::get(b.getStringAttr(name), fileLoc),
                            it->second.getType(), it->second);
  values[name] = v;
  return v;
}

Value NodeImporter::input(unsigned i) const {
  return state.lookup(node.input(i));
}

RankedTensorType NodeImporter::inputType(unsigned i) const {
  if (Value v = state.values.lookup(node.input(i)))
    return cast<RankedTensorType>(v.getType());
  return cast<RankedTensorType>(
      state.constants.lookup(node.input(i)).getType());
}

RankedTensorType NodeImporter::outputType(unsigned i) const {
  if (!hasOutput(i))
    return {};
  return state.types.lookup(node.output(i));
}

std::optional<DenseElementsAttr> NodeImporter::constInput(unsigned i) const {
  if (!hasInput(i))
    return std::nullopt;
  const std::string &name = node.input(i);
  auto it = state.constants.find(name);
  if (it != state.constants.end())
    return it->second;
  if (state.shapeData) {
    auto sd = state.shapeData->find(name);
    if (sd != state.shapeData->end()) {
      SmallVector<int64_t> vals;
      for (const auto &d : sd->second.dim()) {
        if (!d.has_dim_value())
          return std::nullopt;
        vals.push_back(d.dim_value());
      }
      auto ty = inputType(i);
      if (ty.getRank() > 1 || !ty.getElementType().isInteger(64))
        return std::nullopt;
      auto vt = RankedTensorType::get({(int64_t)vals.size()}, b.getI64Type());
      return DenseElementsAttr::get(vt, ArrayRef<int64_t>(vals))
          .reshape(RankedTensorType::get(ty.getShape(), b.getI64Type()));
    }
  }
  return std::nullopt;
}

FailureOr<SmallVector<int64_t>> NodeImporter::constInts(unsigned i,
                                                        StringRef what) {
  auto c = constInput(i);
  if (!c) {
    (void)unsupported(
        Twine("input '") + node.input(i) + "' (" + what +
        ") is computed at run time; zero-opt needs it at compile time: make "
        "it an initializer or a Constant, or compute it from static shapes "
        "only (fix symbolic input dims with --input-shape or --dim)");
    return failure();
  }
  SmallVector<int64_t> out;
  for (APInt v : c->getValues<APInt>())
    out.push_back(v.getSExtValue());
  return out;
}

void NodeImporter::setOutput(unsigned i, Value v) {
  if (hasOutput(i))
    state.values[node.output(i)] = v;
}

const onnx::AttributeProto *NodeImporter::attr(StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeImporter::intAttr(StringRef name, int64_t dflt) const {
  auto *a = attr(name);
  return a ? a->i() : dflt;
}

float NodeImporter::floatAttr(StringRef name, float dflt) const {
  auto *a = attr(name);
  return a ? a->f() : dflt;
}

Value GraphState::randomCounter(OpBuilder &b) {
  if (!rngCounter)
    rngCounter =
        entry->addArgument(RankedTensorType::get({2}, b.getI64Type()), fileLoc);
  return rngCounter;
}

double NodeImporter::decimalAttr(StringRef name, double dflt) const {
  auto *a = attr(name);
  if (!a)
    return dflt;
  // The shortest decimal that rounds to the float: what the exporter wrote.
  char buf[32];
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, (double)a->f());
    if ((float)std::strtod(buf, nullptr) == a->f())
      return std::strtod(buf, nullptr);
  }
  return a->f();
}

std::string NodeImporter::stringAttr(StringRef name, StringRef dflt) const {
  auto *a = attr(name);
  return a ? a->s() : dflt.str();
}

std::optional<SmallVector<int64_t>>
NodeImporter::intsAttr(StringRef name) const {
  auto *a = attr(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

InFlightDiagnostic NodeImporter::error() { return emitError(loc); }

LogicalResult NodeImporter::unsupported(const Twine &what) {
  emitError(loc) << "unsupported: " << node.op_type() << ": " << what;
  return failure();
}

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    error() << "axis " << axis << " is out of range for rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

Value NodeImporter::transpose(Value v, ArrayRef<int32_t> perm) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(perm))
    identity &= (int32_t)i == p;
  if (identity)
    return v;
  return TosaBuilder::transpose(v, perm);
}

Value NodeImporter::slice(Value x, ArrayRef<int64_t> offsets,
                          ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides) {
  if (llvm::all_of(strides, [](int64_t s) { return s == 1; }))
    return TosaBuilder::slice(x, offsets, sizes);
  return tensor::ExtractSliceOp::create(
      b, loc, withShape(x, sizes), x, ValueRange{}, ValueRange{}, ValueRange{},
      b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
      b.getDenseI64ArrayAttr(strides));
}

void NodeImporter::setConstantOutput(unsigned i, DenseElementsAttr attr) {
  if (hasOutput(i))
    state.constants[node.output(i)] = attr;
}

Value NodeImporter::zeroPoint(Type elt) {
  return *tosa::createZeroPointTensor(b, loc, elt, 0);
}

Value NodeImporter::expandRank(Value v, int64_t rank) {
  ArrayRef<int64_t> s = shapeOf(v);
  if ((int64_t)s.size() >= rank)
    return v;
  SmallVector<int64_t> shape(rank - s.size(), 1);
  shape.append(s.begin(), s.end());
  return reshape(v, shape);
}

FailureOr<SmallVector<int64_t>>
NodeImporter::broadcastShape(ArrayRef<int64_t> a, ArrayRef<int64_t> bs) {
  size_t rank = std::max(a.size(), bs.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - bs.size() ? 1 : bs[i - (rank - bs.size())];
    if (da != db && da != 1 && db != 1) {
      auto diag = error() << "shape mismatch: cannot broadcast [";
      llvm::interleaveComma(a, diag);
      diag << "] with [";
      llvm::interleaveComma(bs, diag);
      diag << "]";
      return failure();
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Value NodeImporter::broadcastTo(Value v, ArrayRef<int64_t> shape) {
  v = expandRank(v, shape.size());
  ArrayRef<int64_t> s = shapeOf(v);
  if (s == shape)
    return v;
  SmallVector<int64_t> multiples;
  for (auto [have, want] : llvm::zip(s, shape))
    multiples.push_back(have == want ? 1 : want);
  return tosa::TileOp::create(b, loc, withShape(v, shape), v,
                              constShape(multiples));
}

FailureOr<Value> NodeImporter::mul(Value lhs, Value rhs) {
  auto shape = broadcastShape(shapeOf(lhs), shapeOf(rhs));
  if (failed(shape))
    return failure();
  lhs = expandRank(lhs, shape->size());
  rhs = expandRank(rhs, shape->size());
  return TosaBuilder::mul(lhs, rhs);
}

FailureOr<Value> NodeImporter::div(Value lhs, Value rhs) {
  if (isa<FloatType>(eltOf(lhs))) {
    // TOSA has no float division; the lowering fuses x * (1/y).
    return mul(lhs, recip(rhs));
  }
  return binary<tosa::IntDivOp>(lhs, rhs);
}

Value NodeImporter::reduceMean(Value v, ArrayRef<int64_t> axes) {
  int64_t count = 1;
  for (int64_t a : axes)
    count *= shapeOf(v)[a];
  Value sum = reduce<tosa::ReduceSumOp>(v, axes);
  Value scale = scalar(eltOf(v), 1.0 / (double)count, shapeOf(sum).size());
  return *mul(sum, scale);
}

Value NodeImporter::matmul3d(Value a, Value bm) {
  ArrayRef<int64_t> as = shapeOf(a), bs = shapeOf(bm);
  auto ty =
      RankedTensorType::get({std::max(as[0], bs[0]), as[1], bs[2]}, eltOf(a));
  return tosa::MatMulOp::create(b, loc, ty, a, bm);
}

Type mlir::zero::onnx_import::convertElementType(MLIRContext *ctx, int32_t t) {
  Builder b(ctx);
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return {};
  }
}

/// Copies raw little-endian data or the typed repeated field into `bytes`.
template <typename T, typename Field>
static void copyTyped(const onnx::TensorProto &t, const Field &field, int64_t n,
                      std::vector<char> &bytes) {
  bytes.resize(n * sizeof(T));
  if (t.has_raw_data()) {
    std::memcpy(bytes.data(), t.raw_data().data(), bytes.size());
    return;
  }
  T *out = reinterpret_cast<T *>(bytes.data());
  for (int64_t i = 0; i < n; ++i)
    out[i] = static_cast<T>(field.Get(i));
}

FailureOr<DenseElementsAttr> mlir::zero::onnx_import::convertTensor(
    MLIRContext *ctx, const onnx::TensorProto &t, std::string &error) {
  Type elt = convertElementType(ctx, t.data_type());
  if (!elt) {
    error = "tensor '" + t.name() + "' has an unsupported element type (" +
            onnx::TensorProto::DataType_Name(
                (onnx::TensorProto::DataType)t.data_type()) +
            ")";
    return failure();
  }
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      error = "tensor '" + t.name() + "' has a negative dimension";
      return failure();
    }
    n *= d;
  }
  auto type = RankedTensorType::get(shape, elt);
  unsigned bits = elt.isInteger(1) ? 8 : elt.getIntOrFloatBitWidth();
  int64_t expected = n * (bits / 8);
  if (t.has_raw_data() && (int64_t)t.raw_data().size() != expected) {
    error = "tensor '" + t.name() + "' holds " +
            std::to_string(t.raw_data().size()) + " bytes of data but its " +
            "shape needs " + std::to_string(expected);
    return failure();
  }
  // Raw little-endian data goes into the attribute in one copy: from the
  // file that the loader checked (external data, mapped), or from the
  // message.
  std::unique_ptr<llvm::MemoryBuffer> file;
  std::optional<ArrayRef<char>> raw;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    ::zero::onnx_file::ExternalData ext;
    std::string badKey;
    if (!::zero::onnx_file::readExternalData(t, ext, badKey)) {
      error = "tensor '" + t.name() + "': invalid external data " + badKey;
      return failure();
    }
    auto buf =
        llvm::MemoryBuffer::getFileSlice(ext.location, expected, ext.offset);
    if (!buf) {
      error = "tensor '" + t.name() + "': cannot read its external data " +
              ext.location + ": " + buf.getError().message();
      return failure();
    }
    file = std::move(*buf);
    raw = ArrayRef<char>(file->getBufferStart(), file->getBufferSize());
  } else if (t.has_raw_data() && !elt.isInteger(1)) {
    raw = ArrayRef<char>(t.raw_data().data(), t.raw_data().size());
  }
  if (raw) {
    bool splat = false;
    if (!DenseElementsAttr::isValidRawBuffer(type, *raw, splat)) {
      error = "tensor '" + t.name() + "' has malformed data";
      return failure();
    }
    return DenseElementsAttr::getFromRawBuffer(type, *raw);
  }
  auto countOf = [&](int size) {
    if (!t.has_raw_data() && size != n) {
      error = "tensor '" + t.name() + "' holds " + std::to_string(size) +
              " values but its shape needs " + std::to_string(n);
      return false;
    }
    return true;
  };
  std::vector<char> bytes;
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (!countOf(t.float_data_size()))
      return failure();
    copyTyped<float>(t, t.float_data(), n, bytes);
    break;
  case onnx::TensorProto::DOUBLE:
    if (!countOf(t.double_data_size()))
      return failure();
    copyTyped<double>(t, t.double_data(), n, bytes);
    break;
  case onnx::TensorProto::INT64:
    if (!countOf(t.int64_data_size()))
      return failure();
    copyTyped<int64_t>(t, t.int64_data(), n, bytes);
    break;
  case onnx::TensorProto::INT32:
    if (!countOf(t.int32_data_size()))
      return failure();
    copyTyped<int32_t>(t, t.int32_data(), n, bytes);
    break;
  case onnx::TensorProto::INT16:
    if (!countOf(t.int32_data_size()))
      return failure();
    copyTyped<int16_t>(t, t.int32_data(), n, bytes);
    break;
  case onnx::TensorProto::INT8:
    if (!countOf(t.int32_data_size()))
      return failure();
    copyTyped<int8_t>(t, t.int32_data(), n, bytes);
    break;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    if (!countOf(t.int32_data_size()))
      return failure();
    copyTyped<uint16_t>(t, t.int32_data(), n, bytes);
    break;
  case onnx::TensorProto::BOOL: {
    if (!countOf(t.int32_data_size()))
      return failure();
    std::vector<char> raw;
    copyTyped<uint8_t>(t, t.int32_data(), n, raw);
    SmallVector<bool> vals;
    for (char c : raw)
      vals.push_back(c != 0);
    return DenseElementsAttr::get(type, ArrayRef<bool>(vals));
  }
  default:
    llvm_unreachable("checked by convertElementType");
  }
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, ArrayRef<char>(bytes),
                                           splat)) {
    error = "tensor '" + t.name() + "' has malformed data";
    return failure();
  }
  return DenseElementsAttr::getFromRawBuffer(type, ArrayRef<char>(bytes));
}
