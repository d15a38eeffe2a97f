//===- GroupLaunches.cpp - independent kernels as one launch ----*- C++ -*-===//
//
// A GPU launch costs microseconds however little it computes. The global
// norm takes a sum of squares per parameter tensor, split into partials and
// combines: hundreds of launches of a few microseconds each, none of which
// depends on another tensor's. In each straight run of kernel roots, the
// roots are put in waves (a root's wave is one more than the latest wave
// it depends on), the run reordered wave by wave, and each wave of two or
// more becomes a `zero.launch_group`: one kernel, one launch.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUGROUPLAUNCHES
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// A launch: a linalg op on buffers, with the fill that initializes it.
struct Unit {
  SmallVector<Operation *, 2> ops;
  SmallVector<Value> reads, writes;
  int64_t wave = 0;
};

/// Ops a run may move: allocation, deallocation, views and constants.
bool isMovable(Operation *op) {
  if (isa<memref::AllocOp, memref::DeallocOp>(op))
    return true;
  return op->getNumRegions() == 0 && (isa<ViewLikeOpInterface>(op) ||
                                      op->hasTrait<OpTrait::ConstantLike>());
}

/// A launch a group can hold: a linalg op on buffers that is no GEMM
/// (cuBLAS runs those) and writes only its outputs.
bool isLaunch(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      !zero::isKernelRoot(op) || zero::getGemmLoops(linalgOp))
    return false;
  WalkResult r = op->walk([&](Operation *nested) {
    return nested != op && hasEffect<MemoryEffects::Write>(nested)
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return !r.wasInterrupted();
}

bool conflicts(const Unit &a, const Unit &b) {
  auto meet = [](ArrayRef<Value> xs, ArrayRef<Value> ys) {
    for (Value x : xs)
      for (Value y : ys)
        if (zero::mayOverlap(x, y))
          return true;
    return false;
  };
  return meet(a.writes, b.reads) || meet(a.writes, b.writes) ||
         meet(a.reads, b.writes);
}

struct ZeroGPUGroupLaunchesPass
    : zero::cuda::impl::ZeroGPUGroupLaunchesBase<ZeroGPUGroupLaunchesPass> {
  void runOnOperation() override;

private:
  void groupRun(ArrayRef<Operation *> run);
  int64_t groups = 0, grouped = 0;
};

void ZeroGPUGroupLaunchesPass::groupRun(ArrayRef<Operation *> run) {
  // Units in program order; a fill joins the op it initializes.
  SmallVector<Unit> units;
  DenseMap<Operation *, unsigned> unitOf;
  for (Operation *op : run) {
    if (!isLaunch(op))
      continue;
    Operation *fill = zero::initializingFill(op);
    if (fill && unitOf.count(fill) && units[unitOf[fill]].ops.size() == 1 &&
        unitOf[fill] + 1 == units.size()) {
      units.back().ops.push_back(op);
    } else {
      units.emplace_back();
      units.back().ops.push_back(op);
    }
    unitOf[op] = units.size() - 1;
    // Reads: every buffer the op or its body uses (a gather loads from
    // buffers that are no operand of the op).
    auto linalgOp = cast<linalg::LinalgOp>(op);
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (isa<BaseMemRefType>(v.getType()))
          units.back().reads.push_back(v);
    });
    for (OpOperand &init : linalgOp.getDpsInitsMutable())
      units.back().writes.push_back(init.get());
  }
  if (units.size() < 2)
    return;
  int64_t waves = 0;
  for (unsigned j = 0; j < units.size(); ++j) {
    for (unsigned i = 0; i < j; ++i)
      if (units[i].wave >= units[j].wave && conflicts(units[i], units[j]))
        units[j].wave = units[i].wave + 1;
    waves = std::max(waves, units[j].wave + 1);
  }
  SmallVector<SmallVector<unsigned>> byWave(waves);
  for (auto [i, u] : llvm::enumerate(units))
    byWave[u.wave].push_back(i);
  if (llvm::all_of(byWave, [](auto &w) { return w.size() < 2; }))
    return;

  // Re-emit the run before `anchor`: per wave, what its units use, then
  // the units (grouped when several); a deallocation once every op of the
  // run that uses its buffer is out.
  Operation *anchor = run.back()->getNextNode();
  DenseSet<Operation *> inRun(run.begin(), run.end()), emitted;
  SmallVector<memref::DeallocOp> deallocs;
  DenseMap<Value, SmallVector<Operation *>> usersOfRoot;
  for (Operation *op : run) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      deallocs.push_back(dealloc);
      continue;
    }
    llvm::SmallSetVector<Value, 4> roots;
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (isa<BaseMemRefType>(v.getType()))
          roots.insert(zero::rootBuffer(v));
    });
    for (Value r : roots)
      usersOfRoot[r].push_back(op);
  }
  auto place = [&](Operation *op, Operation *before) {
    op->moveBefore(before);
    emitted.insert(op);
  };
  std::function<void(Operation *)> emitDefs = [&](Operation *op) {
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (!def || !inRun.contains(def) || emitted.contains(def) ||
            op->isAncestor(def))
          continue;
        emitDefs(def);
        place(def, anchor);
      }
    });
  };
  auto flushDeallocs = [&] {
    for (memref::DeallocOp d : deallocs) {
      if (emitted.contains(d) ||
          !llvm::all_of(usersOfRoot.lookup(zero::rootBuffer(d.getMemref())),
                        [&](Operation *u) { return emitted.contains(u); }))
        continue;
      emitDefs(d);
      place(d, anchor);
    }
  };
  OpBuilder b(&getContext());
  flushDeallocs();
  for (ArrayRef<unsigned> wave : byWave) {
    for (unsigned i : wave)
      for (Operation *op : units[i].ops)
        emitDefs(op);
    if (wave.size() > 1) {
      b.setInsertionPoint(anchor);
      auto group = zero::LaunchGroupOp::create(
          b, units[wave.front()].ops.back()->getLoc());
      group.getBody().emplaceBlock();
      for (unsigned i : wave)
        for (Operation *op : units[i].ops) {
          op->moveBefore(&group.getBody().front(),
                         group.getBody().front().end());
          emitted.insert(op);
        }
      ++groups;
      grouped += wave.size();
    } else {
      for (Operation *op : units[wave.front()].ops)
        place(op, anchor);
    }
    flushDeallocs();
  }
  // What no unit used (views read after the run), in order.
  for (Operation *op : run)
    if (!emitted.contains(op)) {
      emitDefs(op);
      place(op, anchor);
    }
}

void ZeroGPUGroupLaunchesPass::runOnOperation() {
  ModuleOp module = getOperation();
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal() || fn->hasAttr(zero::kKernelAttr))
      continue;
    SmallVector<Block *> blocks;
    fn.walk([&](Block *block) {
      Operation *parent = block->getParentOp();
      // Not inside what becomes one kernel already.
      for (Operation *p = parent; p && p != fn; p = p->getParentOp())
        if (zero::isKernelRoot(p))
          return;
      blocks.push_back(block);
    });
    for (Block *block : blocks) {
      SmallVector<SmallVector<Operation *>> runs(1);
      for (Operation &op : *block) {
        if (isMovable(&op) || isLaunch(&op)) {
          runs.back().push_back(&op);
          continue;
        }
        // A GEMM's zero fill right before it is its beta = 0: it stays.
        if (Operation *fill = zero::initializingFill(&op))
          while (!runs.back().empty()) {
            Operation *last = runs.back().pop_back_val();
            if (last == fill)
              break;
          }
        if (!runs.back().empty())
          runs.emplace_back();
      }
      for (ArrayRef<Operation *> run : runs)
        if (!run.empty() && run.back()->getNextNode())
          groupRun(run);
    }
  }
  NamedAttrList counts;
  if (auto kernels = module->getAttrOfType<DictionaryAttr>("zero.kernels"))
    counts.append(kernels.getValue());
  Builder b(module.getContext());
  counts.set("launch_groups", b.getI64IntegerAttr(groups));
  counts.set("grouped_launches", b.getI64IntegerAttr(grouped));
  module->setAttr("zero.kernels", counts.getDictionary(module.getContext()));
}

} // namespace
