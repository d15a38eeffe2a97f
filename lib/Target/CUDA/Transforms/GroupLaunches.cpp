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
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUGROUPLAUNCHES
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// A buffer a launch reads or writes, with its span (and what its root may
/// alias); a bucket copy's staging side is its member's slot: `rows` rows
/// of columns [begin, end).
struct Access {
  Value buffer;
  zero::BufferSpan span;
  int64_t rows = 0, begin = 0, end = 0;
};

/// A launch: a linalg op on buffers (with the fill that initializes it), a
/// copy, or a bucket copy.
struct Unit {
  SmallVector<Operation *, 2> ops;
  SmallVector<Access> reads, writes;
  int64_t wave = 0;
};

/// Ops a run may move: allocation, deallocation, views and constants.
bool isMovable(Operation *op) {
  if (isa<memref::AllocOp, memref::DeallocOp>(op))
    return true;
  return op->getNumRegions() == 0 && (isa<ViewLikeOpInterface>(op) ||
                                      op->hasTrait<OpTrait::ConstantLike>());
}

/// A launch a group can hold: a copy, a bucket copy, or a linalg op on
/// buffers that is no GEMM (cuBLAS runs those) and writes only its outputs.
bool isLaunch(Operation *op) {
  // Copies into a step's arguments stay apart unless its calls pass
  // disjoint buffers: two arguments may be one buffer, so each would wait
  // for the last, and drag what reads it along.
  if (isa<memref::CopyOp, zero::BucketPackOp, zero::BucketUnpackOp>(op)) {
    Value written = op->getOperand(1);
    auto fn = op->getParentOfType<FunctionOpInterface>();
    return !isa<BlockArgument>(zero::rootBuffer(written)) ||
           (fn && fn->hasAttr(zero::kDisjointArgumentsAttr));
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      !zero::isKernelRoot(op) || zero::getGemmLoops(linalgOp))
    return false;
  return zero::writesOnlyOutputs(op);
}

Access whole(Value buffer) { return {buffer, zero::bufferSpan(buffer)}; }

/// What `op` reads and writes.
void addAccesses(Operation *op, Unit &u) {
  auto slot = [](auto bucket, Value member, Value staging) {
    int64_t rows = bucket.getRows();
    int64_t columns =
        cast<ShapedType>(member.getType()).getNumElements() / rows;
    Access a = whole(staging);
    a.rows = rows;
    a.begin = bucket.getOffset();
    a.end = a.begin + columns;
    return a;
  };
  if (auto pack = dyn_cast<zero::BucketPackOp>(op)) {
    u.reads.push_back(whole(pack.getSource()));
    u.writes.push_back(slot(pack, pack.getSource(), pack.getStaging()));
    return;
  }
  if (auto unpack = dyn_cast<zero::BucketUnpackOp>(op)) {
    u.reads.push_back(slot(unpack, unpack.getDest(), unpack.getStaging()));
    u.writes.push_back(whole(unpack.getDest()));
    return;
  }
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    u.reads.push_back(whole(copy.getSource()));
    u.writes.push_back(whole(copy.getTarget()));
    return;
  }
  // Every buffer the op or its body uses is read (a gather loads from
  // buffers that are no operand of the op); its outputs are written.
  llvm::SmallSetVector<Value, 8> read;
  op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      if (isa<BaseMemRefType>(v.getType()))
        read.insert(v);
  });
  for (Value v : read)
    u.reads.push_back(whole(v));
  for (OpOperand &init : cast<linalg::LinalgOp>(op).getDpsInitsMutable())
    u.writes.push_back(whole(init.get()));
}

/// The largest buffer whose lifetime may come to overlap others' (by the
/// run's length at most); from 1 MiB on, buffers keep their overlaps.
constexpr int64_t kMaxMoved = (1 << 20) - 1;

/// The bytes of kernel parameters a launch may take (PTX before ISA 8.1:
/// 4352), less room for what the lowering adds.
constexpr int64_t kMaxParameterBytes = 4096;

/// The bytes `values` take as a kernel's parameters: a memref as its
/// descriptor (two pointers, an offset, sizes and strides), a scalar as
/// eight bytes.
int64_t parameterBytes(const llvm::SetVector<Value> &values) {
  int64_t bytes = 0;
  for (Value v : values) {
    auto t = dyn_cast<MemRefType>(v.getType());
    bytes += t ? 8 * (3 + 2 * t.getRank()) : 8;
  }
  return bytes;
}

bool mayOverlap(const Access &x, const Access &y) {
  // Slots of one bucket: the same rows, apart when their columns are.
  if (x.rows && y.rows && x.buffer == y.buffer && x.rows == y.rows)
    return x.begin < y.end && y.begin < x.end;
  return zero::mayOverlap(x.span, y.span);
}

/// The accesses of the units placed so far, by root: a unit's conflicts
/// are among those of its roots and, for roots not allocated in the
/// function, those that may alias them (`zero::RootKind`), so placing a
/// run takes time in its accesses, not in pairs of its units.
class AccessIndex {
public:
  struct Entry {
    unsigned unit;
    const Access *access;
    bool write;
  };

  void add(unsigned unit, const Access &a, bool write) {
    Entry e{unit, &a, write};
    byRoot[a.span.root].push_back(e);
    if (a.span.kind != zero::RootKind::Allocated)
      notAllocated.push_back(e);
    if (a.span.kind == zero::RootKind::Unknown)
      unknown.push_back(e);
  }

  /// Calls `f` on each entry that may conflict with `a` (one of the two
  /// writes, and their bytes may meet).
  template <typename F>
  void forEachConflict(const Access &a, bool write, F f) const {
    auto scan = [&](ArrayRef<Entry> entries) {
      for (const Entry &e : entries)
        if ((write || e.write) && mayOverlap(*e.access, a))
          f(e);
    };
    auto sameRoot = [&] {
      auto it = byRoot.find(a.span.root);
      return it == byRoot.end() ? ArrayRef<Entry>() : ArrayRef(it->second);
    };
    switch (a.span.kind) {
    case zero::RootKind::Allocated:
      scan(sameRoot());
      return;
    case zero::RootKind::DisjointArgument:
      scan(sameRoot());
      scan(unknown);
      return;
    case zero::RootKind::Unknown:
      scan(notAllocated);
      return;
    }
  }

private:
  DenseMap<Value, SmallVector<Entry>> byRoot;
  SmallVector<Entry> notAllocated, unknown;
};

struct ZeroGPUGroupLaunchesPass
    : zero::cuda::impl::ZeroGPUGroupLaunchesBase<ZeroGPUGroupLaunchesPass> {
  void runOnOperation() override;

private:
  void groupRun(ArrayRef<Operation *> run);
  int64_t groups = 0, grouped = 0;
};

void ZeroGPUGroupLaunchesPass::groupRun(ArrayRef<Operation *> run) {
  // Units in program order; a fill joins the op it initializes.
  SmallVector<Unit, 0> units;
  DenseMap<Operation *, unsigned> unitOf;
  for (Operation *op : run) {
    if (!isLaunch(op))
      continue;
    // Its fills (one per output), the last units, each alone.
    SmallVector<Operation *, 2> fills = zero::initializingFills(op);
    size_t first = units.size();
    while (first > 0 && units[first - 1].ops.size() == 1 &&
           llvm::is_contained(fills, units[first - 1].ops.front()))
      --first;
    if (first + fills.size() == units.size() && !fills.empty()) {
      for (size_t u = first + 1; u < units.size(); ++u) {
        Operation *fill = units[u].ops.front();
        units[first].ops.push_back(fill);
        llvm::append_range(units[first].reads, units[u].reads);
        llvm::append_range(units[first].writes, units[u].writes);
        unitOf[fill] = first;
      }
      units.resize(first + 1);
      units.back().ops.push_back(op);
    } else {
      units.emplace_back();
      units.back().ops.push_back(op);
    }
    unitOf[op] = units.size() - 1;
    addAccesses(op, units.back());
  }
  if (units.size() < 2)
    return;

  // Who uses each buffer of the run.
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
  // Large buffers keep their lifetimes apart. A launch placed in an
  // earlier wave brings its buffers' allocations with it, and one in a
  // later wave their frees: where a large buffer the run frees was freed
  // before a large one it allocates, every user of the second stays in a
  // later wave than every user of the first, so the free still precedes
  // the allocation: no two large buffers become live together that were
  // not, and the arena's layout of them still fits.
  auto isLarge = [](Value v) {
    auto t = dyn_cast<MemRefType>(v.getType());
    return !t || !t.hasStaticShape() ||
           t.getNumElements() * t.getElementTypeBitWidth() / 8 > kMaxMoved;
  };
  auto unitsUsing = [&](Value root) {
    llvm::SmallSetVector<unsigned, 4> us;
    for (Operation *u : usersOfRoot.lookup(root))
      if (auto it = unitOf.find(u); it != unitOf.end())
        us.insert(it->second);
    return us;
  };
  DenseMap<unsigned, llvm::SmallSetVector<unsigned, 4>> after; // j: i's
  SmallVector<Value> freed;
  for (Operation *op : run) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      Value root = zero::rootBuffer(dealloc.getMemref());
      if (isLarge(root))
        freed.push_back(root);
      continue;
    }
    auto alloc = dyn_cast<memref::AllocOp>(op);
    if (!alloc || !isLarge(alloc.getResult()) || freed.empty())
      continue;
    llvm::SmallSetVector<unsigned, 4> later = unitsUsing(alloc.getResult());
    for (Value root : freed)
      for (unsigned i : unitsUsing(root))
        for (unsigned j : later)
          after[j].insert(i);
  }

  // A unit's wave is one more than the latest of the earlier units it
  // conflicts with or must follow.
  int64_t waves = 0;
  AccessIndex index;
  for (unsigned j = 0; j < units.size(); ++j) {
    Unit &u = units[j];
    auto follow = [&](unsigned i) {
      u.wave = std::max(u.wave, units[i].wave + 1);
    };
    for (const Access &a : u.reads)
      index.forEachConflict(a, false, [&](auto &e) { follow(e.unit); });
    for (const Access &a : u.writes)
      index.forEachConflict(a, true, [&](auto &e) { follow(e.unit); });
    if (auto it = after.find(j); it != after.end())
      for (unsigned i : it->second)
        if (i < j)
          follow(i);
    for (const Access &a : u.reads)
      index.add(j, a, false);
    for (const Access &a : u.writes)
      index.add(j, a, true);
    waves = std::max(waves, u.wave + 1);
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
    // Groups of the wave, in order, within a launch's parameter space.
    auto addParameters = [&](unsigned i, llvm::SetVector<Value> &into) {
      for (Operation *op : units[i].ops)
        op->walk([&](Operation *nested) {
          for (Value v : nested->getOperands())
            if (!op->isAncestor(v.getParentBlock()->getParentOp()) &&
                !matchPattern(v, m_Constant()))
              into.insert(v);
        });
    };
    SmallVector<SmallVector<unsigned>> parts(1);
    llvm::SetVector<Value> params;
    for (unsigned i : wave) {
      llvm::SetVector<Value> with = params;
      addParameters(i, with);
      if (!parts.back().empty() && parameterBytes(with) > kMaxParameterBytes) {
        parts.emplace_back();
        with.clear();
        addParameters(i, with);
      }
      parts.back().push_back(i);
      params = std::move(with);
    }
    for (ArrayRef<unsigned> part : parts) {
      if (part.empty())
        continue;
      if (part.size() < 2) {
        for (Operation *op : units[part.front()].ops)
          place(op, anchor);
        continue;
      }
      b.setInsertionPoint(anchor);
      auto group = zero::LaunchGroupOp::create(
          b, units[part.front()].ops.back()->getLoc());
      group.getBody().emplaceBlock();
      for (unsigned i : part)
        for (Operation *op : units[i].ops) {
          op->moveBefore(&group.getBody().front(),
                         group.getBody().front().end());
          emitted.insert(op);
        }
      ++groups;
      grouped += part.size();
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
  zero::setKernelCounts(
      module, {{"launch_groups", groups}, {"grouped_launches", grouped}});
}

} // namespace
