//===- TraceNodes.cpp - the model's node of each launch and GEMM -*- C++ -*-=//
//
// A trace of kernel names does not say which node took the time: one
// kernel serves every layer's layer norm, and a GEMM is known by its shape.
// The step tells the runtime the node before the work it queues, so the
// measured trace names nodes as the predicted one does.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Conversion/RuntimeFunctions.h"
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUTRACENODES
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;
using namespace mlir::zero;

namespace {

/// One module's marking: its symbols, the runtime's entry (declared at
/// the first mark), and the constant global holding each node's name.
struct Marker {
  ModuleOp module;
  SymbolTable symbols{module};
  func::FuncOp setFn = {};
  llvm::StringMap<memref::GlobalOp> names = {};

  /// Whether `call` queues GPU work: a kernel function or a cuBLAS GEMM.
  bool queuesWork(func::CallOp call) const {
    StringRef callee = call.getCallee();
    for (RuntimeFunction f :
         {RuntimeFunction::CudaSgemm, RuntimeFunction::CudaGemm16,
          RuntimeFunction::CudaDgemm})
      if (callee == runtimeFunctionName(f))
        return true;
    auto fn = symbols.lookup<func::FuncOp>(callee);
    return fn && fn->hasAttr(kKernelAttr);
  }

  void markBlock(Block &block) {
    // The node last set in this block; none known on entry.
    std::optional<std::string> current;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          markBlock(inner);
      auto call = dyn_cast<func::CallOp>(op);
      if (!call) {
        if (op.getNumRegions())
          current.reset();
        continue;
      }
      if (!queuesWork(call)) {
        // A function of the step may queue work under other nodes.
        auto fn = symbols.lookup<func::FuncOp>(call.getCallee());
        if (!fn || !fn.isExternal())
          current.reset();
        continue;
      }
      std::string node = nodeName(call.getLoc()).str();
      if (current == node)
        continue;
      setNode(call, node);
      current = node;
    }
  }

  /// Calls zero_rt_cuda_node with `node`'s name (0 for "") before `call`.
  void setNode(func::CallOp call, StringRef node) {
    OpBuilder b(call);
    Location loc = call.getLoc();
    Value name;
    if (node.empty()) {
      name = arith::ConstantIntOp::create(b, loc, 0, 64);
    } else {
      memref::GlobalOp global = nameGlobal(node);
      Value buffer = memref::GetGlobalOp::create(b, loc, global.getType(),
                                                 global.getSymName());
      Value address =
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
      name = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    }
    if (!setFn)
      setFn = lookupOrDeclareRuntimeFunction(module, RuntimeFunction::CudaNode);
    func::CallOp::create(b, loc, setFn, name);
  }

  memref::GlobalOp nameGlobal(StringRef node) {
    auto [it, inserted] = names.try_emplace(node);
    if (!inserted)
      return it->second;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    SmallVector<int8_t> bytes(node.begin(), node.end());
    bytes.push_back(0);
    auto type = MemRefType::get({int64_t(bytes.size())}, b.getI8Type());
    auto value = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), b.getI8Type()),
        ArrayRef<int8_t>(bytes));
    auto global = memref::GlobalOp::create(
        b, module.getLoc(), "__zero_node", b.getStringAttr("private"), type,
        value, /*constant=*/true, IntegerAttr());
    // Unique among the module's symbols: __zero_node, __zero_node_0, ...
    symbols.insert(global);
    it->second = global;
    return global;
  }
};

struct ZeroGPUTraceNodesPass
    : zero::cuda::impl::ZeroGPUTraceNodesBase<ZeroGPUTraceNodesPass> {
  void runOnOperation() override {
    Marker marker{getOperation()};
    SmallVector<func::FuncOp> steps;
    for (auto fn : marker.module.getOps<func::FuncOp>())
      if (!fn.isExternal() && !fn->hasAttr(kKernelAttr))
        steps.push_back(fn);
    for (func::FuncOp fn : steps)
      for (Block &block : fn.getBody())
        marker.markBlock(block);
  }
};

} // namespace
