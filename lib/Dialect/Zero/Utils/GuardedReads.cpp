//===- GuardedReads.cpp - reads a select may not need -----------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Utils/GuardedReads.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/bit.h"

using namespace mlir;

bool zero::onlyReads(Operation *op) {
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  return effects && llvm::all_of(*effects, [](const auto &effect) {
           return isa<MemoryEffects::Read>(effect.getEffect());
         });
}

/// Whether every use of `v` is an op of `slice` or `select`'s operand
/// `index`.
static bool feedsOnly(Value v, const SetVector<Operation *> &slice,
                      arith::SelectOp select, unsigned index) {
  return llvm::all_of(v.getUses(), [&](OpOperand &use) {
    return slice.contains(use.getOwner()) ||
           (use.getOwner() == select.getOperation() &&
            use.getOperandNumber() == index);
  });
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
    // Pure ops and loads without regions move next to the select.
    if (op->getNumRegions() != 0 || !onlyReads(op) || !slice.insert(op))
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && def->getBlock() == block)
        worklist.push_back(def);
  }
  // Drop what feeds anything else, until nothing does.
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : llvm::to_vector(slice))
      if (!llvm::all_of(op->getResults(), [&](Value r) {
            return feedsOnly(r, slice, select, index);
          })) {
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
    for (unsigned index : {1u, 2u}) {
      // The mask's bits are counted only for a guarded input.
      if (arg.use_empty() ||
          !feedsOnly(arg, exclusiveSelectSlice(select, index), select, index))
        continue;
      if (std::optional<double> trueShare = constantTrueFraction(mask->get()))
        share = std::min(share, index == 1 ? *trueShare : 1 - *trueShare);
    }
  });
  return share;
}
