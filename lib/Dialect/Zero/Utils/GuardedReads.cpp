//===- GuardedReads.cpp - reads a select may not need -----------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Utils/GuardedReads.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/bit.h"

using namespace mlir;

/// Whether `op` may move next to the select: it computes, or only reads.
static bool movable(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.onlyHasEffect<MemoryEffects::Read>();
}

SetVector<Operation *> zero::exclusiveSelectSlice(arith::SelectOp select,
                                                  unsigned index) {
  Block *block = select->getBlock();
  Value operand = select->getOperand(index);
  SetVector<Operation *> slice;
  // The operand's producers in the block, whatever their other users.
  SmallVector<Operation *> worklist;
  if (Operation *def = operand.getDefiningOp(); def && def->getBlock() == block)
    worklist.push_back(def);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!movable(op) || !slice.insert(op))
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && def->getBlock() == block)
        worklist.push_back(def);
  }
  // Drop what feeds anything else, until nothing does.
  auto feedsOnly = [&](Operation *op) {
    return llvm::all_of(op->getUses(), [&](OpOperand &use) {
      return slice.contains(use.getOwner()) ||
             (use.getOwner() == select.getOperation() &&
              use.getOperandNumber() == index);
    });
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : llvm::to_vector(slice))
      if (!feedsOnly(op)) {
        slice.remove(op);
        changed = true;
      }
  }
  SmallVector<Operation *> ordered = slice.takeVector();
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return SetVector<Operation *>(ordered.begin(), ordered.end());
}

std::optional<double> zero::constantTrueFraction(Value buffer) {
  auto wholeView = [](Operation *op) {
    if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(op))
      return true;
    auto sub = dyn_cast<memref::SubViewOp>(op);
    return sub && sub.getSourceType().hasStaticShape() &&
           sub.getType().hasStaticShape() &&
           sub.getSourceType().getNumElements() ==
               sub.getType().getNumElements();
  };
  Operation *def = buffer.getDefiningOp();
  while (def && wholeView(def))
    def = def->getOperand(0).getDefiningOp();
  auto get = dyn_cast_if_present<memref::GetGlobalOp>(def);
  if (!get)
    return std::nullopt;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      get, get.getNameAttr());
  auto init = global ? dyn_cast_if_present<DenseIntElementsAttr>(
                           global.getConstantInitValue())
                     : DenseIntElementsAttr();
  if (!init || !init.getElementType().isInteger(1) || init.empty())
    return std::nullopt;
  if (init.isSplat())
    return init.getSplatValue<bool>() ? 1.0 : 0.0;
  // i1 elements are stored a bit each.
  int64_t n = init.getNumElements(), ones = 0;
  ArrayRef<char> raw = init.getRawData();
  for (int64_t i = 0; i < n / 8; ++i)
    ones += llvm::popcount(uint8_t(raw[i]));
  for (int64_t i = n / 8 * 8; i < n; ++i)
    ones += (uint8_t(raw[i / 8]) >> (i % 8)) & 1;
  return double(ones) / double(n);
}

double zero::guardedReadShare(linalg::LinalgOp op, OpOperand *input) {
  if (!op.isDpsInput(input) || op->getNumRegions() != 1)
    return 1;
  BlockArgument arg = op.getMatchingBlockArgument(input);
  double share = 1;
  op->getRegion(0).front().walk([&](arith::SelectOp select) {
    auto cond = dyn_cast<BlockArgument>(select.getCondition());
    if (!cond || cond == arg || cond.getOwner() != arg.getOwner())
      return;
    // The mask read whole, each element as often as any other: loops or
    // zeros on unit dimensions index it.
    OpOperand *mask = op.getMatchingOpOperand(cond);
    if (!op.isDpsInput(mask))
      return;
    AffineMap map = op.getMatchingIndexingMap(mask);
    auto maskType = dyn_cast<ShapedType>(mask->get().getType());
    if (!maskType || !map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return;
    for (auto [expr, size] : llvm::zip(map.getResults(), maskType.getShape()))
      if (isa<AffineConstantExpr>(expr) && size != 1)
        return;
    std::optional<double> trueShare = constantTrueFraction(mask->get());
    if (!trueShare)
      return;
    for (unsigned index : {1u, 2u}) {
      SetVector<Operation *> slice = exclusiveSelectSlice(select, index);
      bool only =
          !arg.use_empty() && llvm::all_of(arg.getUses(), [&](OpOperand &use) {
            return slice.contains(use.getOwner()) ||
                   (use.getOwner() == select.getOperation() &&
                    use.getOperandNumber() == index);
          });
      if (only)
        share = std::min(share, index == 1 ? *trueShare : 1 - *trueShare);
    }
  });
  return share;
}
