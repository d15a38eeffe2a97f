//===- ONNXImporter.cpp - ONNX graph to a function over tensors -*- C++ -*-===//
#include "zero-opt/Import/ONNX/ONNXImporter.h"

#include "ModelLoader.h"
#include "NodeImporter.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringSwitch.h"

#include <functional>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::zero;
using namespace mlir::zero::onnx_import;

static const llvm::StringMap<LoweringFn> &loweringTable() {
  static const llvm::StringMap<LoweringFn> table = [] {
    llvm::StringMap<LoweringFn> m;
    registerElementwiseLowerings(m);
    registerTensorLowerings(m);
    registerNNLowerings(m);
    registerRandomLowerings(m);
    return m;
  }();
  return table;
}

static const llvm::StringMap<LoweringFn> &trainingTable() {
  static const llvm::StringMap<LoweringFn> table = [] {
    llvm::StringMap<LoweringFn> m;
    registerTrainingLowerings(m);
    return m;
  }();
  return table;
}

/// The lowerings of one domain, or null for a domain zero-opt does not lower.
static const llvm::StringMap<LoweringFn> *tableFor(StringRef domain) {
  if (domain.empty() || domain == "ai.onnx")
    return &loweringTable();
  if (domain == kTrainingDomain)
    return &trainingTable();
  return nullptr;
}

bool zero::isSupportedONNXOp(StringRef domain, StringRef opType) {
  const llvm::StringMap<LoweringFn> *table = tableFor(domain);
  return table && table->count(opType);
}

std::vector<std::string> zero::supportedONNXOps(StringRef domain) {
  std::vector<std::string> ops;
  if (const llvm::StringMap<LoweringFn> *table = tableFor(domain))
    for (const auto &kv : *table)
      ops.push_back(kv.getKey().str());
  llvm::sort(ops);
  return ops;
}

std::vector<std::string> zero::compileTimeONNXOps() {
  std::vector<std::string> ops;
  for (const std::string &op : foldableOps())
    if (!loweringTable().count(op))
      ops.push_back(op);
  llvm::sort(ops);
  return ops;
}

bool zero::isCompileTimeOperand(StringRef opType, unsigned index) {
  return llvm::StringSwitch<bool>(opType)
      .Cases({"Reshape", "Expand", "Tile", "Split", "Squeeze", "Unsqueeze",
              "ReduceSum"},
             index == 1)
      .Case("Slice", index >= 1 && index <= 4)
      .Case("ConstantOfShape", index == 0)
      .Case("Dropout", index == 1 || index == 2)
      .Default(false);
}

void zero::registerONNXImportDialects(DialectRegistry &registry) {
  registry.insert<func::FuncDialect, tosa::TosaDialect, tensor::TensorDialect,
                  arith::ArithDialect, linalg::LinalgDialect, math::MathDialect,
                  bufferization::BufferizationDialect, ZeroDialect>();
}

/// Why operand `index` of an `opType` node is not trained, or null when it
/// may be.
static const char *statisticsOperand(const onnx::NodeProto &node, int index) {
  if (node.op_type() == "BatchNormalization" && (index == 3 || index == 4)) {
    for (const auto &a : node.attribute())
      if (a.name() == "training_mode" && a.i())
        return "running statistic of BatchNormalization, updated by the "
               "forward";
    return "statistic read by BatchNormalization";
  }
  return nullptr;
}

/// Values of `g` that every node reads as statistics (a BatchNormalization's
/// mean and variance), with the reason: such initializers are buffers.
static std::map<std::string, std::string>
statisticsInputs(const onnx::GraphProto &g) {
  std::map<std::string, std::string> reason;
  std::set<std::string> trained;
  for (const auto &node : g.node())
    for (int i = 0; i < node.input_size(); ++i) {
      if (const char *why = statisticsOperand(node, i))
        reason.emplace(node.input(i), why);
      else
        trained.insert(node.input(i));
    }
  // Graph outputs are read by the user, as anything.
  for (const auto &vi : g.output())
    trained.insert(vi.name());
  for (const std::string &name : trained)
    reason.erase(name);
  return reason;
}

namespace {
class GraphImporter {
public:
  GraphImporter(MLIRContext *ctx, StringRef path, LoadedModel &lm,
                const ONNXImportOptions &options)
      : ctx(ctx), path(path), lm(lm), options(options),
        fileLoc(FileLineColLoc::get(ctx, path, 0, 0)), state(fileLoc) {}

  OwningOpRef<ModuleOp> run(ParamValues *initialValues);

private:
  /// How the initializers of a graph become arguments of its function.
  struct FunctionSpec {
    std::string name;
    /// Role of an initializer that becomes an argument; nullopt keeps it a
    /// constant.
    std::function<std::optional<Role>(const onnx::TensorProto &, ShapedType)>
        argRole;
    /// Extra results: (graph value, initializer it updates in place).
    std::vector<std::pair<std::string, std::string>> updates;
    /// Why an argument has its role, where that is not obvious.
    std::map<std::string, std::string> reasons;
  };
  /// Imports `g` as a function appended to `module`; initializers turned
  /// into arguments are appended to `initialValues`.
  func::FuncOp importGraph(ModuleOp module, const onnx::GraphProto &g,
                           const FunctionSpec &spec,
                           ParamValues *initialValues);

  FailureOr<RankedTensorType> convertType(const onnx::TypeProto &t,
                                          StringRef name, bool isInput);
  Location nodeLoc(const onnx::NodeProto &node, int index);
  LogicalResult importNode(OpBuilder &b, const onnx::NodeProto &node,
                           int index);
  /// Checks that the node defined each output with the inferred type.
  LogicalResult checkOutputs(const onnx::NodeProto &node, Location loc);

  MLIRContext *ctx;
  StringRef path;
  LoadedModel &lm;
  const ONNXImportOptions &options;
  Location fileLoc;
  GraphState state;
};
} // namespace

static std::string shapeHint(const onnx::TypeProto_Tensor &tt) {
  std::string s;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &d = tt.shape().dim(i);
    s += (i ? "x" : "") +
         (d.has_dim_value() ? std::to_string(d.dim_value()) : std::string("N"));
  }
  return s;
}

FailureOr<RankedTensorType> GraphImporter::convertType(const onnx::TypeProto &t,
                                                       StringRef name,
                                                       bool isInput) {
  if (!t.has_tensor_type()) {
    emitError(fileLoc) << "value '" << name
                       << "' is not a tensor (sequences, maps and optionals "
                          "are not supported)";
    return failure();
  }
  const auto &tt = t.tensor_type();
  Type elt = convertElementType(ctx, tt.elem_type());
  if (!elt) {
    emitError(fileLoc) << "unsupported: value '" << name
                       << "' has element type "
                       << onnx::TensorProto::DataType_Name(
                              (onnx::TensorProto::DataType)tt.elem_type());
    return failure();
  }
  if (!tt.has_shape()) {
    auto diag = emitError(fileLoc) << "value '" << name << "' has no shape";
    if (isInput)
      diag << "; give it one with --input-shape " << name << "=D0xD1x...";
    return failure();
  }
  SmallVector<int64_t> shape;
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &d = tt.shape().dim(i);
    if (!d.has_dim_value()) {
      auto diag = emitError(fileLoc)
                  << "value '" << name << "' has dynamic dimension ";
      if (d.has_dim_param())
        diag << "'" << d.dim_param() << "' ";
      diag << "(dim " << i << ")";
      if (isInput) {
        diag << "; fix it with ";
        if (d.has_dim_param())
          diag << "--dim " << d.dim_param() << "=<size> or ";
        diag << "--input-shape " << name << "=" << shapeHint(tt);
      } else {
        diag << " that the input shapes do not determine";
      }
      return failure();
    }
    shape.push_back(d.dim_value());
  }
  return RankedTensorType::get(shape, elt);
}

Location GraphImporter::nodeLoc(const onnx::NodeProto &node, int index) {
  std::string name = node.name().empty()
                         ? node.op_type() + "_" + std::to_string(index)
                         : node.name();
  return NameLoc::get(StringAttr::get(ctx, name), fileLoc);
}

LogicalResult GraphImporter::importNode(OpBuilder &b,
                                        const onnx::NodeProto &node,
                                        int index) {
  Location loc = nodeLoc(node, index);
  const std::string &domain = node.domain();
  const llvm::StringMap<LoweringFn> *table = tableFor(domain);
  if (!table) {
    emitError(loc) << "unsupported: op " << node.op_type() << " of domain '"
                   << domain << "': zero-opt lowers the ONNX domains ai.onnx "
                   << "and " << kTrainingDomain;
    return failure();
  }
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty())
      continue;
    if (!state.isDefined(node.input(i))) {
      emitError(loc) << "input '" << node.input(i) << "' is not defined";
      return failure();
    }
  }
  // Shape arithmetic is evaluated here, whether or not the op has a lowering.
  NodeImporter ni(b, loc, node, state);
  FailureOr<bool> folded = foldConstantNode(ni);
  if (failed(folded))
    return failure();
  if (*folded)
    return checkOutputs(node, loc);
  auto it = table->find(node.op_type());
  if (it == table->end()) {
    if (isKnownONNXOp(domain, node.op_type(), lm.opset))
      emitError(loc) << "unsupported: op " << node.op_type()
                     << " has no lowering in zero-opt yet (`zero-opt "
                        "--list-ops` lists the ops it imports)";
    else
      emitError(loc) << "unknown op '" << node.op_type()
                     << "': it is not an ONNX operator at opset " << lm.opset;
    return failure();
  }
  // TOSA has no zero-sized tensors.
  auto isEmpty = [&](const std::string &name) {
    Value v = state.values.lookup(name);
    ShapedType t = v ? cast<ShapedType>(v.getType())
                     : ShapedType(state.constants.lookup(name).getType());
    if (!t)
      t = state.types.lookup(name);
    return t && t.getNumElements() == 0;
  };
  for (int i = 0; i < node.input_size(); ++i)
    if (!node.input(i).empty() && isEmpty(node.input(i)) &&
        !isCompileTimeOperand(node.op_type(), i)) {
      emitError(loc) << "unsupported: empty tensor '" << node.input(i) << "'";
      return failure();
    }
  for (int i = 0; i < node.output_size(); ++i)
    if (RankedTensorType t = state.types.lookup(node.output(i));
        t && t.getNumElements() == 0) {
      emitError(loc) << "unsupported: empty tensor '" << node.output(i) << "'";
      return failure();
    }
  if (failed(it->second(ni)))
    return failure();
  return checkOutputs(node, loc);
}

LogicalResult GraphImporter::checkOutputs(const onnx::NodeProto &node,
                                          Location loc) {
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string &out = node.output(i);
    if (out.empty())
      continue;
    if (!state.isDefined(out)) {
      emitError(loc) << "unsupported: output " << i << " ('" << out << "') of "
                     << node.op_type() << " is not produced";
      return failure();
    }
    Value v = state.values.lookup(out);
    Type got = v ? v.getType() : state.constants.lookup(out).getType();
    RankedTensorType want = state.types.lookup(out);
    if (want && want != got) {
      emitError(loc) << "internal error: " << node.op_type() << " lowered to "
                     << got << " but ONNX infers " << want << " for '" << out
                     << "'";
      return failure();
    }
  }
  return success();
}

func::FuncOp GraphImporter::importGraph(ModuleOp module,
                                        const onnx::GraphProto &g,
                                        const FunctionSpec &spec,
                                        ParamValues *initialValues) {
  state = GraphState(fileLoc);
  state.shapeData = &lm.shapeData;
  state.originalOpset = lm.originalOpset;
  for (const auto &vi : g.value_info()) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
      continue;
    bool known = true;
    for (const auto &d : vi.type().tensor_type().shape().dim())
      known &= d.has_dim_value();
    Type elt = convertElementType(ctx, vi.type().tensor_type().elem_type());
    if (!known || !elt)
      continue;
    SmallVector<int64_t> shape;
    for (const auto &d : vi.type().tensor_type().shape().dim())
      shape.push_back(d.dim_value());
    state.types[vi.name()] = RankedTensorType::get(shape, elt);
  }

  struct Arg {
    std::string name;
    Role role;
    Type type;
    DenseElementsAttr value; // initial value of an initializer argument
  };
  std::set<std::string> initNames;
  std::vector<Arg> inits;
  for (const auto &t : g.initializer()) {
    initNames.insert(t.name());
    // Still external: a parameter whose shape is all that was read.
    if (options.parameterShapesOnly &&
        t.data_location() == onnx::TensorProto::EXTERNAL) {
      Type elt = convertElementType(ctx, t.data_type());
      auto type = RankedTensorType::get(
          SmallVector<int64_t>(t.dims().begin(), t.dims().end()), elt);
      auto role = elt ? spec.argRole(t, type) : std::nullopt;
      if (!role) {
        emitError(fileLoc) << "initializer '" << t.name()
                           << "': external data was not loaded";
        return nullptr;
      }
      inits.push_back({t.name(), *role, type, {}});
      continue;
    }
    std::string err;
    auto attr = convertTensor(ctx, t, err);
    if (failed(attr)) {
      emitError(fileLoc) << "initializer: " << err;
      return nullptr;
    }
    if (auto role = spec.argRole(t, attr->getType()))
      inits.push_back({t.name(), *role, attr->getType(), *attr});
    else
      state.constants[t.name()] = *attr;
  }

  std::vector<Arg> args;
  for (const auto &vi : g.input()) {
    if (initNames.count(vi.name()))
      continue;
    auto ty = convertType(vi.type(), vi.name(), /*isInput=*/true);
    if (failed(ty))
      return nullptr;
    args.push_back({vi.name(), Role::input, *ty, {}});
  }
  llvm::append_range(args, inits);
  SmallVector<Type> argTypes, resultTypes;
  for (const Arg &a : args)
    argTypes.push_back(a.type);
  for (const auto &vi : g.output()) {
    auto ty = convertType(vi.type(), vi.name(), /*isInput=*/false);
    if (failed(ty))
      return nullptr;
    resultTypes.push_back(*ty);
    state.types[vi.name()] = *ty;
  }
  // In-place updates: result type = the updated argument's type.
  SmallVector<int64_t> updatesArg;
  for (const auto &update : spec.updates) {
    const std::string &init = update.second;
    auto it = llvm::find_if(args, [&](const Arg &a) { return a.name == init; });
    if (it == args.end()) {
      emitError(fileLoc) << "update_binding names '" << init
                         << "', which is not an initializer";
      return nullptr;
    }
    updatesArg.push_back(it - args.begin());
    resultTypes.push_back(it->type);
  }

  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, fileLoc, spec.name,
                                 b.getFunctionType(argTypes, resultTypes));
  fn->setAttr(kEntryAttr, b.getUnitAttr());
  for (auto [i, a] : llvm::enumerate(args)) {
    fn.setArgAttr(i, kNameAttr, b.getStringAttr(a.name));
    fn.setArgAttr(i, kRoleAttr, RoleAttr::get(ctx, a.role));
  }
  for (auto [i, vi] : llvm::enumerate(g.output())) {
    fn.setResultAttr(i, kNameAttr, b.getStringAttr(vi.name()));
    fn.setResultAttr(i, kRoleAttr, RoleAttr::get(ctx, Role::output));
  }
  for (auto [k, argIdx] : llvm::enumerate(updatesArg))
    fn.setResultAttr(g.output_size() + k, kUpdatesAttr,
                     b.getI64IntegerAttr(argIdx));
  Block *body = fn.addEntryBlock();
  b.setInsertionPointToStart(body);
  for (unsigned i = 0; i < args.size(); ++i) {
    state.values[args[i].name] = body->getArgument(i);
    if (args[i].role == Role::buffer)
      state.buffers.insert(args[i].name);
    auto why = spec.reasons.find(args[i].name);
    if (args[i].role == Role::buffer && why != spec.reasons.end())
      fn.setArgAttr(i, kReasonAttr, b.getStringAttr(why->second));
  }
  state.entry = body;
  state.syncBatchNorm = options.syncBatchNorm;
  state.randomSeed = options.seed;

  for (auto [i, node] : llvm::enumerate(g.node()))
    if (failed(importNode(b, node, i)))
      return nullptr;

  SmallVector<std::string> resultNames;
  for (const auto &vi : g.output())
    resultNames.push_back(vi.name());
  for (const auto &u : spec.updates)
    resultNames.push_back(u.first);
  SmallVector<Value> results;
  for (auto [i, name] : llvm::enumerate(resultNames)) {
    Value v = state.lookup(name);
    if (!v) {
      emitError(fileLoc) << "graph output '" << name
                         << "' is not produced by any node";
      return nullptr;
    }
    if (v.getType() != resultTypes[i]) {
      emitError(fileLoc) << "graph output '" << name << "' is declared "
                         << resultTypes[i] << " but computes " << v.getType();
      return nullptr;
    }
    results.push_back(v);
  }
  // Buffers the nodes update (running statistics) are results written
  // into their arguments, like update_binding's.
  for (const auto &update : state.bufferUpdates) {
    auto it = llvm::find_if(
        args, [&](const Arg &a) { return a.name == update.first; });
    updatesArg.push_back(it - args.begin());
    resultTypes.push_back(it->type);
    results.push_back(update.second);
  }
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  fn.getAllArgAttrs(argAttrs);
  fn.getAllResultAttrs(resultAttrs);
  // The counter of random draws, if a node drew: (step, micro-batch).
  if (state.rngCounter) {
    argTypes.push_back(state.rngCounter.getType());
    argAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(kNameAttr, b.getStringAttr("rng")),
         b.getNamedAttr(kRoleAttr, RoleAttr::get(ctx, Role::rng))}));
  }
  for (const auto &update : state.bufferUpdates) {
    unsigned r = resultAttrs.size();
    resultAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(kNameAttr, b.getStringAttr(update.first)),
         b.getNamedAttr(kRoleAttr, RoleAttr::get(ctx, Role::buffer)),
         b.getNamedAttr(kUpdatesAttr, b.getI64IntegerAttr(
                                          updatesArg[r - g.output_size()]))}));
  }
  // In a training algorithm, the y of a Gradient node is the loss the step
  // logs: its output gets the role, or it becomes a result of its own.
  unsigned updatesEnd = results.size();
  if (!spec.updates.empty() && !state.lossName.empty()) {
    auto outs = g.output();
    auto it = llvm::find_if(
        outs, [&](const auto &vi) { return vi.name() == state.lossName; });
    NamedAttrList attrs;
    attrs.set(kNameAttr, b.getStringAttr(state.lossName));
    attrs.set(kRoleAttr, RoleAttr::get(ctx, Role::loss));
    if (it != outs.end()) {
      resultAttrs[it - outs.begin()] = attrs.getDictionary(ctx);
    } else {
      Value loss = state.lookup(state.lossName);
      results.push_back(loss);
      resultTypes.push_back(loss.getType());
      resultAttrs.push_back(attrs.getDictionary(ctx));
    }
  }
  fn.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  fn.setAllArgAttrs(argAttrs);
  fn.setAllResultAttrs(resultAttrs);
  // Updates are written into the argument they replace.
  for (unsigned i = g.output_size(); i < updatesEnd; ++i)
    results[i] = bufferization::MaterializeInDestinationOp::create(
                     b, fileLoc, results[i],
                     body->getArgument(updatesArg[i - g.output_size()]))
                     .getResult();
  func::ReturnOp::create(b, fileLoc, results);
  if (initialValues)
    for (const Arg &a : inits)
      if (a.value && llvm::none_of(*initialValues, [&](const auto &p) {
            return p.first == a.name;
          }))
        initialValues->emplace_back(a.name, a.value);
  return fn;
}

OwningOpRef<ModuleOp> GraphImporter::run(ParamValues *initialValues) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  const onnx::GraphProto &g = lm.model.graph();

  // Forward: floating-point initializers are trained unless frozen, or
  // buffers when every node reads them as statistics.
  std::set<std::string> frozen(options.freeze.begin(), options.freeze.end());
  std::set<std::string> floatInits;
  FunctionSpec forward;
  forward.name = options.funcName;
  forward.reasons = statisticsInputs(g);
  // A float initializer in a compile-time position (Dropout's ratio) is a
  // constant: training it could not change the compiled graph.
  std::set<std::string> compileTime;
  for (const auto &node : g.node())
    for (int i = 0; i < node.input_size(); ++i)
      if (isCompileTimeOperand(node.op_type(), i))
        compileTime.insert(node.input(i));
  forward.argRole = [&](const onnx::TensorProto &t,
                        ShapedType v) -> std::optional<Role> {
    if (!isa<FloatType>(v.getElementType()))
      return std::nullopt;
    floatInits.insert(t.name());
    if (frozen.count(t.name()) || compileTime.count(t.name()))
      return std::nullopt;
    return forward.reasons.count(t.name()) ? Role::buffer : Role::parameter;
  };
  if (!importGraph(*module, g, forward, initialValues))
    return nullptr;
  // Frozen floats go along, so that saved weights are complete.
  if (initialValues)
    for (const auto &t : g.initializer())
      if (frozen.count(t.name()) && floatInits.count(t.name())) {
        std::string err;
        auto attr = convertTensor(ctx, t, err);
        if (succeeded(attr))
          initialValues->emplace_back(t.name(), *attr);
      }
  for (const std::string &f : options.freeze)
    if (!floatInits.count(f)) {
      emitError(fileLoc) << "--freeze names '" << f
                         << "', which is not a floating-point initializer "
                            "of the model";
      return nullptr;
    }

  // An ONNX training model: its algorithm graph, run after the inference
  // graph, is the training step; update_binding says which initializers
  // take which of its outputs.
  if (lm.trainingGraph) {
    std::set<std::string> bound;
    FunctionSpec train;
    train.name = "train_step";
    for (const auto &[init, value] : lm.updateBinding) {
      bound.insert(init);
      train.updates.push_back({value, init});
    }
    train.argRole = [&](const onnx::TensorProto &t,
                        ShapedType) -> std::optional<Role> {
      if (!bound.count(t.name()))
        return std::nullopt;
      return floatInits.count(t.name()) ? Role::parameter
                                        : Role::optimizer_state;
    };
    if (!importGraph(*module, *lm.trainingGraph, train, initialValues))
      return nullptr;
    module->getOperation()->setAttr("zero.training",
                                    StringAttr::get(ctx, "onnx"));
  }
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> zero::importONNXModel(MLIRContext *ctx, StringRef path,
                                            const ONNXImportOptions &options,
                                            ParamValues *initialValues) {
  DialectRegistry registry;
  registerONNXImportDialects(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadAllAvailableDialects();

  LoadedModel lm;
  std::string err;
  if (!loadModel(path.str(), options, lm, err)) {
    emitError(FileLineColLoc::get(ctx, path, 0, 0)) << err;
    return nullptr;
  }
  OwningOpRef<ModuleOp> module =
      GraphImporter(ctx, path, lm, options).run(initialValues);
  if (module)
    (*module)->setAttr(kModelHashAttr, StringAttr::get(ctx, lm.structureHash));
  return module;
}
