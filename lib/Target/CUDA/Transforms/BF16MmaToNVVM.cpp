//===- BF16MmaToNVVM.cpp - bf16 warp matrix products to NVVM ---*- C++ -*-===//
//
// nvgpu.mma.sync is the warp-level matrix product a kernel and its host
// copy share, but upstream's NVGPU-to-NVVM conversion deduces no PTX type
// for bf16 operands. nvvm.mma.sync takes them as the 32-bit registers PTX
// packs two bf16 values in, which is all this adds.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUBF16MMATONVVM
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// Whether `mma` is m16n8k16 on bf16 with f32 accumulators.
bool isBF16Mma(nvgpu::MmaSyncOp mma) {
  auto a = cast<VectorType>(mma.getMatrixA().getType());
  auto b = cast<VectorType>(mma.getMatrixB().getType());
  auto c = cast<VectorType>(mma.getMatrixC().getType());
  return ArrayRef<int64_t>(mma.getMmaShapeAsArray()) ==
             ArrayRef<int64_t>{16, 8, 16} &&
         a.getShape() == ArrayRef<int64_t>{4, 2} &&
         b.getShape() == ArrayRef<int64_t>{2, 2} &&
         c.getShape() == ArrayRef<int64_t>{2, 2} &&
         a.getElementType().isBF16() && b.getElementType().isBF16() &&
         c.getElementType().isF32();
}

struct ZeroGPUBF16MmaToNVVMPass
    : zero::cuda::impl::ZeroGPUBF16MmaToNVVMBase<ZeroGPUBF16MmaToNVVMPass> {
  void runOnOperation() override {
    SmallVector<nvgpu::MmaSyncOp> mmas;
    getOperation()->walk([&](nvgpu::MmaSyncOp mma) {
      if (isBF16Mma(mma))
        mmas.push_back(mma);
    });
    for (nvgpu::MmaSyncOp mma : mmas) {
      OpBuilder b(mma);
      Location loc = mma.getLoc();
      Type i32 = b.getI32Type(), f32 = b.getF32Type();
      // Each row of an operand is one register: two bf16, the first in
      // the low half.
      auto registers = [&](Value v) {
        SmallVector<Value> regs;
        auto t = cast<VectorType>(v.getType());
        for (int64_t r = 0; r < t.getDimSize(0); ++r) {
          Value row = vector::ExtractOp::create(b, loc, v, r);
          Value word =
              vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), row);
          regs.push_back(vector::ExtractOp::create(b, loc, word, 0));
        }
        return regs;
      };
      SmallVector<Value> a = registers(mma.getMatrixA());
      SmallVector<Value> bRegs = registers(mma.getMatrixB());
      SmallVector<Value> c;
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t h = 0; h < 2; ++h)
          c.push_back(vector::ExtractOp::create(b, loc, mma.getMatrixC(),
                                                ArrayRef<int64_t>{r, h}));
      auto resultTy = LLVM::LLVMStructType::getLiteral(
          b.getContext(), SmallVector<Type>(4, f32));
      auto bf16 = NVVM::MMATypesAttr::get(b.getContext(), NVVM::MMATypes::bf16);
      Value d = NVVM::MmaOp::create(
          b, loc, resultTy, NVVM::MMAShapeAttr::get(b.getContext(), 16, 8, 16),
          /*b1Op=*/nullptr, /*intOverflowBehavior=*/nullptr,
          NVVM::MMALayout::row, NVVM::MMALayout::col, bf16, bf16, a, bRegs, c);
      SmallVector<Value> elements;
      for (int64_t e = 0; e < 4; ++e)
        elements.push_back(LLVM::ExtractValueOp::create(b, loc, d, e));
      mma.getRes().replaceAllUsesWith(vector::FromElementsOp::create(
          b, loc, cast<VectorType>(mma.getRes().getType()), elements));
      mma.erase();
    }
  }
};

} // namespace
