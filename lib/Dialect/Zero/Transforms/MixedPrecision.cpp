//===- MixedPrecision.cpp - bf16/fp16 compute, fp32 islands ----*- C++ -*-===//
//
// Retypes a forward function in place, in program order: each op's
// operands are cast to the precision its rule asks for, and its float
// results take that precision. Values are only narrowed from f32; other
// types (f64, integers) are left alone.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Dialect/Zero/Utils/TosaBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROMIXEDPRECISION
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
/// How an op computes under mixed precision.
enum class Rule {
  /// 16-bit operands, fp32 accumulation and result.
  Gemm,
  /// fp32 operands and result.
  Statistic,
  /// No arithmetic: keeps its operands' precision.
  Move,
  /// Elementwise arithmetic: 16-bit on 16-bit operands, fp32 on fp32 ones,
  /// fp32 rounded to 16 bits on a mix; fp32 in the loss.
  Elementwise,
  /// Anything else: fp32 operands, unchanged.
  Wide,
};
} // namespace

/// The rule list. An op missing here computes in fp32 (Wide), which is
/// always correct; adding it to a 16-bit class is an optimization.
static Rule ruleFor(Operation *op) {
  if (isa<tosa::MatMulOp>(op))
    return Rule::Gemm;
  if (isa<tosa::ReduceSumOp, tosa::ReduceMaxOp, tosa::ReduceMinOp,
          tosa::ReduceProductOp, tosa::ArgMaxOp>(op))
    return Rule::Statistic;
  if (isa<tosa::ReshapeOp, tosa::TransposeOp, tosa::SliceOp, tosa::TileOp,
          tosa::ReverseOp, tosa::ConcatOp, tosa::PadOp, tosa::GatherOp,
          tosa::SelectOp, tensor::ExtractSliceOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp>(op))
    return Rule::Move;
  if (isa<tosa::AddOp, tosa::SubOp, tosa::MulOp, tosa::MaximumOp,
          tosa::MinimumOp, tosa::PowOp, tosa::AbsOp, tosa::NegateOp,
          tosa::ExpOp, tosa::LogOp, tosa::TanhOp, tosa::SigmoidOp, tosa::ErfOp,
          tosa::ReciprocalOp, tosa::RsqrtOp, tosa::FloorOp, tosa::CeilOp,
          tosa::SinOp, tosa::CosOp, tosa::ClampOp, tosa::GreaterOp,
          tosa::GreaterEqualOp, tosa::EqualOp, linalg::SoftmaxOp>(op))
    return Rule::Elementwise;
  return Rule::Wide;
}

static Type elementOf(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getElementType() : Type();
}

/// `x` rounded to nearest even in `t`.
static APFloat convertTo(APFloat x, Type t) {
  bool lost;
  x.convert(cast<FloatType>(t).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &lost);
  return x;
}

namespace {
struct ZeroMixedPrecisionPass
    : zero::impl::ZeroMixedPrecisionBase<ZeroMixedPrecisionPass> {
  using Base::Base;
  void runOnOperation() override;

private:
  Type low, wide;
  /// Values computed from constants alone: they take their user's type.
  DenseSet<Value> constant;
  /// Ops whose results some GEMM reads, directly or through other ops.
  DenseSet<Operation *> feedsGemm;

  bool isLow(Value v) { return elementOf(v) == low; }
  bool isWide(Value v) { return elementOf(v) == wide; }
  /// `v` in element type `t`, before `user`: a constant is converted, any
  /// other value cast.
  Value to(Value v, Type t, Operation *user);
  /// Casts `op`'s f32/16-bit float operands to `t` and gives its float
  /// results type `t`.
  void retype(Operation *op, Type t);
  /// Rounds `op`'s float results to 16 bits for their users.
  void roundResults(Operation *op);
};
} // namespace

Value ZeroMixedPrecisionPass::to(Value v, Type t, Operation *user) {
  if (elementOf(v) == t)
    return v;
  OpBuilder b(user);
  if (auto c = v.getDefiningOp<tosa::ConstOp>()) {
    auto attr = dyn_cast<DenseFPElementsAttr>(c.getValues());
    if (attr) {
      auto conv = attr.mapValues(t, [&](const APFloat &x) {
        return convertTo(x, t).bitcastToAPInt();
      });
      b.setInsertionPointAfter(c);
      Value nc = tosa::ConstOp::create(b, c.getLoc(), conv.getType(), conv);
      constant.insert(nc);
      return nc;
    }
  }
  TosaBuilder tb{b, user->getLoc()};
  Value r = tb.castTo(v, t);
  if (constant.contains(v))
    constant.insert(r);
  return r;
}

void ZeroMixedPrecisionPass::retype(Operation *op, Type t) {
  for (OpOperand &o : op->getOpOperands()) {
    Value v = o.get();
    if (!isLow(v) && !isWide(v))
      continue;
    // A destination of undefined values (linalg.softmax's) is made anew.
    if (auto empty = v.getDefiningOp<tensor::EmptyOp>()) {
      if (elementOf(v) != t) {
        OpBuilder b(op);
        o.set(tensor::EmptyOp::create(b, empty.getLoc(),
                                      empty.getType().getShape(), t));
      }
      continue;
    }
    o.set(to(v, t, op));
  }
  for (Value r : op->getResults())
    if (isLow(r) || isWide(r))
      r.setType(cast<RankedTensorType>(r.getType()).clone(t));
  // Bounds are attributes of the element type.
  if (auto clamp = dyn_cast<tosa::ClampOp>(op)) {
    auto conv = [&](Attribute a) -> Attribute {
      auto f = dyn_cast<FloatAttr>(a);
      return f ? FloatAttr::get(t, convertTo(f.getValue(), t)) : a;
    };
    clamp.setMinValAttr(conv(clamp.getMinValAttr()));
    clamp.setMaxValAttr(conv(clamp.getMaxValAttr()));
  }
}

void ZeroMixedPrecisionPass::roundResults(Operation *op) {
  OpBuilder b(op->getContext());
  b.setInsertionPointAfter(op);
  TosaBuilder tb{b, op->getLoc()};
  for (Value r : op->getResults()) {
    if (!isWide(r))
      continue;
    Value c = tb.castTo(r, low);
    r.replaceAllUsesExcept(c, c.getDefiningOp());
  }
}

void ZeroMixedPrecisionPass::runOnOperation() {
  func::FuncOp fn = getOperation();
  if (fn.isExternal())
    return;
  Builder bld(&getContext());
  if (precision == "bf16")
    low = bld.getBF16Type();
  else if (precision == "fp16")
    low = bld.getF16Type();
  else {
    fn.emitError() << "unknown precision '" << precision
                   << "' (expected bf16 or fp16)";
    return signalPassFailure();
  }
  wide = bld.getF32Type();
  if (fn.getBody().getBlocks().size() != 1) {
    fn.emitError("mixed precision expects a function of one block");
    return signalPassFailure();
  }
  Block &body = fn.getBody().front();

  // What feeds a GEMM: everything before the last GEMMs on each path.
  for (Operation &op : llvm::reverse(body)) {
    bool feeds = false;
    for (Operation *user : op.getUsers()) {
      Operation *u = body.findAncestorOpInBlock(*user);
      if (u && (isa<tosa::MatMulOp>(u) || feedsGemm.contains(u)))
        feeds = true;
    }
    if (feeds)
      feedsGemm.insert(&op);
  }

  // Parameters are stored in 16 bits.
  for (BlockArgument arg : body.getArguments()) {
    auto role = fn.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), kRoleAttr);
    if (role && role.getValue() == Role::parameter && isWide(arg))
      arg.setType(cast<RankedTensorType>(arg.getType()).clone(low));
  }

  for (Operation &opRef : llvm::make_early_inc_range(body)) {
    Operation *op = &opRef;
    if (isa<tosa::ConstOp, arith::ConstantOp>(op)) {
      for (Value r : op->getResults())
        constant.insert(r);
      continue;
    }
    Rule rule = ruleFor(op);
    // Values of types this pass does not narrow (f64) keep the op wide.
    bool other = false;
    SmallVector<Value> floats;
    for (Value v : op->getOperands()) {
      if (!isa_and_nonnull<FloatType>(elementOf(v)))
        continue;
      if (!isLow(v) && !isWide(v))
        other = true;
      // Constants and undefined destinations do not decide the precision.
      if (!constant.contains(v) && !v.getDefiningOp<tensor::EmptyOp>())
        floats.push_back(v);
    }
    if (other)
      rule = Rule::Wide;

    switch (rule) {
    case Rule::Gemm: {
      auto mm = cast<tosa::MatMulOp>(op);
      auto rt = cast<RankedTensorType>(mm.getType());
      if (rt.getElementType() != wide)
        break;
      OpBuilder b(op);
      bool feeds = feedsGemm.contains(op);
      Value a = to(mm.getA(), low, op), bm = to(mm.getB(), low, op);
      Value r = tosa::MatMulOp::create(b, mm.getLoc(), rt, a, bm);
      mm.getResult().replaceAllUsesWith(r);
      mm->erase();
      // Only the loss reads it: it stays fp32.
      if (feeds)
        roundResults(r.getDefiningOp());
      break;
    }
    case Rule::Statistic:
      retype(op, wide);
      break;
    case Rule::Move:
    case Rule::Elementwise: {
      if (floats.empty()) {
        // Computed from constants: converted where used.
        if (isMemoryEffectFree(op))
          for (Value r : op->getResults())
            constant.insert(r);
        break;
      }
      bool allLow = llvm::all_of(floats, [&](Value v) { return isLow(v); });
      bool allWide = llvm::all_of(floats, [&](Value v) { return isWide(v); });
      bool loss = !feedsGemm.contains(op);
      if (rule == Rule::Move) {
        retype(op, allLow ? low : wide);
        if (!allLow && !allWide && !loss)
          roundResults(op);
        break;
      }
      if (loss || !allLow) {
        retype(op, wide);
        if (!loss && !allWide)
          roundResults(op);
        break;
      }
      retype(op, low);
      break;
    }
    case Rule::Wide: {
      // 16-bit values it reads, in its regions too, are widened first.
      op->walk([&](Operation *inner) {
        for (OpOperand &o : inner->getOpOperands()) {
          Value v = o.get();
          if (!isLow(v))
            continue;
          if (inner != op && op->isAncestor(v.getParentBlock()->getParentOp()))
            continue;
          o.set(to(v, wide, op));
        }
      });
      break;
    }
    }
  }
  fn.setType(FunctionType::get(&getContext(), body.getArgumentTypes(),
                               fn.getResultTypes()));
}
