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
#include "mlir/Dialect/Tosa/Utils/ConversionUtils.h"
#include "mlir/IR/Matchers.h"
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

namespace {
/// A value zero-padded along one axis: the adjoint of a slice.
struct Padding {
  Value inner;
  unsigned axis = 0;
  int64_t before = 0, after = 0;
};
} // namespace

static std::optional<Padding> zeroPaddingOf(Value v) {
  auto pad = v.getDefiningOp<tosa::PadOp>();
  DenseElementsAttr value;
  SmallVector<int64_t> pads;
  if (!pad || !matchPattern(pad.getPadConst(), m_Constant(&value)) ||
      !value.isSplat() || !isa<FloatType>(value.getElementType()) ||
      !value.getSplatValue<APFloat>().isPosZero() ||
      !tosa::getConstShapeValues(pad.getPadding().getDefiningOp(), pads))
    return std::nullopt;
  std::optional<Padding> p;
  for (unsigned d = 0; 2 * d + 1 < pads.size(); ++d) {
    if (!pads[2 * d] && !pads[2 * d + 1])
      continue;
    if (p)
      return std::nullopt;
    p = Padding{pad.getInput1(), d, pads[2 * d], pads[2 * d + 1]};
  }
  return p;
}

/// `a + b` without the additions of zeros when `a` and `b` are zero
/// paddings of pieces that lie side by side along one axis (the adjoints
/// of a split's slices): one padding of their concatenation, or the
/// concatenation alone once the pieces cover the axis. Null otherwise.
static Value addPaddings(TosaBuilder &tb, OpBuilder &builder, Location loc,
                         Value a, Value b) {
  std::optional<Padding> x = zeroPaddingOf(a), y = zeroPaddingOf(b);
  if (!x || !y || x->axis != y->axis)
    return nullptr;
  if (x->before > y->before)
    std::swap(x, y);
  ArrayRef<int64_t> shape = TosaBuilder::shapeOf(a);
  int64_t width = TosaBuilder::shapeOf(x->inner)[x->axis];
  if (x->before + width != y->before)
    return nullptr;
  SmallVector<int64_t> both(TosaBuilder::shapeOf(x->inner));
  both[x->axis] += TosaBuilder::shapeOf(y->inner)[x->axis];
  // One concatenation of all the pieces, however many were joined before.
  SmallVector<Value> pieces;
  SmallVector<Operation *> inner;
  for (Value v : {x->inner, y->inner}) {
    auto join = v.getDefiningOp<tosa::ConcatOp>();
    if (join && join.getAxis() == x->axis && v.hasOneUse()) {
      llvm::append_range(pieces, join.getInput1());
      inner.push_back(join);
    } else {
      pieces.push_back(v);
    }
  }
  Value concat = tosa::ConcatOp::create(
      builder, loc, TosaBuilder::typeOf(a).clone(both), pieces, x->axis);
  SmallVector<int64_t> before(shape.size(), 0), after(shape.size(), 0);
  before[x->axis] = x->before;
  after[x->axis] = y->after;
  Value joined = tb.pad(concat, before, after);
  for (Value padded : {a, b})
    if (padded.use_empty())
      padded.getDefiningOp()->erase();
  for (Operation *join : inner)
    if (join->use_empty())
      join->erase();
  return joined;
}

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
  // A fan-out's sum is part of the backward of the user whose contribution
  // it adds: kernels and reports name it by that node.
  auto accumulate = [&](Value v, Value g, Operation *user) {
    auto it = adjoint.find(v);
    if (it == adjoint.end()) {
      adjoint[v] = g;
      return;
    }
    Location at = user->getLoc();
    if (Value joined = addPaddings(tb, b, at, it->second, g)) {
      it->second = joined;
      return;
    }
    it->second = tosa::AddOp::create(b, at, v.getType(), it->second, g);
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
        accumulate(v, g, op);
  }

  SmallVector<Value> grads;
  for (Value x : xs) {
    Value g = adjoint.lookup(x);
    grads.push_back(g ? g : tb.zerosLike(x));
  }
  return grads;
}
