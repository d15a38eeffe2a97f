//===- AutoDiff.cpp - reverse-mode differentiation --------------*- C++ -*-===//
//
// Activity analysis decides which values need adjoints: those that depend
// on an x (varied) and that y depends on (useful). Ops are then visited in
// reverse order; each active op's rule maps result adjoints to operand
// adjoints, which are accumulated per value.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/AutoDiff/AutoDiff.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/TosaBuilder.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::zero;

namespace {
/// Tags every op created through a builder as part of the backward pass.
struct BackwardMarker : public OpBuilder::Listener {
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint) override {
    op->setAttr(kBackwardAttr, UnitAttr::get(op->getContext()));
    op->walk([](Operation *inner) {
      inner->setAttr(kBackwardAttr, UnitAttr::get(inner->getContext()));
    });
  }
};
} // namespace

static bool isDifferentiableType(Type t) {
  auto st = dyn_cast<ShapedType>(t);
  return st && isa<FloatType>(st.getElementType());
}

FailureOr<SmallVector<Value>> mlir::zero::buildGradients(OpBuilder &outer,
                                                        Location loc, Value y,
                                                        ValueRange xs) {
  Operation *yDef = y.getDefiningOp();
  Block *block = yDef ? yDef->getBlock()
                      : cast<BlockArgument>(y).getOwner();

  // Varied: reachable from xs. Ops are in dominance order in the block.
  DenseSet<Value> varied(xs.begin(), xs.end());
  SmallVector<Operation *> ops;
  for (Operation &op : *block) {
    if (&op == yDef) {
      ops.push_back(&op);
      break;
    }
    ops.push_back(&op);
  }
  if (yDef && ops.back() != yDef)
    return emitError(loc, "gradient target is not in the block");
  for (Operation *op : ops) {
    if (op->hasAttr(kStopGradientAttr))
      continue;
    bool any = llvm::any_of(op->getOperands(),
                            [&](Value v) { return varied.contains(v); });
    if (!any)
      continue;
    for (Value r : op->getResults())
      if (isDifferentiableType(r.getType()))
        varied.insert(r);
  }
  // Useful: y depends on them; active = varied and useful.
  DenseSet<Value> active;
  if (varied.contains(y))
    active.insert(y);
  for (Operation *op : llvm::reverse(ops)) {
    if (!llvm::any_of(op->getResults(),
                      [&](Value r) { return active.contains(r); }))
      continue;
    for (Value v : op->getOperands())
      if (varied.contains(v))
        active.insert(v);
  }

  BackwardMarker marker;
  OpBuilder b(outer);
  b.setListener(&marker);
  TosaBuilder tb(b, loc);

  llvm::DenseMap<Value, Value> adjoint;
  auto accumulate = [&](Value v, Value g) {
    auto it = adjoint.find(v);
    if (it == adjoint.end()) {
      adjoint[v] = g;
      return;
    }
    it->second = tosa::AddOp::create(b, loc, v.getType(), it->second, g);
  };

  if (active.contains(y))
    adjoint[y] = tb.splat(TosaBuilder::typeOf(y), 1.0);
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultAdj;
    bool anyAdj = false;
    for (Value r : op->getResults()) {
      Value a = active.contains(r) ? adjoint.lookup(r) : Value();
      anyAdj |= static_cast<bool>(a);
      resultAdj.push_back(a);
    }
    if (!anyAdj)
      continue;
    SmallVector<bool> needed;
    for (Value v : op->getOperands())
      needed.push_back(active.contains(v));
    if (llvm::none_of(needed, [](bool n) { return n; }))
      continue;
    auto iface = dyn_cast<AutoDiffOpInterface>(op);
    if (!iface)
      return op->emitError() << "no derivative rule for '" << op->getName()
                             << "'; it lies between the loss and a "
                                "differentiated value";
    SmallVector<Value> operandAdj;
    if (failed(iface.buildAdjoints(b, resultAdj, needed, operandAdj)))
      return failure();
    for (auto [v, need, g] :
         llvm::zip(op->getOperands(), needed, operandAdj))
      if (need && g)
        accumulate(v, g);
  }

  SmallVector<Value> grads;
  for (Value x : xs) {
    Value g = adjoint.lookup(x);
    grads.push_back(g ? g : tb.zerosLike(x));
  }
  return grads;
}
