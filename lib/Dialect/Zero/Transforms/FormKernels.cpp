//===- FormKernels.cpp - compute groups as deduplicated kernels -*- C++ -*-===//
//
// The unit of code generation is the kernel, not the step: each compute
// group of a step is outlined into a function of its own, and groups that
// are the same computation on the same types (the same op in every layer)
// share one function. Code generation then works on a few small functions
// and a step of straight-line calls, instead of one function that grows
// with the depth of the model.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"
#include "zero-opt/Dialect/Zero/Utils/Masks.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROFORMKERNELS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {

/// The argument type a kernel takes for `v`: strided views with a static
/// offset become dynamic-offset views when only linalg ops and copies in
/// the group use them, directly or in a launch or row group (their types
/// follow no view's shape arithmetic), so that the same ops on other
/// slices, such as a bucket's slots, are one kernel.
Type kernelArgType(Value v, ArrayRef<Operation *> group) {
  // `strided<[1]>` at offset 0 too: its map is the identity, but not its
  // type.
  auto t = dyn_cast<MemRefType>(v.getType());
  auto layout = t ? dyn_cast<StridedLayoutAttr>(t.getLayout()) : nullptr;
  if (!layout || ShapedType::isDynamic(layout.getOffset()))
    return v.getType();
  for (Operation *user : v.getUsers()) {
    Operation *inGroup = nullptr;
    for (Operation *g : group)
      if (g == user || g->isProperAncestor(user))
        inGroup = g;
    if (!inGroup)
      continue;
    bool direct = inGroup == user || (user->getParentOp() == inGroup &&
                                      isa<LaunchGroupOp, RowGroupOp>(inGroup));
    if (!direct || !isa<linalg::LinalgOp, memref::CopyOp>(user))
      return v.getType();
  }
  auto dynamic = StridedLayoutAttr::get(t.getContext(), ShapedType::kDynamic,
                                        layout.getStrides());
  return MemRefType::get(t.getShape(), t.getElementType(), dynamic,
                         t.getMemorySpace());
}

struct ZeroFormKernelsPass
    : zero::impl::ZeroFormKernelsBase<ZeroFormKernelsPass> {
  void runOnOperation() override;

private:
  /// Outlines `group` (ops in one block, in order) into a kernel and
  /// replaces it with a call; returns the kernel.
  std::pair<func::FuncOp, func::CallOp>
  outline(ArrayRef<Operation *> group, StringRef name, SymbolTable &symbols);
  /// The text that identifies a kernel's computation, without its name.
  std::string structuralKey(func::FuncOp kernel);

  int64_t formed = 0;
  llvm::StringMap<func::FuncOp> unique;
};

std::string ZeroFormKernelsPass::structuralKey(func::FuncOp kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << kernel.getFunctionType();
  for (Operation &op : kernel.getBody().front())
    op.print(os, OpPrintingFlags()
                     .printGenericOpForm()
                     .useLocalScope()
                     .enableDebugInfo(false));
  return text;
}

std::pair<func::FuncOp, func::CallOp>
ZeroFormKernelsPass::outline(ArrayRef<Operation *> group, StringRef name,
                             SymbolTable &symbols) {
  Operation *last = group.back();
  Location loc = last->getLoc();
  // Values the group uses from outside, in order of first use; scalar
  // constants are cloned instead.
  llvm::SetVector<Value> captured;
  SmallVector<Operation *> constants;
  DenseSet<Operation *> inGroup(group.begin(), group.end());
  auto insideGroup = [&](Operation *op) {
    return op && (inGroup.contains(op) ||
                  llvm::any_of(group, [&](Operation *g) {
                    return g->isProperAncestor(op);
                  }));
  };
  auto capture = [&](Value v) {
    Operation *def = v.getDefiningOp();
    Operation *owner =
        def ? def : cast<BlockArgument>(v).getOwner()->getParentOp();
    if (insideGroup(owner))
      return;
    if (def && def->hasTrait<OpTrait::ConstantLike>() &&
        !isa<ShapedType>(v.getType())) {
      if (!llvm::is_contained(constants, def))
        constants.push_back(def);
      return;
    }
    captured.insert(v);
  };
  for (Operation *op : group)
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        capture(v);
    });
  // Results the step still uses after the group.
  SmallVector<Value> results;
  for (Operation *op : group)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(),
                       [&](Operation *u) { return !insideGroup(u); }))
        results.push_back(r);

  SmallVector<Type> argTypes;
  for (Value v : captured)
    argTypes.push_back(kernelArgType(v, group));
  auto kernel = func::FuncOp::create(
      loc, name,
      FunctionType::get(&getContext(), argTypes,
                        ValueRange(results).getTypes()));
  kernel.setPrivate();
  symbols.insert(kernel);
  kernel->setAttr(kKernelAttr,
                  StringAttr::get(&getContext(), last->getName().getStringRef()));
  Block *body = kernel.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  IRMapping map;
  for (Operation *c : constants)
    map.map(c->getResult(0), b.clone(*c)->getResult(0));
  for (auto [v, arg] : llvm::zip(captured, body->getArguments()))
    map.map(v, arg);
  for (Operation *op : group)
    b.clone(*op, map);
  // Step annotations (forward/backward, ...) mean nothing inside a kernel
  // and would keep the same computation apart; what a row group's member
  // may leave unwritten stays (the CUDA mapping reads it; nothing else
  // does).
  body->walk([](Operation *op) {
    bool member = isa_and_nonnull<RowGroupOp>(op->getParentOp());
    for (NamedAttribute a : llvm::to_vector(op->getDiscardableAttrs()))
      if (a.getName().strref().starts_with("zero.") &&
          !(member && a.getName() == kWrittenRegionAttr))
        op->removeDiscardableAttr(a.getName());
  });
  SmallVector<Value> returned;
  for (Value r : results)
    returned.push_back(map.lookup(r));
  func::ReturnOp::create(b, loc, returned);

  // The call, with views cast to the kernel's argument types.
  OpBuilder step(last);
  step.setInsertionPointAfter(last);
  SmallVector<Value> operands;
  for (auto [v, t] : llvm::zip(captured, argTypes))
    operands.push_back(v.getType() == t
                           ? v
                           : memref::CastOp::create(step, loc, t, v));
  auto call = func::CallOp::create(step, loc, kernel, operands);
  for (auto [r, c] : llvm::zip(results, call.getResults()))
    r.replaceAllUsesWith(c);
  for (Operation *op : llvm::reverse(group))
    op->erase();
  return {kernel, call};
}

void ZeroFormKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  // Groups first, then outlining, so no walk sees a half-rewritten block.
  SmallVector<SmallVector<Operation *, 2>> groups;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal() || fn->hasAttr(kKernelAttr))
      continue;
    fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == fn.getOperation())
        return WalkResult::advance();
      if (!isKernelRoot(op))
        return WalkResult::advance();
      SmallVector<Operation *, 2> group;
      // Its fills (one per output) join this group instead of forming
      // their own, in program order.
      SmallVector<Operation *, 2> fills = initializingFills(op);
      while (!groups.empty() && groups.back().size() == 1 &&
             llvm::is_contained(fills, groups.back().front()))
        groups.pop_back();
      llvm::append_range(group, llvm::reverse(fills));
      group.push_back(op);
      groups.push_back(std::move(group));
      return WalkResult::skip();
    });
  }

  for (auto &group : groups) {
    std::string name = "kernel_" + std::to_string(formed++) + "_" +
                       group.back()->getName().stripDialect().str();
    auto [kernel, call] = outline(group, name, symbols);
    auto [it, inserted] =
        unique.try_emplace(structuralKey(kernel), kernel);
    if (inserted)
      continue;
    // The same computation as an earlier kernel: call that one.
    call.setCalleeAttr(FlatSymbolRefAttr::get(it->second));
    symbols.erase(kernel);
  }
  Builder b(&getContext());
  module->setAttr("zero.kernels",
                  b.getDictionaryAttr(
                      {b.getNamedAttr("formed", b.getI64IntegerAttr(formed)),
                       b.getNamedAttr("unique", b.getI64IntegerAttr(
                                                    unique.size()))}));
}

} // namespace
