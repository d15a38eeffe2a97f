//===- ExpandStridedCopies.cpp - strided memref.copy to linalg -*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUEXPANDSTRIDEDCOPIES
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

static bool isContiguous(Value v) {
  auto t = cast<MemRefType>(v.getType());
  return t.getLayout().isIdentity() || t.areTrailingDimsContiguous(t.getRank());
}

namespace {
struct ZeroCPUExpandStridedCopiesPass
    : zero::cpu::impl::ZeroCPUExpandStridedCopiesBase<
          ZeroCPUExpandStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) {
      if (!isContiguous(op.getSource()) || !isContiguous(op.getTarget()))
        copies.push_back(op);
    });
    for (memref::CopyOp op : copies) {
      OpBuilder b(op);
      linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
  }
};
} // namespace
