//===- ModelLoader.cpp - read, validate and shape-infer ONNX ---*- C++ -*-===//
#include "ModelLoader.h"

#include "zero-opt/Export/ONNX/ModelFile.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fstream>
#include <set>
#include <sstream>

using namespace mlir::zero;
using namespace mlir::zero::onnx_import;

static bool isDefaultDomain(const std::string &d) {
  return d.empty() || d == "ai.onnx";
}

static std::string dimsToString(const onnx::TensorShapeProto &shape) {
  std::string s;
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (i)
      s += "x";
    const auto &d = shape.dim(i);
    s += d.has_dim_value() ? std::to_string(d.dim_value())
                           : (d.has_dim_param() ? d.dim_param() : "?");
  }
  return s;
}

/// Applies --input-shape and --dim to the graph inputs. Symbolic or missing
/// dimensions that stay unknown are reported later, with the flag to use.
/// `later` names inputs that --input-shape may name though `graph` lacks
/// them (a training algorithm's).
static bool fixInputShapes(onnx::GraphProto &graph,
                           const ONNXImportOptions &options, std::string &error,
                           const std::set<std::string> &later = {}) {
  std::set<std::string> inits;
  for (const auto &t : graph.initializer())
    inits.insert(t.name());
  std::set<std::string> seen;
  bool resized = false;
  for (auto &vi : *graph.mutable_input()) {
    if (inits.count(vi.name()) || !vi.type().has_tensor_type())
      continue;
    auto *tt = vi.mutable_type()->mutable_tensor_type();
    auto it = options.inputShapes.find(vi.name());
    if (it != options.inputShapes.end()) {
      seen.insert(vi.name());
      auto *shape = tt->mutable_shape();
      if (tt->has_shape() && shape->dim_size() != (int)it->second.size()) {
        error = "--input-shape " + vi.name() + ": the model's input has rank " +
                std::to_string(shape->dim_size()) + " (" +
                dimsToString(*shape) + ") but " +
                std::to_string(it->second.size()) + " dimensions were given";
        return false;
      }
      for (int i = 0; i < shape->dim_size(); ++i)
        resized |= shape->dim(i).has_dim_value() &&
                   shape->dim(i).dim_value() != it->second[i];
      shape->clear_dim();
      for (int64_t d : it->second)
        shape->add_dim()->set_dim_value(d);
      continue;
    }
    if (!tt->has_shape())
      continue;
    if (options.batchSize > 0 && tt->shape().dim_size() > 0 &&
        !tt->shape().dim(0).has_dim_value() &&
        !(tt->shape().dim(0).has_dim_param() &&
          options.dims.count(tt->shape().dim(0).dim_param())))
      tt->mutable_shape()->mutable_dim(0)->set_dim_value(options.batchSize);
    for (auto &d : *tt->mutable_shape()->mutable_dim()) {
      if (!d.has_dim_param())
        continue;
      auto dit = options.dims.find(d.dim_param());
      if (dit != options.dims.end())
        d.set_dim_value(dit->second);
    }
  }
  for (const auto &kv : options.inputShapes)
    if (!seen.count(kv.first) && !later.count(kv.first)) {
      error = "--input-shape names '" + kv.first +
              "', which is not an input of the graph";
      return false;
    }
  // Shapes the exporter recorded for the old input shapes are stale: shape
  // inference derives them afresh.
  if (resized) {
    graph.clear_value_info();
    for (auto &vi : *graph.mutable_output())
      if (vi.type().has_tensor_type())
        vi.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  return true;
}

/// libonnx messages span lines; diagnostics are one line.
static std::string oneLine(const std::string &msg) {
  std::string out;
  bool space = false;
  for (char c : msg) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space)
      out += ' ';
    space = false;
    out += c;
  }
  return out;
}

/// Unknown default-domain ops, reported by node before the checker's more
/// generic message.
static bool checkKnownOps(const onnx::GraphProto &g, int64_t opset,
                          std::string &error) {
  for (int i = 0; i < g.node_size(); ++i) {
    const auto &node = g.node(i);
    if (!isDefaultDomain(node.domain()))
      continue;
    if (onnx::OpSchemaRegistry::Schema(node.op_type(), (int)opset, "") ==
        nullptr) {
      std::string name = node.name().empty()
                             ? node.op_type() + "_" + std::to_string(i)
                             : node.name();
      error = "node '" + name + "': unknown op '" + node.op_type() +
              "': it is not an ONNX operator at opset " + std::to_string(opset);
      return false;
    }
  }
  return true;
}

/// What onnx::checker leaves out but libonnx's converter relies on: every
/// graph output must name a defined value.
static bool checkGraphOutputs(const onnx::GraphProto &g, std::string &error) {
  std::set<std::string> defined;
  for (const auto &vi : g.input())
    defined.insert(vi.name());
  for (const auto &t : g.initializer())
    defined.insert(t.name());
  for (const auto &node : g.node())
    for (const auto &o : node.output())
      defined.insert(o);
  for (const auto &vi : g.output())
    if (!defined.count(vi.name())) {
      error = "the model is not valid ONNX: graph output '" + vi.name() +
              "' is not produced by any node";
      return false;
    }
  return true;
}

/// The training graph of a model with a TrainingInfoProto: the inference
/// graph's lists followed by the algorithm's, as the ONNX spec defines the
/// combination, with shapes inferred over the whole.
static bool loadTrainingInfo(const onnx::ModelProto &model,
                             const ONNXImportOptions &options, LoadedModel &out,
                             std::string &error) {
  if (model.training_info_size() == 0)
    return true;
  if (model.training_info_size() > 1) {
    error = "unsupported: more than one TrainingInfoProto";
    return false;
  }
  const onnx::TrainingInfoProto &ti = model.training_info(0);
  if (ti.initialization().node_size() || ti.initialization_binding_size()) {
    error = "unsupported: TrainingInfoProto.initialization; give the "
            "initial values as initializers instead";
    return false;
  }
  if (ti.update_binding_size() == 0) {
    error = "the TrainingInfoProto binds no update (update_binding is "
            "empty), so training would change nothing";
    return false;
  }
  onnx::ModelProto combined = model;
  combined.clear_training_info();
  onnx::GraphProto *g = combined.mutable_graph();
  const onnx::GraphProto &alg = ti.algorithm();
  for (const auto &v : alg.input())
    *g->add_input() = v;
  for (const auto &t : alg.initializer())
    *g->add_initializer() = t;
  for (const auto &n : alg.node())
    *g->add_node() = n;
  // Algorithm outputs that update_binding takes are written into their
  // initializers; the others are results of the step.
  std::set<std::string> bound;
  for (const auto &kv : ti.update_binding())
    bound.insert(kv.value());
  for (const auto &v : alg.output())
    *(bound.count(v.name()) ? g->add_value_info() : g->add_output()) = v;
  for (const auto &v : alg.value_info())
    *g->add_value_info() = v;
  try {
    onnx::checker::check_model(combined);
    if (!fixInputShapes(*g, options, error))
      return false;
    onnx::ShapeInferenceOptions opts(true, 1, true);
    onnx::shape_inference::InferShapes(
        combined, onnx::OpSchemaRegistry::Instance(), opts, &out.shapeData);
  } catch (const std::exception &e) {
    error = "the training algorithm is not valid: " + oneLine(e.what());
    return false;
  }
  out.trainingGraph = combined.graph();
  for (const auto &kv : ti.update_binding())
    out.updateBinding.push_back({kv.key(), kv.value()});
  return true;
}

/// Bytes per element of an initializer's data type, 0 if not supported.
static int64_t elementBytes(int32_t type) {
  switch (type) {
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return 8;
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return 4;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return 2;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    return 1;
  default:
    return 0;
  }
}

static bool isFloatType(int32_t type) {
  return type == onnx::TensorProto::FLOAT ||
         type == onnx::TensorProto::DOUBLE ||
         type == onnx::TensorProto::FLOAT16 ||
         type == onnx::TensorProto::BFLOAT16;
}

/// Checks initializers kept in files beside the model (ONNX external data,
/// how models past protobuf's 2 GB limit are stored). With `keepWeights`,
/// floating-point ones stay external, located by absolute path, and the
/// importer maps each into its attribute; with `parameterShapesOnly`, those
/// that will be trained stay external and only their shape is read. The
/// others are read into raw_data now.
static bool loadExternalData(onnx::GraphProto &g, llvm::StringRef modelDir,
                             const ONNXImportOptions &options, bool keepWeights,
                             std::string &error) {
  std::set<std::string> frozen(options.freeze.begin(), options.freeze.end());
  for (onnx::TensorProto &t : *g.mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL)
      continue;
    std::string what = "initializer '" + t.name() + "': external data ";
    ::zero::onnx_file::ExternalData ext;
    std::string badKey;
    if (!::zero::onnx_file::readExternalData(t, ext, badKey)) {
      error = what + "has an invalid " + badKey;
      return false;
    }
    const std::string &location = ext.location;
    int64_t offset = ext.offset, length = ext.length;
    if (location.empty()) {
      error = what + "names no location";
      return false;
    }
    llvm::StringRef loc(location);
    if (llvm::sys::path::is_absolute(loc) ||
        llvm::any_of(llvm::make_range(llvm::sys::path::begin(loc),
                                      llvm::sys::path::end(loc)),
                     [](llvm::StringRef c) { return c == ".."; })) {
      error = what + "location '" + location +
              "' must be a relative path inside the model's folder";
      return false;
    }
    int64_t numel = 1;
    for (int64_t d : t.dims())
      numel *= d;
    int64_t expected = numel * elementBytes(t.data_type());
    if (!elementBytes(t.data_type()) || numel < 0) {
      error = what + "has an unsupported type or shape";
      return false;
    }
    if (length >= 0 && length != expected) {
      error = what + "has length " + std::to_string(length) +
              " but its shape needs " + std::to_string(expected) + " bytes";
      return false;
    }
    llvm::SmallString<256> file(modelDir);
    llvm::sys::path::append(file, location);
    uint64_t size = 0;
    if (std::error_code ec = llvm::sys::fs::file_size(file, size)) {
      error = what + "file " + std::string(file) + ": " + ec.message();
      return false;
    }
    if ((uint64_t)(offset + expected) > size) {
      error = what + "file " + std::string(file) + " holds " +
              std::to_string(size) + " bytes; the tensor needs bytes " +
              std::to_string(offset) + " to " +
              std::to_string(offset + expected);
      return false;
    }
    // Weights stay in their files until the importer maps each into its
    // attribute (or, for a memory plan, reads only their shapes): checking
    // and inferring shapes never copies them. The checker resolves
    // locations from the working directory.
    if (isFloatType(t.data_type()) &&
        (options.parameterShapesOnly ? !frozen.count(t.name()) : keepWeights)) {
      for (auto &kv : *t.mutable_external_data())
        if (kv.key() == "location")
          kv.set_value(std::string(file));
      continue;
    }
    auto buf = llvm::MemoryBuffer::getFileSlice(file, expected, offset);
    if (!buf) {
      error = what + "cannot read " + std::string(file) + ": " +
              buf.getError().message();
      return false;
    }
    t.set_raw_data((*buf)->getBufferStart(), (*buf)->getBufferSize());
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
  return true;
}

bool mlir::zero::onnx_import::loadModel(const std::string &path,
                                        const ONNXImportOptions &options,
                                        LoadedModel &out, std::string &error) {
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      error = "cannot open file";
      return false;
    }
    std::stringstream buf;
    buf << in.rdbuf();
    std::string content = buf.str();
    onnx::ModelProto &model = out.model;
    if (::zero::onnx_file::looksLikeText(content)) {
      onnx::OnnxParser parser(content.c_str());
      auto status = parser.Parse(model);
      if (!status.IsOK()) {
        error = "invalid ONNX text syntax: " + status.ErrorMessage();
        return false;
      }
    } else if (content.empty() || !model.ParseFromString(content)) {
      error = "not a valid ONNX model: the protobuf is truncated or "
              "malformed";
      return false;
    }
    if (!model.has_graph() || model.ir_version() <= 0) {
      error = "not a valid ONNX model: it has no graph or no ir_version";
      return false;
    }
    // Before conversion and shape fixing: a compile at another batch size
    // or opset keeps the model's identity.
    out.structureHash = ::zero::onnx_file::structureHash(model);

    int64_t opset = -1;
    for (const auto &imp : model.opset_import())
      if (isDefaultDomain(imp.domain()))
        opset = imp.version();
    if (opset < 0) {
      // Only models without default-domain nodes (e.g. a lone optimizer
      // op) may leave the default opset out.
      for (const auto &node : model.graph().node())
        if (isDefaultDomain(node.domain())) {
          error = "the model imports no default-domain (ai.onnx) opset but "
                  "uses its op " +
                  node.op_type();
          return false;
        }
      opset = kTargetOpset;
    }
    out.originalOpset = opset;
    if (opset > kTargetOpset) {
      error = "unsupported opset " + std::to_string(opset) +
              ": zero-opt imports ONNX opsets up to " +
              std::to_string(kTargetOpset) +
              "; export the model with opset_version=" +
              std::to_string(kTargetOpset);
      return false;
    }
    // The version converter's IR drops external locations: a model it
    // converts has its weights read in.
    if (!loadExternalData(*model.mutable_graph(),
                          llvm::sys::path::parent_path(path), options,
                          /*keepWeights=*/opset == kTargetOpset, error))
      return false;
    // Validate before anything else walks the graph: libonnx's converter
    // and shape inference assume a well-formed model.
    if (!checkKnownOps(model.graph(), opset, error))
      return false;
    try {
      onnx::checker::check_model(model);
    } catch (const std::exception &e) {
      error = "the model is not valid ONNX: " + oneLine(e.what());
      return false;
    }
    if (!checkGraphOutputs(model.graph(), error))
      return false;
    if (opset < kTargetOpset) {
      try {
        model = onnx::version_conversion::ConvertVersion(model, kTargetOpset);
      } catch (const std::exception &e) {
        error = "unsupported opset " + std::to_string(opset) +
                ": conversion to opset " + std::to_string(kTargetOpset) +
                " failed: " + oneLine(e.what());
        return false;
      }
      opset = kTargetOpset;
    }
    out.opset = opset;

    std::set<std::string> algorithmInputs;
    for (const auto &ti : model.training_info())
      for (const auto &v : ti.algorithm().input())
        algorithmInputs.insert(v.name());
    if (!fixInputShapes(*model.mutable_graph(), options, error,
                        algorithmInputs))
      return false;

    try {
      onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*error_mode=*/1,
                                       /*data_prop=*/true);
      onnx::shape_inference::InferShapes(
          model, onnx::OpSchemaRegistry::Instance(), opts, &out.shapeData);
    } catch (const std::exception &e) {
      error = "shape inference failed: " + oneLine(e.what());
      return false;
    }
    return loadTrainingInfo(model, options, out, error);
  } catch (const std::exception &e) {
    error = "cannot load the model: " + oneLine(e.what());
    return false;
  } catch (...) {
    error = "cannot load the model: unknown error in libonnx";
    return false;
  }
}

bool mlir::zero::onnx_import::isKnownONNXOp(const std::string &domain,
                                            const std::string &opType,
                                            int64_t opset) {
  try {
    return onnx::OpSchemaRegistry::Schema(
               opType, (int)opset, isDefaultDomain(domain) ? "" : domain) !=
           nullptr;
  } catch (...) {
    return false;
  }
}
