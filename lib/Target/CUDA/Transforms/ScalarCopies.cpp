//===- ScalarCopies.cpp - element moves as device copies ------*- C++ -*-===//
//
// On the GPU every buffer of the step except the host-resident arguments is
// device memory. The host code of a step only moves single elements (the
// packing of per-tensor norms); each move becomes a copy between 0-d views,
// which kernel formation turns into one deduplicated kernel. A compute op
// that reads a host-resident scalar (the fp16 loss scale) gets its value
// instead: a kernel cannot read host memory.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUSCALARCOPIES
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;
using namespace mlir::zero;

namespace {

/// Whether `v` views an argument the host keeps in its own memory.
bool isHostResident(Value v) {
  auto arg = dyn_cast<BlockArgument>(rootBuffer(v));
  if (!arg)
    return false;
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  if (!fn)
    return false;
  auto role = fn.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), kRoleAttr);
  return role && isHostResidentRole(role.getValue());
}

/// Whether `op` sits in a region that kernel formation outlines whole (a
/// loop or conditional of pure compute), so it runs on the device anyway.
bool insideKernelRegion(Operation *op, func::FuncOp fn) {
  for (Operation *p = op->getParentOp(); p && p != fn; p = p->getParentOp())
    if (zero::isComputeOnly(p))
      return true;
  return false;
}

/// A 0-d view of element `indices` of `buffer`.
Value elementView(OpBuilder &b, Location loc, Value buffer,
                  ValueRange indices) {
  auto t = cast<MemRefType>(buffer.getType());
  SmallVector<OpFoldResult> offsets(indices.begin(), indices.end());
  SmallVector<OpFoldResult> ones(t.getRank(), b.getIndexAttr(1));
  auto viewType =
      memref::SubViewOp::inferRankReducedResultType({}, t, offsets, ones, ones);
  return memref::SubViewOp::create(b, loc, cast<MemRefType>(viewType), buffer,
                                   offsets, ones, ones);
}

/// The load and the pure scalar ops of its block computed from it, in
/// order.
SmallVector<Operation *> scalarChain(memref::LoadOp load) {
  SmallVector<Operation *> chain = {load};
  DenseSet<Operation *> in = {load};
  for (Operation *o = load->getNextNode(); o; o = o->getNextNode()) {
    if (o->getNumRegions() || !isPure(o) || o->getNumResults() != 1 ||
        isa<ShapedType>(o->getResult(0).getType()))
      continue;
    if (llvm::any_of(o->getOperands(), [&](Value v) {
          return v.getDefiningOp() && in.contains(v.getDefiningOp());
        })) {
      chain.push_back(o);
      in.insert(o);
    }
  }
  return chain;
}

/// The generic op of the load's block whose body holds `user`, if any.
linalg::GenericOp enclosingGeneric(Operation *user, Block *block) {
  for (Operation *p = user->getParentOp(); p; p = p->getParentOp())
    if (p->getBlock() == block)
      return dyn_cast<linalg::GenericOp>(p);
  return nullptr;
}

/// Whether everything computed from `load` is used only inside the bodies
/// of generic ops after it in its block.
bool sinkable(memref::LoadOp load) {
  SmallVector<Operation *> chain = scalarChain(load);
  DenseSet<Operation *> in(chain.begin(), chain.end());
  for (Operation *op : chain)
    for (Operation *user : op->getUsers()) {
      if (in.contains(user))
        continue;
      linalg::GenericOp g = enclosingGeneric(user, load->getBlock());
      if (!g || g->isBeforeInBlock(load))
        return false;
    }
  return true;
}

/// `g` as a new op with `inputs` and indexing `maps` (the outputs' too),
/// holding its body and attributes; `g` is left for the caller to erase.
linalg::GenericOp withInputs(OpBuilder &b, linalg::GenericOp g,
                             ValueRange inputs, ArrayRef<AffineMap> maps) {
  auto n = linalg::GenericOp::create(b, g.getLoc(), g->getResultTypes(), inputs,
                                     g.getOutputs(), maps,
                                     g.getIteratorTypesArray());
  n->setDiscardableAttrs(g->getDiscardableAttrDictionary());
  n.getRegion().takeBody(g.getRegion());
  return n;
}

/// Makes the generic ops that use the scalar read it from device memory
/// themselves: a 0-d input broadcast to every iteration, and the scalar
/// ops recomputed from it in their bodies.
void sink(memref::LoadOp load) {
  SmallVector<Operation *> chain = scalarChain(load);
  DenseSet<Operation *> in(chain.begin(), chain.end());
  SetVector<linalg::GenericOp> generics;
  for (Operation *op : chain)
    for (Operation *user : op->getUsers())
      if (!in.contains(user))
        generics.insert(enclosingGeneric(user, load->getBlock()));
  SmallVector<linalg::GenericOp> ordered(generics.begin(), generics.end());
  llvm::sort(ordered, [](linalg::GenericOp a, linalg::GenericOp b) {
    return a->isBeforeInBlock(b);
  });
  OpBuilder b(load);
  Location loc = load.getLoc();
  Value scalar = load.getMemRef();
  if (load.getMemRefType().getRank() > 0)
    scalar = elementView(b, loc, scalar, load.getIndices());
  Operation *last = load;
  for (linalg::GenericOp g : ordered) {
    b.setInsertionPoint(g);
    SmallVector<Value> inputs(g.getInputs());
    inputs.push_back(scalar);
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    unsigned at = g.getNumDpsInputs();
    maps.insert(maps.begin() + at,
                AffineMap::get(g.getNumLoops(), 0, b.getContext()));
    linalg::GenericOp n = withInputs(b, g, inputs, maps);
    Block &body = n.getRegion().front();
    IRMapping map;
    map.map(load.getResult(),
            body.insertArgument(at, load.getType(), load.getLoc()));
    OpBuilder inBody = OpBuilder::atBlockBegin(&body);
    for (Operation *op : llvm::drop_begin(chain))
      inBody.clone(*op, map);
    for (Operation *op : chain)
      op->getResult(0).replaceUsesWithIf(
          map.lookup(op->getResult(0)),
          [&](OpOperand &use) { return n->isProperAncestor(use.getOwner()); });
    g.erase();
    last = n;
  }
  // The buffer stays allocated until the last reader.
  Value source = rootBuffer(load.getMemRef());
  SmallVector<Operation *> frees;
  for (Operation *o = load->getNextNode(); o && o != last; o = o->getNextNode())
    if (auto d = dyn_cast<memref::DeallocOp>(o))
      if (rootBuffer(d.getMemref()) == source)
        frees.push_back(d);
  for (Operation *d : llvm::reverse(frees))
    d->moveAfter(last);
  for (Operation *op : llvm::reverse(chain))
    if (op->use_empty())
      op->erase();
}

/// Makes `g` use `value`, loaded on the host, in place of its 0-d input
/// `input`: a kernel argument once kernels are formed.
void passByValue(linalg::GenericOp g, OpOperand *input, Value value) {
  OpBuilder b(g);
  unsigned at = input->getOperandNumber();
  SmallVector<Value> inputs(g.getInputs());
  inputs.erase(inputs.begin() + at);
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  maps.erase(maps.begin() + at);
  linalg::GenericOp n = withInputs(b, g, inputs, maps);
  Block &body = n.getRegion().front();
  body.getArgument(at).replaceAllUsesWith(value);
  body.eraseArgument(at);
  g->replaceAllUsesWith(n->getResults());
  g.erase();
}

struct ZeroGPUScalarCopiesPass
    : zero::cuda::impl::ZeroGPUScalarCopiesBase<ZeroGPUScalarCopiesPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal() || fn->hasAttr(kKernelAttr))
        continue;
      if (failed(run(fn)))
        return signalPassFailure();
    }
  }

  LogicalResult run(func::FuncOp fn) {
    // Compute ops reading host-resident buffers: a scalar becomes a value
    // the host loads before the op (before the loop or conditional that
    // holds it, which becomes one kernel); anything else is an error.
    SmallVector<std::pair<linalg::GenericOp, OpOperand *>> byValue;
    WalkResult hosted = fn.walk([&](linalg::LinalgOp op) {
      for (OpOperand &operand : op->getOpOperands()) {
        if (!isa<MemRefType>(operand.get().getType()) ||
            !isHostResident(operand.get()))
          continue;
        auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
        if (!g || !g.isDpsInput(&operand) ||
            cast<MemRefType>(operand.get().getType()).getRank() != 0) {
          op->emitError() << "a compute op uses the host-resident buffer "
                          << operand.get().getType() << " as operand "
                          << operand.getOperandNumber()
                          << ", which a GPU kernel cannot access";
          return WalkResult::interrupt();
        }
        byValue.push_back({g, &operand});
      }
      return WalkResult::advance();
    });
    if (hosted.wasInterrupted())
      return failure();
    for (auto [g, input] : byValue) {
      Operation *anchor = g;
      for (Operation *p = g->getParentOp(); p && p != fn; p = p->getParentOp())
        if (zero::isComputeOnly(p))
          anchor = p;
      OpBuilder b(anchor);
      Value value = memref::LoadOp::create(b, g.getLoc(), input->get());
      passByValue(g, input, value);
    }

    SmallVector<memref::StoreOp> moves;
    SmallVector<memref::LoadOp> sinks;
    WalkResult r = fn.walk([&](Operation *op) {
      if (!isa<memref::LoadOp, memref::StoreOp>(op) ||
          insideKernelRegion(op, fn))
        return WalkResult::advance();
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        if (isHostResident(load.getMemRef()))
          return WalkResult::advance();
        // A device element the host would read: fine only when all it
        // does is go to another buffer.
        if (llvm::all_of(load->getUsers(), [&](Operation *u) {
              auto store = dyn_cast<memref::StoreOp>(u);
              return store && store.getValueToStore() == load.getResult() &&
                     store->getBlock() == load->getBlock();
            }))
          return WalkResult::advance();
        // A scalar that only compute ops use: they read it themselves.
        if (sinkable(load)) {
          sinks.push_back(load);
          return WalkResult::advance();
        }
        load.emitError() << "the step reads an element of device memory on "
                            "the host ("
                         << load.getMemRefType()
                         << ") and uses it outside compute ops, which the "
                            "CUDA target cannot do";
        return WalkResult::interrupt();
      }
      auto store = cast<memref::StoreOp>(op);
      if (isHostResident(store.getMemRef()))
        return WalkResult::advance();
      auto load = store.getValueToStore().getDefiningOp<memref::LoadOp>();
      if (!load || isHostResident(load.getMemRef())) {
        store.emitError() << "the step writes a value computed on the host "
                             "into device memory ("
                          << store.getMemRefType()
                          << "), which the CUDA target cannot do";
        return WalkResult::interrupt();
      }
      // The copy reads the source where the store was: nothing in between
      // may write it.
      Value target = rootBuffer(store.getMemRef());
      for (Operation *o = load->getNextNode(); o && o != store;
           o = o->getNextNode()) {
        auto other = dyn_cast<memref::StoreOp>(o);
        // Frees move after the copy (release-early put them right after
        // the load).
        if (isa<memref::LoadOp, memref::DeallocOp, memref::AllocOp>(o) ||
            isPure(o) || (other && rootBuffer(other.getMemRef()) == target))
          continue;
        store.emitError() << "cannot move this element on the device: '"
                          << o->getName()
                          << "' comes between its load and its store";
        return WalkResult::interrupt();
      }
      moves.push_back(store);
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return failure();
    for (memref::LoadOp load : sinks)
      sink(load);
    for (memref::StoreOp store : moves) {
      auto load = store.getValueToStore().getDefiningOp<memref::LoadOp>();
      // The source stays allocated until the copy has read it.
      Value source = rootBuffer(load.getMemRef());
      SmallVector<Operation *> frees;
      for (Operation *o = load->getNextNode(); o != store; o = o->getNextNode())
        if (auto d = dyn_cast<memref::DeallocOp>(o))
          if (rootBuffer(d.getMemref()) == source)
            frees.push_back(d);
      for (Operation *d : llvm::reverse(frees))
        d->moveAfter(store);
      OpBuilder b(store);
      Location loc = store.getLoc();
      Value from = elementView(b, loc, load.getMemRef(), load.getIndices());
      Value to = elementView(b, loc, store.getMemRef(), store.getIndices());
      memref::CopyOp::create(b, loc, from, to);
      store.erase();
      if (load->use_empty())
        load.erase();
    }
    return success();
  }
};

} // namespace
