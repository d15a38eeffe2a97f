//===- BiasIntoGemms.cpp - a broadcast bias as the GEMM's C -----*- C++ -*-===//
//
// A linear layer's bias is added to its GEMM's product by an elementwise
// kernel that reads the product back from memory (GPT-2 XL's QKV
// projection: 79 MB read and written again, 50 us of 130). cuBLAS adds C
// to the product when beta is 1, so the GEMM can start from the bias
// broadcast into its destination, which costs one write of C instead.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CUDA/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"
#include "zero-opt/Dialect/Zero/Utils/Reshapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUBIASINTOGEMMS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

/// A GEMM on tensors whose destination it may start from: a
/// `zero.rounded_matmul` into an empty tensor, or a linalg contraction
/// into a zero fill of one. Null when `op` is neither.
OpOperand *freshGemmInit(Operation *op) {
  if (op->getNumResults() != 1)
    return nullptr;
  if (auto mm = dyn_cast<zero::RoundedMatmulOp>(op)) {
    if (mm.getAccumulate() || !mm.getInit().getDefiningOp<tensor::EmptyOp>())
      return nullptr;
    return &mm.getInitMutable();
  }
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      !zero::getGemmLoops(linalgOp))
    return nullptr;
  OpOperand *init = linalgOp.getDpsInitOperand(0);
  auto fill = init->get().getDefiningOp<linalg::FillOp>();
  if (!fill || !zero::isZeroFill(fill) ||
      !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() ||
      !fill->hasOneUse())
    return nullptr;
  return init;
}

/// How a user adds the bias: the generic, the input that is the GEMM's
/// value (read through the identity) and the input that is the bias.
struct BiasUse {
  linalg::GenericOp op;
  OpOperand *value, *bias;
};

/// `g`'s use of `value` when `g` only adds another input to it: its body
/// yields one `arith.addf` of the two, its result read through the
/// identity. Once the GEMM has added the bias, `g` is a copy and goes: a
/// user that computes more keeps reading the product, and the bias it
/// also read costs nothing beside it, while the broadcast into C costs a
/// write of C.
std::optional<BiasUse> biasUse(linalg::GenericOp g, Value value) {
  if (!g.hasPureTensorSemantics() || g.hasIndexSemantics() ||
      g.getNumDpsInputs() != 2 || g->getNumResults() != 1 ||
      !g.getIndexingMapMatchingResult(g->getResult(0)).isIdentity())
    return std::nullopt;
  Block *body = g.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  if (body->getOperations().size() != 2 ||
      !yield.getValues()[0].getDefiningOp<arith::AddFOp>())
    return std::nullopt;
  OpOperand *valueOperand = nullptr;
  for (OpOperand *in : g.getDpsInputOperands())
    if (in->get() == value) {
      if (valueOperand)
        return std::nullopt;
      valueOperand = in;
    }
  if (!valueOperand || !g.getMatchingIndexingMap(valueOperand).isIdentity())
    return std::nullopt;
  BlockArgument arg = g.getMatchingBlockArgument(valueOperand);
  OpOperand *bias = nullptr;
  for (Operation *user : arg.getUsers()) {
    auto add = dyn_cast<arith::AddFOp>(user);
    if (!add)
      return std::nullopt;
    Value other = add.getLhs() == arg ? add.getRhs() : add.getLhs();
    auto otherArg = dyn_cast<BlockArgument>(other);
    if (!otherArg || otherArg.getOwner() != g.getBody() ||
        otherArg.getArgNumber() >= g.getNumDpsInputs())
      return std::nullopt;
    OpOperand *in = g.getDpsInputOperand(otherArg.getArgNumber());
    if (in == valueOperand || (bias && bias != in))
      return std::nullopt;
    bias = in;
  }
  if (!bias || getElementTypeOrSelf(bias->get()) != arg.getType())
    return std::nullopt;
  return BiasUse{g, valueOperand, bias};
}

/// `g` without input `drop`, which its body no longer reads; its result
/// is its own input's value where it only copies it.
void dropInput(RewriterBase &rewriter, linalg::GenericOp g, OpOperand *drop) {
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : g->getOpOperands()) {
    if (&operand == drop)
      continue;
    if (g.isDpsInput(&operand))
      ins.push_back(operand.get());
    maps.push_back(g.getMatchingIndexingMap(&operand));
  }
  unsigned dropped = drop->getOperandNumber();
  rewriter.setInsertionPoint(g);
  auto lean = linalg::GenericOp::create(
      rewriter, g.getLoc(), g.getResultTypes(), ins, g.getDpsInits(), maps,
      g.getIteratorTypesArray());
  lean->setDiscardableAttrs(g->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(g.getRegion(), lean.getRegion(),
                              lean.getRegion().end());
  lean.getBody()->eraseArgument(dropped);
  rewriter.replaceOp(g, lean);
  // A copy of one input read through the identity into the result.
  auto yield = cast<linalg::YieldOp>(lean.getBody()->getTerminator());
  if (lean->getNumResults() != 1 || &lean.getBody()->front() != yield)
    return;
  auto arg = dyn_cast<BlockArgument>(yield.getValues()[0]);
  if (!arg || arg.getArgNumber() >= lean.getNumDpsInputs())
    return;
  OpOperand *in = lean.getDpsInputOperand(arg.getArgNumber());
  if (in->get().getType() == lean->getResult(0).getType() &&
      lean.getMatchingIndexingMap(in).isIdentity() &&
      lean.getIndexingMapMatchingResult(lean->getResult(0)).isIdentity())
    rewriter.replaceOp(lean, in->get());
}

/// Whether `v` is available before `op`, after moving the reshapes that
/// compute it from such a value (a parameter viewed in the users' rank)
/// up to `op`.
bool hoistBefore(Value v, Operation *op, DominanceInfo &dominance) {
  SmallVector<Operation *> reshapes;
  while (!dominance.properlyDominates(v, op)) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def) ||
        def->getBlock() != op->getBlock())
      return false;
    reshapes.push_back(def);
    v = def->getOperand(0);
  }
  for (Operation *reshape : llvm::reverse(reshapes))
    reshape->moveBefore(op);
  return true;
}

struct ZeroGPUBiasIntoGemmsPass
    : zero::cuda::impl::ZeroGPUBiasIntoGemmsBase<ZeroGPUBiasIntoGemmsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> gemms;
    getOperation()->walk([&](Operation *op) {
      if (freshGemmInit(op))
        gemms.push_back(op);
    });
    DominanceInfo dominance(getOperation());
    IRRewriter rewriter(&getContext());
    for (Operation *gemm : gemms) {
      // The value the users read: the result through reshapes used once.
      SmallVector<Operation *> chain;
      Value value = gemm->getResult(0);
      while (value.hasOneUse() &&
             isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
                 *value.getUsers().begin())) {
        chain.push_back(*value.getUsers().begin());
        value = chain.back()->getResult(0);
      }
      SmallVector<BiasUse> uses;
      for (Operation *user : value.getUsers()) {
        auto g = dyn_cast<linalg::GenericOp>(user);
        std::optional<BiasUse> use = g ? biasUse(g, value) : std::nullopt;
        if (!use) {
          uses.clear();
          break;
        }
        uses.push_back(*use);
      }
      if (uses.empty())
        continue;
      // One bias, read alike by every user, available at the GEMM.
      Value bias = uses.front().bias->get();
      AffineMap biasMap =
          uses.front().op.getMatchingIndexingMap(uses.front().bias);
      if (llvm::any_of(uses,
                       [&](BiasUse &u) {
                         return u.bias->get() != bias ||
                                u.op.getMatchingIndexingMap(u.bias) != biasMap;
                       }) ||
          !hoistBefore(bias, gemm, dominance))
        continue;
      // The bias broadcast into the users' shape, then into the GEMM's
      // destination: the GEMM adds its products to it.
      Location loc = gemm->getLoc();
      rewriter.setInsertionPoint(gemm);
      auto valueType = cast<RankedTensorType>(value.getType());
      Value empty = tensor::EmptyOp::create(rewriter, loc, valueType.getShape(),
                                            valueType.getElementType());
      AffineMap id = rewriter.getMultiDimIdentityMap(valueType.getRank());
      SmallVector<utils::IteratorType> parallel(valueType.getRank(),
                                                utils::IteratorType::parallel);
      auto broadcast = linalg::GenericOp::create(
          rewriter, loc, TypeRange{valueType}, ValueRange{bias},
          ValueRange{empty}, ArrayRef<AffineMap>{biasMap, id}, parallel,
          [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, args[0]);
          });
      Value init = zero::throughInverseReshapes(rewriter, loc,
                                                broadcast->getResult(0), chain);
      OpOperand *dest = freshGemmInit(gemm);
      Operation *old = dest->get().getDefiningOp();
      rewriter.modifyOpInPlace(gemm, [&] {
        dest->set(init);
        if (auto mm = dyn_cast<zero::RoundedMatmulOp>(gemm))
          mm.setAccumulate(true);
      });
      if (old->use_empty()) {
        Operation *fillDest = isa<linalg::FillOp>(old)
                                  ? old->getOperand(1).getDefiningOp()
                                  : nullptr;
        rewriter.eraseOp(old);
        if (fillDest && fillDest->use_empty())
          rewriter.eraseOp(fillDest);
      }
      // Each user reads the sum the GEMM wrote.
      for (BiasUse &use : uses) {
        BlockArgument arg = use.op.getMatchingBlockArgument(use.value);
        for (Operation *add : llvm::make_early_inc_range(arg.getUsers()))
          rewriter.replaceOp(add, arg);
        OpOperand *biasOperand = use.bias;
        if (use.op.getMatchingBlockArgument(biasOperand).use_empty())
          dropInput(rewriter, use.op, biasOperand);
      }
    }
  }
};
} // namespace
