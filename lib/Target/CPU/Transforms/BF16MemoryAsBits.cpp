//===- BF16MemoryAsBits.cpp - bf16 loads and stores as i16 -----*- C++ -*-===//
//
// After zero-cpu-expand-bf16 a bf16 value is only loaded, stored and
// bitcast to or from its bits. Left as bf16, LLVM's combiner moves those
// bitcasts through selects and the vectorizer then legalizes a bf16
// vector through f32 and `__truncsfbf2`, which the system's libgcc lacks.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/Passes.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUBF16MEMORYASBITS
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

namespace {
bool isBF16(Value v) { return v.getType().isBF16(); }

/// store (bitcast i16 -> bf16 %x)  ->  store %x
void storeBits(LLVM::StoreOp op) {
  auto cast = op.getValue().getDefiningOp<LLVM::BitcastOp>();
  if (cast && isBF16(cast.getResult()) &&
      cast.getArg().getType().isInteger(16)) {
    op.getValueMutable().assign(cast.getArg());
    if (cast->use_empty())
      cast->erase();
  }
}

/// A bf16 load that is only bitcast to i16 or stored loads i16.
void loadBits(LLVM::LoadOp op, OpBuilder &b) {
  Value loaded = op.getResult();
  if (!isBF16(loaded) || loaded.use_empty())
    return;
  for (OpOperand &use : loaded.getUses()) {
    auto store = dyn_cast<LLVM::StoreOp>(use.getOwner());
    if (store && use.getOperandNumber() == 0 && !store.getVolatile_())
      continue;
    auto cast = dyn_cast<LLVM::BitcastOp>(use.getOwner());
    if (!cast || !cast.getType().isInteger(16))
      return;
  }
  loaded.setType(b.getI16Type());
  for (Operation *user : llvm::make_early_inc_range(loaded.getUsers()))
    if (auto cast = dyn_cast<LLVM::BitcastOp>(user)) {
      cast.getResult().replaceAllUsesWith(loaded);
      cast->erase();
    }
}

// One walk, no pattern driver: a step's LLVM module is large, and the
// greedy driver's folding and region simplification took minutes on it.
struct ZeroCPUBF16MemoryAsBitsPass
    : zero::cpu::impl::ZeroCPUBF16MemoryAsBitsBase<
          ZeroCPUBF16MemoryAsBitsPass> {
  void runOnOperation() override {
    OpBuilder b(&getContext());
    SmallVector<LLVM::StoreOp> stores;
    SmallVector<LLVM::LoadOp> loads;
    getOperation()->walk([&](Operation *op) {
      if (auto store = dyn_cast<LLVM::StoreOp>(op))
        stores.push_back(store);
      else if (auto load = dyn_cast<LLVM::LoadOp>(op))
        loads.push_back(load);
    });
    for (LLVM::StoreOp store : stores)
      storeBits(store);
    for (LLVM::LoadOp load : loads)
      loadBits(load, b);
  }
};
} // namespace
