//===- ClassifyBuffers.cpp - memory category of each op's buffers -*- C++
//-*-===//
//
// Tags ops with #zero.buffer<category, phase> in a FusedLoc around their
// location; the memory plan and the runtime's counters read it back from
// the memref.alloc that bufferization creates for the op.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "PartitionUtils.h"

#include "mlir/IR/Matchers.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROCLASSIFYBUFFERS
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
using Class = std::pair<MemoryCategory, Phase>;

bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

bool isScalarLike(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getNumElements() == 1;
}

/// Ops that copy, view or rearrange their first operand without computing.
bool isDataMovement(Operation *op) {
  return isa<tosa::ReshapeOp, tosa::TransposeOp, tosa::CastOp, tosa::SliceOp,
             tosa::ConcatOp, tosa::PadOp, tensor::ExtractSliceOp,
             tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
             AllGatherOp>(op);
}

class Classifier {
public:
  explicit Classifier(func::FuncOp fn) : fn(fn) {}

  void run() {
    findModelStates();
    findGradients();
    assignPhases();
    assignClasses();
  }

  DenseMap<Operation *, Class> classes;

  /// Bytes of the gradients the backward pass hands to the optimizer step:
  /// gradient values used in the optimizer phase and made before it
  /// (reshapes count once, as the buffer they view).
  int64_t residentGradientBytes() {
    DenseSet<Value> roots;
    for (Value g : grads) {
      Operation *def = g.getDefiningOp();
      if (!def || phases.lookup(def) == Phase::optimizer)
        continue;
      bool crosses = llvm::any_of(g.getUsers(), [&](Operation *u) {
        Operation *top = fn.getBody().front().findAncestorOpInBlock(*u);
        return top && phases.lookup(top) == Phase::optimizer;
      });
      if (!crosses)
        continue;
      Value root = g;
      while (Operation *d = root.getDefiningOp()) {
        if (!isa<tosa::ReshapeOp, tensor::CollapseShapeOp,
                 tensor::ExpandShapeOp>(d) ||
            !grads.count(d->getOperand(0)))
          break;
        root = d->getOperand(0);
      }
      roots.insert(root);
    }
    int64_t bytes = 0;
    for (Value r : roots) {
      auto t = cast<RankedTensorType>(r.getType());
      if (t.hasStaticShape())
        bytes += t.getNumElements() *
                 ((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
    }
    return bytes;
  }

private:
  func::FuncOp fn;
  DenseMap<Value, MemoryCategory> modelState; // parameters, optimizer state
  DenseSet<Value> grads;
  DenseMap<Operation *, Phase> phases;

  /// Arguments by role, then whatever only moves them (stage 3's gathers,
  /// transposed weights), then the outputs of in-place updates.
  void findModelStates() {
    for (BlockArgument a : fn.getArguments())
      if (auto role =
              fn.getArgAttrOfType<RoleAttr>(a.getArgNumber(), kRoleAttr)) {
        MemoryCategory c = memoryCategoryOf(role.getValue());
        if (c == MemoryCategory::parameters ||
            c == MemoryCategory::optimizer_state)
          modelState[a] = c;
      }
    fn.walk([&](Operation *op) {
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
        if (!isa<AllGatherOp>(op)) {
          for (OpResult r : op->getResults())
            if (auto it = modelState.find(dps.getTiedOpOperand(r)->get());
                it != modelState.end())
              modelState[r] = it->second;
          return;
        }
      }
      if (!isDataMovement(op) || op->getNumResults() != 1)
        return;
      auto it = modelState.find(op->getOperand(0));
      if (it == modelState.end())
        return;
      MemoryCategory c = it->second;
      // A gather's other operand is its destination; a concat must join
      // only the same kind of state.
      if (!isa<AllGatherOp>(op))
        for (Value v : op->getOperands().drop_front())
          if (isTensor(v) && !matchPattern(v, m_Constant()) &&
              modelState.lookup(v) != c)
            return;
      modelState[op->getResult(0)] = c;
    });
  }

  /// Gradients are what the optimizer updates and the gradient collectives
  /// consume, followed back through data movement, scaling, accumulation
  /// and tied sums to the backward op that computes them.
  void findGradients() {
    SmallVector<Value> work;
    fn.walk([&](Operation *op) {
      if (auto rs = dyn_cast<ReduceScatterOp>(op)) {
        if (op->hasAttr(partition::kGradScatterAttr))
          work.push_back(rs.getInput());
        return;
      }
      auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      if (!dps || isa<AllGatherOp, AllReduceOp>(op))
        return;
      // The update's inputs shaped like what it updates are the gradients
      // (of any float type: a bf16 gradient updates an fp32 master weight).
      for (Value init : dps.getDpsInits())
        if (isa<BlockArgument>(init) && modelState.count(init))
          for (Value in : dps.getDpsInputs())
            if (auto t = dyn_cast<RankedTensorType>(in.getType()))
              if (t.getShape() ==
                  cast<RankedTensorType>(init.getType()).getShape())
                work.push_back(in);
    });
    while (!work.empty()) {
      Value v = work.pop_back_val();
      if (matchPattern(v, m_Constant()) || modelState.count(v) ||
          !grads.insert(v).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
          if (OpOperand *init = loop.getTiedLoopInit(arg)) {
            work.push_back(init->get());
            work.push_back(loop.getTiedLoopYieldedValue(arg)->get());
          }
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (auto loop = dyn_cast<scf::ForOp>(def)) {
        unsigned i = cast<OpResult>(v).getResultNumber();
        work.push_back(loop.getInitArgs()[i]);
        work.push_back(loop.getYieldedValues()[i]);
      } else if (isa<AllReduceOp, ReduceScatterOp>(def)) {
        work.push_back(def->getOperand(0));
      } else if (isa<tosa::ConcatOp>(def)) {
        llvm::append_range(work, def->getOperands());
      } else if (isDataMovement(def) && !isa<AllGatherOp>(def)) {
        work.push_back(def->getOperand(0));
      } else if (isa<tosa::AddOp>(def)) {
        for (Value o : def->getOperands())
          if (o.getType() == v.getType())
            work.push_back(o);
      } else if (isa<tosa::MulOp>(def)) {
        Value a = def->getOperand(0), b = def->getOperand(1);
        if (a.getType() == v.getType() && isScalarLike(b))
          work.push_back(a);
        else if (b.getType() == v.getType() && isScalarLike(a))
          work.push_back(b);
      }
    }
  }

  /// Backward ops are marked; what consumes their values without a mark
  /// (accumulation, scatters) is backward too, unless it follows the last
  /// backward op of the function, which starts the optimizer step.
  void assignPhases() {
    DenseMap<Block *, Operation *> lastBackward;
    fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == fn)
        return;
      Phase phase = Phase::forward;
      Operation *parent = op->getParentOp();
      if (parent != fn)
        phase = phases.lookup(parent);
      auto [it, first] = lastBackward.try_emplace(op->getBlock());
      if (first)
        it->second = lastBackwardOp(*op->getBlock());
      Operation *last = it->second;
      if (op->hasAttr(kBackwardAttr)) {
        phase = Phase::backward;
      } else if (last && last->isBeforeInBlock(op)) {
        phase = parent == fn ? Phase::optimizer : Phase::backward;
      } else if (last) {
        // Constants are shared between the passes whatever marks them.
        for (Value v : op->getOperands())
          if (Operation *d = v.getDefiningOp())
            if (d->getBlock() == op->getBlock() &&
                !d->hasTrait<OpTrait::ConstantLike>() &&
                phases.lookup(d) == Phase::backward)
              phase = Phase::backward;
      }
      phases[op] = phase;
    });
  }

  void assignClasses() {
    SmallVector<Operation *> order;
    fn.walk([&](Operation *op) {
      if (llvm::any_of(op->getResults(), [](Value r) { return isTensor(r); }))
        order.push_back(op);
    });
    for (Operation *op : order) {
      MemoryCategory c = MemoryCategory::other;
      Phase phase = phases.lookup(op);
      auto state = llvm::find_if(op->getResults(),
                                 [&](Value r) { return modelState.count(r); });
      if (state != op->getResults().end()) {
        c = modelState.lookup(*state);
      } else if (llvm::any_of(op->getResults(),
                              [&](Value r) { return grads.count(r); })) {
        // A flattened, padded copy made for a collective is its buffer.
        bool staging =
            isa<tosa::ConcatOp, tosa::PadOp>(op) &&
            llvm::any_of(op->getUsers(), [](Operation *u) {
              return isa<AllReduceOp, ReduceScatterOp, AllGatherOp>(u);
            });
        c = staging ? MemoryCategory::buffers : MemoryCategory::gradients;
      } else if (isa<AllReduceOp, ReduceScatterOp, AllGatherOp>(op)) {
        c = MemoryCategory::buffers;
      } else if (phase == Phase::forward || op->hasAttr(kRecomputeAttr)) {
        // Recomputed forward values are activations held in the backward.
        c = MemoryCategory::activations;
      }
      classes[op] = {c, phase};
    }
    // Destinations take the class of what is written into them.
    for (Operation *op : llvm::reverse(order)) {
      auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      if (!dps)
        continue;
      Class cls = classes.lookup(op);
      for (OpResult r : op->getResults()) {
        Operation *init = dps.getTiedOpOperand(r)->get().getDefiningOp();
        if (init &&
            isa<tensor::EmptyOp, linalg::FillOp, bufferization::AllocTensorOp>(
                init))
          classes[init] = cls;
      }
    }
  }
};

struct ZeroClassifyBuffersPass
    : zero::impl::ZeroClassifyBuffersBase<ZeroClassifyBuffersPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!fn->hasAttr(kEntryAttr) || fn.isExternal())
      return;
    Classifier c(fn);
    c.run();
    MLIRContext *ctx = &getContext();
    fn->setAttr(
        kResidentGradientsAttr,
        IntegerAttr::get(IntegerType::get(ctx, 64), c.residentGradientBytes()));
    for (auto &[op, cls] : c.classes) {
      Location loc = op->getLoc();
      // Re-running replaces the class instead of nesting a second one.
      if (auto f = dyn_cast<FusedLoc>(loc))
        if (isa_and_nonnull<BufferClassAttr>(f.getMetadata()))
          loc = FusedLoc::get(ctx, f.getLocations());
      op->setLoc(FusedLoc::get(
          ctx, {loc}, BufferClassAttr::get(ctx, cls.first, cls.second)));
    }
  }
};
} // namespace
