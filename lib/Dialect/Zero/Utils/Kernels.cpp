//===- Kernels.cpp - what a kernel of a step can hold ---------------------===//
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

bool mlir::zero::isComputeOnly(Operation *op) {
  WalkResult r = op->walk([](Operation *nested) {
    if (isa<CallOpInterface>(nested) || isa<ZeroDialect>(nested->getDialect()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

bool mlir::zero::isKernelRoot(Operation *op) {
  // A group's bucket copies are copies (before ZeroToRuntime lowers them).
  if (auto group = dyn_cast<LaunchGroupOp>(op))
    return llvm::all_of(group.getBody().front(), [](Operation &inner) {
      return isa<BucketPackOp, BucketUnpackOp>(inner) || isComputeOnly(&inner);
    });
  if (auto group = dyn_cast<RowGroupOp>(op))
    return llvm::all_of(group.getBody().front(),
                        [](Operation &inner) { return isComputeOnly(&inner); });
  if (isa<linalg::LinalgOp, memref::CopyOp>(op))
    return isComputeOnly(op);
  // A target lowers each attention op to a kernel of its own.
  if (isa<AttentionOp, AttentionGradOp>(op))
    return isa<MemRefType>(op->getOperand(0).getType());
  if (isa<scf::ForOp, scf::IfOp, scf::WhileOp, scf::ParallelOp, scf::ForallOp>(
          op))
    return isComputeOnly(op) && llvm::all_of(op->getResultTypes(), [](Type t) {
             return !isa<BaseMemRefType>(t);
           });
  return false;
}

bool mlir::zero::writesOnlyOutputs(Operation *op) {
  WalkResult r = op->walk([&](Operation *nested) {
    return nested != op && hasEffect<MemoryEffects::Write>(nested)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return !r.wasInterrupted();
}

void mlir::zero::setKernelCounts(
    Operation *module, ArrayRef<std::pair<StringRef, int64_t>> counts) {
  NamedAttrList entries;
  if (auto kernels = module->getAttrOfType<DictionaryAttr>("zero.kernels"))
    entries.append(kernels.getValue());
  Builder b(module->getContext());
  for (auto [name, count] : counts)
    entries.set(name, b.getI64IntegerAttr(count));
  module->setAttr("zero.kernels", entries.getDictionary(module->getContext()));
}

/// What may lie between a fill and the op it initializes: address
/// arithmetic that touches no memory.
static bool isViewOrConstant(Operation *op) {
  return !op->getNumRegions() && (isa<ViewLikeOpInterface>(op) ||
                                  op->hasTrait<OpTrait::ConstantLike>());
}

Operation *mlir::zero::initializingFill(Operation *root) {
  SmallVector<Operation *, 2> fills = initializingFills(root);
  return fills.empty() ? nullptr : fills.front();
}

SmallVector<Operation *, 2> mlir::zero::initializingFills(Operation *root) {
  SmallVector<Operation *, 2> fills;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(root);
  if (!linalgOp || isa<linalg::FillOp>(root))
    return fills;
  llvm::SmallPtrSet<Value, 4> filled;
  for (Operation *prev = root->getPrevNode(); prev;
       prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      Value target = fill.getDpsInitOperand(0)->get();
      // Another buffer's fill, or one output's second: the run ends.
      if (!llvm::is_contained(linalgOp.getDpsInits(), target) ||
          !filled.insert(target).second)
        break;
      fills.push_back(fill);
      continue;
    }
    if (!isViewOrConstant(prev))
      break;
  }
  return fills;
}

Operation *mlir::zero::fusedInitializationRoot(
    Operation *fill, llvm::function_ref<bool(Value, Value)> mayOverlap) {
  if (!isa<linalg::FillOp>(fill))
    return nullptr;
  // The root's other outputs' fills may lie in between.
  Operation *next = fill->getNextNode();
  while (next && (isViewOrConstant(next) || isa<linalg::FillOp>(next)))
    next = next->getNextNode();
  auto root = dyn_cast_or_null<linalg::LinalgOp>(next);
  if (!root || !llvm::is_contained(initializingFills(root), fill) ||
      !root.hasPureBufferSemantics() || getGemmLoops(root))
    return nullptr;
  if (root.getNumParallelLoops() == 0)
    return root;
  Value target = fill->getOperand(1);
  for (OpOperand &operand : root->getOpOperands()) {
    if (operand.get() != target) {
      if (isa<MemRefType>(operand.get().getType()) &&
          mayOverlap(operand.get(), target))
        return nullptr;
      continue;
    }
    AffineMap map = root.getMatchingIndexingMap(&operand);
    if (!root.isDpsInit(&operand) || !map.isProjectedPermutation())
      return nullptr;
    SmallVector<utils::IteratorType> iterators = root.getIteratorTypesArray();
    llvm::SmallBitVector indexed(root.getNumLoops());
    for (AffineExpr e : map.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        indexed.set(d.getPosition());
    for (auto [d, it] : llvm::enumerate(iterators))
      if (indexed.test(d) != (it == utils::IteratorType::parallel))
        return nullptr;
  }
  return root;
}
