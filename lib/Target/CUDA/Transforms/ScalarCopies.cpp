//===- ScalarCopies.cpp - element moves as device copies ------*- C++ -*-===//
//
// On the GPU every buffer of the step except the host-resident arguments is
// device memory. The host code of a step only moves single elements (the
// packing of per-tensor norms); each move becomes a copy between 0-d views,
// which kernel formation turns into one deduplicated kernel.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/IR/BuiltinOps.h"

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
  return role && role.getValue() == Role::hyperparameter;
}

/// Whether `op` sits in a region that kernel formation outlines whole (a
/// loop or conditional of pure compute), so it runs on the device anyway.
bool insideKernelRegion(Operation *op, func::FuncOp fn) {
  for (Operation *p = op->getParentOp(); p && p != fn; p = p->getParentOp()) {
    WalkResult r = p->walk([](Operation *nested) {
      if (isa<CallOpInterface>(nested) ||
          isa<ZeroDialect>(nested->getDialect()))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (!r.wasInterrupted())
      return true;
  }
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
    SmallVector<memref::StoreOp> moves;
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
        load.emitError() << "the step reads an element of device memory on "
                            "the host ("
                         << load.getMemRefType()
                         << "), which the CUDA target cannot do";
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
