//===- PadInPlace.cpp - padded and joined operands written where they go
//-*- C++ -*-===//
//
// A tensor.pad bufferizes to a fill of the whole padded buffer and a copy
// of the source into it: the logits' gradient padded for its GEMMs was
// 823 MB filled, written, copied and held twice at the step's peak. When
// the source is an op's fresh result, the op can write into the padded
// buffer's interior instead, and only the border is filled. A concat (the
// Q, K and V gradients joined for the QKV weight's GEMMs) is slices
// inserted into one buffer: each fresh operand is written in its slice.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/Reshapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUPADINPLACE
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// A fresh result: the op that computes it (a DPS op, or the last insert of
/// blocks written into one `bufferization.alloc_tensor`, as
/// `zero-split-masked-matmuls` writes a GEMM), the destination it writes
/// (an empty tensor, or the alloc_tensor) and the reshapes (each used
/// once) between it and the value used (the last one nearest the use).
struct Fresh {
  Operation *producer = nullptr;
  Operation *storage = nullptr;
  SmallVector<Operation *> views;
  explicit operator bool() const { return producer; }
  /// Where a replacement destination must be defined.
  Operation *start() const {
    return isa<bufferization::AllocTensorOp>(storage) ? storage : producer;
  }
};

/// Blocks inserted into one alloc_tensor that nothing else uses, ending at
/// `last`: the alloc_tensor, or null.
Operation *blockStorage(tensor::InsertSliceOp last) {
  tensor::InsertSliceOp insert = last;
  while (auto prev = insert.getDest().getDefiningOp<tensor::InsertSliceOp>())
    insert = prev;
  auto alloc = insert.getDest().getDefiningOp<bufferization::AllocTensorOp>();
  if (!alloc || alloc.getCopy() || alloc->getBlock() != last->getBlock())
    return nullptr;
  // Each value of the chain is read by slices (a block's destination) and
  // written by the next insert only.
  for (Value v = alloc.getResult(); v != last.getResult();) {
    tensor::InsertSliceOp next;
    for (Operation *user : v.getUsers()) {
      if (isa<tensor::ExtractSliceOp>(user))
        continue;
      auto i = dyn_cast<tensor::InsertSliceOp>(user);
      if (!i || i.getDest() != v || next)
        return nullptr;
      next = i;
    }
    if (!next)
      return nullptr;
    v = next.getResult();
  }
  return alloc;
}

/// The fresh result `v` views, through reshapes that each have one use;
/// empty when `v` is not such a result.
Fresh freshProducer(Value v) {
  Fresh f;
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    if (!def->hasOneUse())
      return {};
    f.views.push_back(def);
    v = def->getOperand(0);
  }
  if (!v.hasOneUse())
    return {};
  std::reverse(f.views.begin(), f.views.end());
  if (auto last = v.getDefiningOp<tensor::InsertSliceOp>()) {
    // The blocks are GEMMs and fills, which write strided views.
    if (Operation *storage = blockStorage(last)) {
      f.producer = last;
      f.storage = storage;
      return f;
    }
    return {};
  }
  // A linalg op writes any strided view, and a GEMM one whose rows and
  // batches are strided; a collective's destination, say, must be
  // contiguous.
  Operation *def = v.getDefiningOp();
  auto op = dyn_cast_or_null<DestinationStyleOpInterface>(def);
  if (!op || !isa<linalg::LinalgOp, zero::RoundedMatmulOp>(def) ||
      def->getNumResults() != 1 || !op.hasPureTensorSemantics())
    return {};
  OpOperand *init = op.getDpsInitOperand(0);
  auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
  // The op must not read its destination (a rounded matmul never does),
  // and nothing else may write it.
  auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
  if (!empty || !empty->hasOneUse() ||
      (linalgOp && linalgOp.payloadUsesValueFromOperand(init)))
    return {};
  f.producer = def;
  f.storage = empty;
  return f;
}

/// Lets the fresh result be written into `dest` (seen through the inverse
/// views) instead of its own destination.
void writeInto(RewriterBase &rewriter, const Fresh &f, Value dest) {
  dest = zero::throughInverseReshapes(rewriter, f.producer->getLoc(), dest,
                                      f.views);
  rewriter.replaceOp(f.storage, dest);
}

/// A chain of insert_slice ops into an empty tensor (tosa-to-tensor's
/// concat) that ends at `last`: its inserts from the first, when each but
/// the last is used once by the next and all are static, unit-stride and
/// disjoint (so they may come in any order); empty otherwise.
SmallVector<tensor::InsertSliceOp> insertChain(tensor::InsertSliceOp last) {
  SmallVector<tensor::InsertSliceOp> chain = {last};
  while (auto prev =
             chain.back().getDest().getDefiningOp<tensor::InsertSliceOp>()) {
    if (!prev->hasOneUse())
      return {};
    chain.push_back(prev);
  }
  if (!chain.back().getDest().getDefiningOp<tensor::EmptyOp>() ||
      chain.size() < 2)
    return {};
  std::reverse(chain.begin(), chain.end());
  for (tensor::InsertSliceOp insert : chain)
    if (!insert.hasUnitStride() || !insert.getResultType().hasStaticShape() ||
        ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
        ShapedType::isDynamicShape(insert.getStaticSizes()) ||
        insert->getBlock() != last->getBlock())
      return {};
  // Disjoint: any two differ in some dimension by a whole extent.
  for (auto [i, x] : llvm::enumerate(chain))
    for (tensor::InsertSliceOp y : ArrayRef(chain).drop_front(i + 1)) {
      bool apart = false;
      for (auto [xo, xs, yo, ys] :
           llvm::zip(x.getStaticOffsets(), x.getStaticSizes(),
                     y.getStaticOffsets(), y.getStaticSizes()))
        apart |= xo + xs <= yo || yo + ys <= xo;
      if (!apart)
        return {};
    }
  return chain;
}

struct ZeroGPUPadInPlacePass
    : zero::cuda::impl::ZeroGPUPadInPlaceBase<ZeroGPUPadInPlacePass> {
  void runOnOperation() override {
    SmallVector<tensor::PadOp> pads;
    getOperation()->walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    IRRewriter rewriter(&getContext());
    for (tensor::PadOp pad : pads) {
      Value padValue = pad.getConstantPaddingValue();
      TypedAttr padAttr;
      RankedTensorType type = pad.getResultType();
      RankedTensorType srcType = pad.getSourceType();
      if (!padValue || !matchPattern(padValue, m_Constant(&padAttr)) ||
          !type.hasStaticShape() || !srcType.hasStaticShape() ||
          !llvm::all_of(pad.getStaticLow(), [](int64_t l) { return l == 0; }))
        continue;
      Fresh fresh = freshProducer(pad.getSource());
      if (!fresh)
        continue;
      Location loc = pad.getLoc();
      // The padded buffer, allocated where the producer's was, its border
      // filled: one slab per padded dimension.
      rewriter.setInsertionPoint(fresh.start());
      padValue = arith::ConstantOp::create(rewriter, loc, padAttr);
      unsigned rank = type.getRank();
      Value padded = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                             type.getElementType());
      SmallVector<OpFoldResult> zeros(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> ones(rank, rewriter.getIndexAttr(1));
      SmallVector<OpFoldResult> full =
          getAsIndexOpFoldResult(&getContext(), type.getShape());
      for (unsigned d = 0; d < rank; ++d) {
        int64_t border = type.getDimSize(d) - srcType.getDimSize(d);
        if (border == 0)
          continue;
        SmallVector<OpFoldResult> offsets = zeros, sizes = full;
        offsets[d] = rewriter.getIndexAttr(srcType.getDimSize(d));
        sizes[d] = rewriter.getIndexAttr(border);
        Value slab = tensor::ExtractSliceOp::create(rewriter, loc, padded,
                                                    offsets, sizes, ones);
        Value filled =
            linalg::FillOp::create(rewriter, loc, padValue, slab).result();
        padded = tensor::InsertSliceOp::create(rewriter, loc, filled, padded,
                                               offsets, sizes, ones);
      }
      // The producer writes the interior, seen through the inverse views.
      SmallVector<OpFoldResult> interior =
          getAsIndexOpFoldResult(&getContext(), srcType.getShape());
      Value dest = tensor::ExtractSliceOp::create(rewriter, loc, padded, zeros,
                                                  interior, ones);
      writeInto(rewriter, fresh, dest);
      rewriter.setInsertionPoint(pad);
      rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
          pad, pad.getSource(), padded, zeros, interior, ones);
    }

    // A concat (tosa-to-tensor's chain of insert_slice ops into an empty
    // tensor) copies each operand into its slice. The chain is rebuilt with
    // each fresh operand's insert right after its producer (and its
    // reshapes), the producer writing an extract_slice of the chain so far,
    // which bufferizes in place; the other operands' inserts follow where
    // the chain ended. Its slices are disjoint, so their order is free.
    SmallVector<tensor::InsertSliceOp> lasts;
    getOperation()->walk([&](tensor::InsertSliceOp insert) {
      if (!insert->hasOneUse() ||
          !isa<tensor::InsertSliceOp>(*insert->user_begin()))
        lasts.push_back(insert);
    });
    for (tensor::InsertSliceOp last : lasts) {
      SmallVector<tensor::InsertSliceOp> chain = insertChain(last);
      if (chain.empty())
        continue;
      SmallVector<std::pair<tensor::InsertSliceOp, Fresh>> fresh;
      SmallVector<tensor::InsertSliceOp> others;
      for (tensor::InsertSliceOp insert : chain) {
        Fresh f = freshProducer(insert.getSource());
        if (f && f.producer->getBlock() == last->getBlock())
          fresh.push_back({insert, f});
        else
          others.push_back(insert);
      }
      if (fresh.empty())
        continue;
      llvm::sort(fresh, [](const auto &a, const auto &b) {
        return a.second.start()->isBeforeInBlock(b.second.start());
      });
      // An empty tensor in an enclosing block (the chain in a loop body)
      // dominates the producers already.
      Operation *root = chain.front().getDest().getDefiningOp();
      Operation *first = fresh.front().second.start();
      if (root->getBlock() == first->getBlock() && first->isBeforeInBlock(root))
        root->moveBefore(first);
      Value sofar = root->getResult(0);
      // `insert`'s slice of the chain so far, and its source put there.
      auto slice = [&](tensor::InsertSliceOp insert) -> Value {
        return tensor::ExtractSliceOp::create(
            rewriter, insert.getLoc(), insert.getSourceType(), sofar,
            insert.getMixedOffsets(), insert.getMixedSizes(),
            insert.getMixedStrides());
      };
      auto reinsert = [&](tensor::InsertSliceOp insert) {
        sofar = tensor::InsertSliceOp::create(
            rewriter, insert.getLoc(), insert.getSource(), sofar,
            insert.getMixedOffsets(), insert.getMixedSizes(),
            insert.getMixedStrides());
      };
      for (auto &[insert, f] : fresh) {
        rewriter.setInsertionPoint(f.start());
        writeInto(rewriter, f, slice(insert));
        // The reshapes (each used once, by the next) follow the producer.
        Operation *after = f.producer;
        for (Operation *view : f.views) {
          view->moveAfter(after);
          after = view;
        }
        rewriter.setInsertionPointAfter(after);
        reinsert(insert);
      }
      rewriter.setInsertionPoint(last);
      for (tensor::InsertSliceOp insert : others)
        reinsert(insert);
      rewriter.replaceAllUsesWith(last.getResult(), sofar);
      for (tensor::InsertSliceOp insert : llvm::reverse(chain))
        rewriter.eraseOp(insert);
    }
  }
};
} // namespace
