//===- ZeroDialect.cpp - zero dialect ---------------------------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/IR/GemmLoops.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zero;

#include "zero-opt/Dialect/Zero/IR/ZeroEnums.cpp.inc"
#include "zero-opt/Dialect/Zero/IR/ZeroInterfaces.cpp.inc"
#include "zero-opt/Dialect/Zero/IR/ZeroOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroOpsTypes.cpp.inc"

#define GET_OP_CLASSES
#include "zero-opt/Dialect/Zero/IR/ZeroOps.cpp.inc"

namespace {
/// Zero ops carry no region or symbol that inlining could break; a forward
/// function that uses them (zero.replica_sum) inlines into its step.
struct ZeroInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void ZeroDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "zero-opt/Dialect/Zero/IR/ZeroAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "zero-opt/Dialect/Zero/IR/ZeroOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "zero-opt/Dialect/Zero/IR/ZeroOps.cpp.inc"
      >();
  addInterfaces<ZeroInlinerInterface>();
}

BufferClassAttr mlir::zero::getBufferClass(Location loc) {
  BufferClassAttr found;
  loc->walk([&](Location l) {
    if (auto f = dyn_cast<FusedLoc>(l))
      if ((found = dyn_cast_or_null<BufferClassAttr>(f.getMetadata())))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found;
}

Operation *mlir::zero::lastBackwardOp(Block &block) {
  for (Operation &op : llvm::reverse(block)) {
    WalkResult found = op.walk([](Operation *inner) {
      return inner->hasAttr(kBackwardAttr) ? WalkResult::interrupt()
                                           : WalkResult::advance();
    });
    if (found.wasInterrupted())
      return &op;
  }
  return nullptr;
}

Location mlir::zero::recomputeLoc(Location loc) {
  MLIRContext *ctx = loc->getContext();
  return FusedLoc::get(ctx, {loc}, StringAttr::get(ctx, kRecomputeAttr));
}

bool mlir::zero::isRecomputeLoc(Location loc) {
  if (auto f = dyn_cast<FusedLoc>(loc)) {
    Attribute meta = f.getMetadata();
    if (auto mark = dyn_cast_or_null<StringAttr>(meta))
      if (mark.getValue() == kRecomputeAttr)
        return true;
    // Ops fused into one loop: a recomputed producer fused into a backward
    // op is that op's work, so the loop is recomputation only if all are.
    if (!meta)
      return !f.getLocations().empty() &&
             llvm::all_of(f.getLocations(), isRecomputeLoc);
    return llvm::any_of(f.getLocations(), isRecomputeLoc);
  }
  if (auto c = dyn_cast<CallSiteLoc>(loc))
    return isRecomputeLoc(c.getCallee()) || isRecomputeLoc(c.getCaller());
  if (auto n = dyn_cast<NameLoc>(loc))
    return isRecomputeLoc(n.getChildLoc());
  return false;
}

std::optional<unsigned>
mlir::zero::findPerReplicaArgument(Value v, FunctionOpInterface fn,
                                   llvm::function_ref<bool(Operation *)> stop) {
  Block *entry = &fn.getFunctionBody().front();
  DenseSet<Value> seen;
  SmallVector<Value> work = {v};
  while (!work.empty()) {
    Value d = work.pop_back_val();
    if (!seen.insert(d).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(d)) {
      if (arg.getOwner() != entry)
        continue;
      auto role = fn.getArgAttrOfType<RoleAttr>(arg.getArgNumber(), kRoleAttr);
      if (!role || role.getValue() == Role::input ||
          role.getValue() == Role::rng)
        return arg.getArgNumber();
      continue;
    }
    Operation *def = d.getDefiningOp();
    if (!stop || !stop(def))
      llvm::append_range(work, def->getOperands());
  }
  return std::nullopt;
}

bool mlir::zero::isHostResidentRole(Role role) {
  return role == Role::hyperparameter || role == Role::rng;
}

MemoryCategory mlir::zero::memoryCategoryOf(Role role) {
  switch (role) {
  case Role::parameter:
  case Role::buffer:
    return MemoryCategory::parameters;
  case Role::gradient:
    return MemoryCategory::gradients;
  case Role::optimizer_state:
  case Role::master_weight:
    return MemoryCategory::optimizer_state;
  case Role::input:
    return MemoryCategory::activations;
  default:
    return MemoryCategory::other;
  }
}

/// Parameter, gradient and state tensors of an update must agree in type;
/// with a master weight, the states and the master agree, the parameter is
/// a narrower float of the same shape, and the gradient has that shape.
static LogicalResult verifyUpdateTypes(Operation *op, Value param, Value grad,
                                       Value newParam, Value master,
                                       Value newMaster, ValueRange states) {
  auto pt = cast<RankedTensorType>(param.getType());
  if (newParam.getType() != pt)
    return op->emitOpError("updated parameter type differs from the "
                           "parameter's");
  if (!master) {
    SmallVector<Value> same = {grad};
    llvm::append_range(same, states);
    for (Value v : same)
      if (v.getType() != pt)
        return op->emitOpError() << "expects parameter, gradient and state of "
                                    "the same type, got "
                                 << pt << " and " << v.getType();
    if (newMaster)
      return op->emitOpError("returns a master weight without taking one");
    return success();
  }
  auto mt = cast<RankedTensorType>(master.getType());
  if (!newMaster || newMaster.getType() != mt)
    return op->emitOpError("returns the updated master weight, of the "
                           "master's type");
  for (Value v : states)
    if (v.getType() != mt)
      return op->emitOpError() << "expects the master weight and the states "
                                  "of one type, got "
                               << mt << " and " << v.getType();
  auto gt = cast<RankedTensorType>(grad.getType());
  if (pt.getShape() != mt.getShape() || gt.getShape() != mt.getShape())
    return op->emitOpError("expects parameter, gradient and master weight of "
                           "one shape");
  unsigned w = mt.getElementType().getIntOrFloatBitWidth();
  if (pt.getElementTypeBitWidth() >= w || gt.getElementTypeBitWidth() > w)
    return op->emitOpError() << "expects a parameter narrower than its master "
                                "weight and a gradient no wider, got "
                             << pt << " and " << gt << " for " << mt;
  return success();
}

//===----------------------------------------------------------------------===//
// AdamOp
//===----------------------------------------------------------------------===//

void AdamOp::build(OpBuilder &b, OperationState &state, Value param, Value grad,
                   Value expAvg, Value expAvgSq, Value master, Value lr,
                   Value step, Value gradScale, double beta1, double beta2,
                   double eps, double weightDecay, bool decoupled) {
  Type s = expAvg.getType();
  build(b, state, param.getType(), s, s, master ? master.getType() : Type(),
        param, grad, expAvg, expAvgSq, master, lr, step, gradScale,
        b.getF64FloatAttr(beta1), b.getF64FloatAttr(beta2),
        b.getF64FloatAttr(eps), b.getF64FloatAttr(weightDecay),
        decoupled ? b.getUnitAttr() : nullptr);
}

LogicalResult AdamOp::verify() {
  if (getBeta1().convertToDouble() < 0 || getBeta1().convertToDouble() >= 1 ||
      getBeta2().convertToDouble() < 0 || getBeta2().convertToDouble() >= 1)
    return emitOpError("expects betas in [0, 1)");
  return verifyUpdateTypes(
      *this, getParam(), getGrad(), getNewParam(), getMaster(), getNewMaster(),
      {getExpAvg(), getExpAvgSq(), getNewExpAvg(), getNewExpAvgSq()});
}

Value AdamOp::getParameter() { return getParam(); }
Value AdamOp::getGradient() { return getGrad(); }
OperandRange AdamOp::getStateOperands() {
  return getOperation()->getOperands().slice(2, getMaster() ? 3 : 2);
}
Value AdamOp::getUpdatedParameter() { return getNewParam(); }
ResultRange AdamOp::getUpdatedStates() {
  return getOperation()->getResults().drop_front();
}
Value AdamOp::getMasterWeight() { return getMaster(); }

//===----------------------------------------------------------------------===//
// SGDOp
//===----------------------------------------------------------------------===//

Value SGDOp::getMomentumBuffer() {
  return getMomentum().convertToDouble() != 0.0 && !getStates().empty()
             ? getStates().front()
             : Value();
}
Value SGDOp::getMasterWeightState() {
  return getMaster() && !getStates().empty() ? getStates().back() : Value();
}
Value SGDOp::getNewMomentumBuffer() {
  return getMomentum().convertToDouble() != 0.0 && !getNewStates().empty()
             ? getNewStates().front()
             : Value();
}
Value SGDOp::getNewMaster() {
  return getMaster() && !getNewStates().empty() ? getNewStates().back()
                                                : Value();
}

LogicalResult SGDOp::verify() {
  bool hasMomentum = getMomentum().convertToDouble() != 0.0;
  size_t expected = (hasMomentum ? 1 : 0) + (getMaster() ? 1 : 0);
  if (getStates().size() != expected)
    return emitOpError("takes a momentum buffer iff momentum is nonzero, then "
                       "the master weight iff `master` is set");
  if (getNewStates().size() != expected)
    return emitOpError("returns one updated state per state");
  if (getNesterov() && (!hasMomentum || getDampening().convertToDouble() != 0))
    return emitOpError("nesterov needs momentum and zero dampening");
  SmallVector<Value> states;
  if (hasMomentum) {
    states.push_back(getMomentumBuffer());
    states.push_back(getNewMomentumBuffer());
  }
  return verifyUpdateTypes(*this, getParam(), getGrad(), getNewParam(),
                           getMasterWeightState(), getNewMaster(), states);
}

Value SGDOp::getParameter() { return getParam(); }
Value SGDOp::getGradient() { return getGrad(); }
OperandRange SGDOp::getStateOperands() { return getStates(); }
Value SGDOp::getUpdatedParameter() { return getNewParam(); }
ResultRange SGDOp::getUpdatedStates() { return getNewStates(); }
Value SGDOp::getMasterWeight() { return getMasterWeightState(); }

//===----------------------------------------------------------------------===//
// AdagradOp
//===----------------------------------------------------------------------===//

LogicalResult AdagradOp::verify() {
  return verifyUpdateTypes(*this, getParam(), getGrad(), getNewParam(),
                           getMaster(), getNewMaster(),
                           {getSum(), getNewSum()});
}

Value AdagradOp::getParameter() { return getParam(); }
Value AdagradOp::getGradient() { return getGrad(); }
OperandRange AdagradOp::getStateOperands() {
  return getOperation()->getOperands().slice(2, getMaster() ? 2 : 1);
}
Value AdagradOp::getUpdatedParameter() { return getNewParam(); }
ResultRange AdagradOp::getUpdatedStates() {
  return getOperation()->getResults().drop_front();
}
Value AdagradOp::getMasterWeight() { return getMaster(); }

//===----------------------------------------------------------------------===//
// GradientOp
//===----------------------------------------------------------------------===//

LogicalResult GradientOp::verify() {
  auto yt = cast<RankedTensorType>(getY().getType());
  if (yt.getNumElements() != 1 || !isa<FloatType>(yt.getElementType()))
    return emitOpError("expects a floating-point scalar y, got ") << yt;
  if (getXs().size() != getGrads().size())
    return emitOpError("expects one gradient per x");
  for (auto [x, g] : llvm::zip(getXs(), getGrads()))
    if (x.getType() != g.getType())
      return emitOpError("gradient type ")
             << g.getType() << " differs from its x " << x.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// ClipGradNormOp
//===----------------------------------------------------------------------===//

LogicalResult ClipGradNormOp::verify() {
  if (getGrads().size() != getClipped().size())
    return emitOpError("returns one clipped gradient per gradient");
  for (auto [g, c] : llvm::zip(getGrads(), getClipped()))
    if (g.getType() != c.getType())
      return emitOpError("clipped gradient type differs from its gradient");
  if (getMaxNorm().convertToDouble() < 0)
    return emitOpError("expects max_norm >= 0");
  if (getSharded() && !getWorldSize())
    return emitOpError("sharded norms need world_size");
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// Shape rules: all_reduce keeps the shape, reduce_scatter divides a 1-D
/// input by the world size, all_gather multiplies it.
static LogicalResult verifyCollective(Operation *op, int64_t factorIn,
                                      int64_t factorOut, bool async = false) {
  auto in = cast<ShapedType>(op->getOperand(0).getType());
  auto out = cast<ShapedType>(op->getOperand(1).getType());
  if (in.getElementType() != out.getElementType())
    return op->emitOpError("input and destination element types differ");
  if (isa<TensorType>(in) != isa<TensorType>(out))
    return op->emitOpError("expects both tensors or both buffers");
  if (!async && isa<TensorType>(in) != (op->getNumResults() == 1))
    return op->emitOpError("returns a tensor exactly on tensors");
  if (!async && op->getNumResults() && op->getResult(0).getType() != out)
    return op->emitOpError("result type differs from the destination");
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return op->emitOpError("expects static shapes");
  if (factorIn == factorOut) {
    if (in.getShape() != out.getShape())
      return op->emitOpError("input and destination shapes differ");
    return success();
  }
  if (in.getRank() != 1 || out.getRank() != 1 ||
      in.getNumElements() * factorOut != out.getNumElements() * factorIn)
    return op->emitOpError()
           << "expects 1-D operands whose sizes differ by the world size";
  return success();
}

template <typename OpTy>
static void collectiveEffects(
    OpTy op, SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
                 &effects) {
  // Buffers: reads the input, writes the destination; a collective is also
  // an event every rank must reach, so it is never dropped or reordered.
  effects.emplace_back(MemoryEffects::Write::get());
  if (isa<MemRefType>(op.getInput().getType())) {
    effects.emplace_back(MemoryEffects::Read::get(), &op.getInputMutable(),
                         SideEffects::DefaultResource::get());
    effects.emplace_back(MemoryEffects::Write::get(), &op.getInitMutable(),
                         SideEffects::DefaultResource::get());
  }
}

LogicalResult AllReduceOp::verify() { return verifyCollective(*this, 1, 1); }
LogicalResult ReduceScatterOp::verify() {
  return verifyCollective(*this, getWorldSize(), 1);
}
LogicalResult AllGatherOp::verify() {
  return verifyCollective(*this, 1, getWorldSize());
}
void AllReduceOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &e) {
  collectiveEffects(*this, e);
}
void ReduceScatterOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &e) {
  collectiveEffects(*this, e);
}
void AllGatherOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &e) {
  collectiveEffects(*this, e);
}

//===----------------------------------------------------------------------===//
// CollectiveOpInterface
//===----------------------------------------------------------------------===//

static int64_t elementBytes(Type t) {
  Type e = cast<ShapedType>(t).getElementType();
  return std::max<int64_t>(1, (e.getIntOrFloatBitWidth() + 7) / 8);
}

int64_t CollectiveOpInterface::getCountPerRank() {
  Value v = getCollectiveKind() == CollectiveKind::reduce_scatter
                ? getRecvBuffer()
                : getSendBuffer();
  return cast<ShapedType>(v.getType()).getNumElements();
}

int64_t CollectiveOpInterface::getTotalBytes() {
  int64_t n =
      getCollectiveKind() == CollectiveKind::all_reduce ? 1 : getGroupSize();
  return getCountPerRank() * n * elementBytes(getSendBuffer().getType());
}

int64_t CollectiveOpInterface::getRingBytesSent() {
  int64_t n = getGroupSize();
  if (n <= 1)
    return 0;
  int64_t factor = getCollectiveKind() == CollectiveKind::all_reduce ? 2 : 1;
  int64_t es = elementBytes(getSendBuffer().getType());
  // Whole elements, as the runtime's counters round.
  return factor * (getTotalBytes() / es) * (n - 1) / n * es;
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives and buckets
//===----------------------------------------------------------------------===//

LogicalResult AllReduceStartOp::verify() {
  return verifyCollective(*this, 1, 1, /*async=*/true);
}
LogicalResult ReduceScatterStartOp::verify() {
  return verifyCollective(*this, getWorldSize(), 1, /*async=*/true);
}
LogicalResult AllGatherStartOp::verify() {
  return verifyCollective(*this, 1, getWorldSize(), /*async=*/true);
}

/// A member of `rows` rows of C elements placed at `offset` in each of the
/// staging buffer's `rows` rows.
static LogicalResult verifyBucketCopy(Operation *op, MemRefType member,
                                      MemRefType staging, int64_t offset,
                                      int64_t rows) {
  if (member.getElementType() != staging.getElementType())
    return op->emitOpError("member and staging element types differ");
  if (!staging.hasStaticShape())
    return op->emitOpError("expects a static staging buffer");
  int64_t n = member.getNumElements(), w = staging.getNumElements();
  if (n % rows || w % rows)
    return op->emitOpError() << "expects member (" << n << ") and staging ("
                             << w << ") sizes divisible by rows = " << rows;
  if (offset + n / rows > w / rows)
    return op->emitOpError()
           << "member columns [" << offset << ", " << offset + n / rows
           << ") exceed the staging rows of " << w / rows;
  return success();
}

LogicalResult BucketPackOp::verify() {
  return verifyBucketCopy(*this, getSource().getType(), getStaging().getType(),
                          getOffset(), getRows());
}
LogicalResult BucketUnpackOp::verify() {
  return verifyBucketCopy(*this, getDest().getType(), getStaging().getType(),
                          getOffset(), getRows());
}

//===----------------------------------------------------------------------===//
// LaunchGroupOp
//===----------------------------------------------------------------------===//

LogicalResult LaunchGroupOp::verify() {
  for (Operation &op : getBody().front()) {
    if (isa<BucketPackOp, BucketUnpackOp, memref::CopyOp>(op))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || !linalgOp.hasPureBufferSemantics())
      return op.emitOpError("in a launch group: expected a linalg op on "
                            "buffers, a copy or a bucket copy");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RowGroupOp
//===----------------------------------------------------------------------===//

bool mlir::zero::indexesLoopWhole(Operation *op, unsigned loop) {
  for (AffineMap map : cast<linalg::LinalgOp>(op).getIndexingMapsArray()) {
    unsigned found = 0;
    for (AffineExpr e : map.getResults()) {
      if (!e.isFunctionOfDim(loop))
        continue;
      if (!isa<AffineDimExpr>(e) || ++found > 1)
        return false;
    }
  }
  return true;
}

bool mlir::zero::isRowSliceable(Operation *op, int64_t rowDims) {
  auto linalgOp = cast<linalg::LinalgOp>(op);
  if (linalgOp.hasIndexSemantics() || linalgOp.getNumLoops() < rowDims)
    return false;
  for (int64_t d = 0; d < rowDims; ++d)
    if (!indexesLoopWhole(op, d))
      return false;
  return true;
}

SmallVector<int64_t> RowGroupOp::getRowExtents() {
  Block &body = getBody().front();
  if (body.empty())
    return {};
  SmallVector<int64_t> extents =
      cast<linalg::LinalgOp>(body.front()).getStaticLoopRanges();
  extents.resize(getRowDims());
  return extents;
}

int64_t RowGroupOp::getNumRows() {
  int64_t rows = 1;
  for (int64_t e : getRowExtents())
    rows *= e;
  return rows;
}

std::string mlir::zero::rowGroupMemberError(Operation *op,
                                            ArrayRef<int64_t> rows) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics() ||
      linalgOp.hasDynamicShape())
    return "expected a linalg op on statically shaped buffers";
  int64_t n = static_cast<int64_t>(rows.size());
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = linalgOp.getIteratorTypesArray();
  if (static_cast<int64_t>(ranges.size()) < n ||
      llvm::any_of(ArrayRef(iterators).take_front(n),
                   [](auto it) { return it != utils::IteratorType::parallel; }))
    return ("its first " + Twine(n) + " loops must be parallel").str();
  if (!isRowSliceable(op, n))
    return "reads a loop index, or indexes a row loop other than as a "
           "whole dimension of its own";
  if (ArrayRef(ranges).take_front(n) != rows)
    return "its rows differ from the group's first op's";
  return "";
}

LogicalResult RowGroupOp::verify() {
  Block &body = getBody().front();
  if (body.empty())
    return success();
  // The first op's extents (unknown where it is no static linalg op,
  // which its own check then reports).
  SmallVector<int64_t> rows(getRowDims(), ShapedType::kDynamic);
  auto first = dyn_cast<linalg::LinalgOp>(body.front());
  if (first && first.hasPureBufferSemantics() && !first.hasDynamicShape() &&
      first.getNumLoops() >= static_cast<unsigned>(getRowDims()))
    rows = getRowExtents();
  for (Operation &op : body)
    if (std::string why = rowGroupMemberError(&op, rows); !why.empty())
      return op.emitOpError("in a row group: ") << why;
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

/// The rows' dimension of an attention op over `query`.
static int64_t rowsDim(Value query, std::optional<uint64_t> seqDim) {
  return seqDim ? int64_t(*seqDim)
                : cast<ShapedType>(query.getType()).getRank() - 2;
}
int64_t AttentionOp::getRowsDim() { return rowsDim(getQuery(), getSeqDim()); }
int64_t AttentionGradOp::getRowsDim() {
  return rowsDim(getQuery(), getSeqDim());
}
int64_t zero::attentionRowsDim(Operation *attention) {
  if (auto fwd = dyn_cast<AttentionOp>(attention))
    return fwd.getRowsDim();
  return cast<AttentionGradOp>(attention).getRowsDim();
}
bool zero::isCausalAttention(Operation *attention) {
  if (auto fwd = dyn_cast<AttentionOp>(attention))
    return fwd.getCausal();
  return cast<AttentionGradOp>(attention).getCausal();
}
/// Either attention op's dropout, from its own accessors.
template <typename OpTy>
static std::optional<zero::AttentionDropout> dropoutOf(OpTy op) {
  if (!op.getDropoutAttr() || !op.getDropoutScaleAttr() ||
      op.getRng().size() != 2)
    return std::nullopt;
  return zero::AttentionDropout{op.getDropoutAttr(),
                                op.getDropoutScale()->convertToDouble(),
                                op.getRng()[0], op.getRng()[1]};
}
std::optional<zero::AttentionDropout>
zero::attentionDropout(Operation *attention) {
  if (auto fwd = dyn_cast<AttentionOp>(attention))
    return dropoutOf(fwd);
  return dropoutOf(cast<AttentionGradOp>(attention));
}

/// The dropout of an attention op: the draw, the factor and the step and
/// micro-batch, or none; a dimension other than the rows and the depth
/// for the mask's rows.
template <typename OpTy> static LogicalResult verifyDropout(OpTy op) {
  DropoutMaskAttr draw = op.getDropoutAttr();
  FloatAttr factor = op.getDropoutScaleAttr();
  if (!draw && !factor && op.getRng().empty())
    return success();
  if (!draw || !factor || op.getRng().size() != 2)
    return op.emitOpError("expects dropout, its factor and rng (the step "
                          "and the micro-batch) together");
  if (cast<ShapedType>(op.getQuery().getType()).getRank() < 3)
    return op.emitOpError("expects a dimension besides the rows and the "
                          "depth for the dropout mask's rows");
  if (draw.getKeep() == 0 || draw.getKeep() > (1u << 24))
    return op.emitOpError("expects a dropout keep threshold in [1, 2^24], "
                          "got ")
           << draw.getKeep();
  double f = factor.getValueAsDouble();
  if (!(f > 0) || !std::isfinite(f))
    return op.emitOpError("expects a positive, finite dropout factor, got ")
           << f;
  return success();
}

/// What zero.attention and its gradient check alike: static shapes, all
/// tensors or all buffers, one element type (bf16, f16 or f32) for the
/// query, key and value and `likeQuery` / `likeKey` (which take their
/// shapes), the rows' dimension `rowsDim` before the depth, f32
/// `rowValues` shaped as the query without its depth, and the results
/// typed as the destinations.
static LogicalResult
verifyAttention(Operation *op, ShapedType q, ShapedType k, ShapedType v,
                ArrayRef<std::pair<ShapedType, StringRef>> likeQuery,
                ArrayRef<std::pair<ShapedType, StringRef>> likeKey,
                ArrayRef<std::pair<ShapedType, StringRef>> rowValues,
                bool causal, int64_t rowsDim, StringRef sameTypeNames) {
  SmallVector<ShapedType> all{q, k, v};
  for (auto group : {likeQuery, likeKey, rowValues})
    for (auto [t, name] : group)
      all.push_back(t);
  for (ShapedType t : all) {
    if (!t.hasStaticShape())
      return op->emitOpError("expects static shapes");
    if (isa<TensorType>(t) != isa<TensorType>(q))
      return op->emitOpError("expects all tensors or all buffers");
  }
  Type elem = q.getElementType();
  if (!elem.isBF16() && !elem.isF16() && !elem.isF32())
    return op->emitOpError("expects bf16, f16 or f32 operands, got ") << elem;
  bool sameType = k.getElementType() == elem && v.getElementType() == elem;
  for (auto group : {likeQuery, likeKey})
    for (auto [t, name] : group)
      sameType &= t.getElementType() == elem;
  if (!sameType)
    return op->emitOpError("expects ")
           << sameTypeNames << " of one element type";
  for (auto [t, name] : rowValues)
    if (!t.getElementType().isF32())
      return op->emitOpError("expects an f32 ")
             << name << ", got " << t.getElementType();
  int64_t rank = q.getRank();
  if (rank < 2 || k.getRank() != rank || v.getRank() != rank)
    return op->emitOpError("expects query, key and value of one rank, at "
                           "least 2 ([..., rows, depth])");
  if (rowsDim < 0 || rowsDim > rank - 2)
    return op->emitOpError("expects seq_dim in [0, ")
           << rank - 2 << "] (the depth is the last dimension), got "
           << rowsDim;
  for (auto [t, name] : likeQuery)
    if (t.getShape() != q.getShape())
      return op->emitOpError("expects ") << name << " shaped as the query";
  SmallVector<int64_t> kShape(k.getShape()), qShape(q.getShape());
  kShape[rowsDim] = qShape[rowsDim];
  if (k.getShape() != v.getShape() || kShape != qShape)
    return op->emitOpError("expects key and value of one shape, the "
                           "query's but for the rows");
  for (auto [t, name] : likeKey)
    if (t.getShape() != k.getShape())
      return op->emitOpError("expects ") << name << " shaped as the key";
  for (auto [t, name] : rowValues)
    if (t.getShape() != q.getShape().drop_back())
      return op->emitOpError("expects ")
             << name << " shaped as the query without its depth";
  if (causal && k.getShape()[rowsDim] != q.getShape()[rowsDim])
    return op->emitOpError("causal attention expects as many keys as "
                           "queries");
  auto dps = cast<DestinationStyleOpInterface>(op);
  int64_t inits = dps.getNumDpsInits();
  if (isa<TensorType>(q) != (int64_t(op->getNumResults()) == inits))
    return op->emitOpError("returns ")
           << inits << " tensors exactly on tensors";
  for (auto [result, init] : llvm::zip(op->getResults(), dps.getDpsInits()))
    if (result.getType() != init.getType())
      return op->emitOpError("result types differ from the destinations");
  return success();
}

/// A destination-style op on buffers reads its inputs and writes its
/// destinations; on tensors it has no effects.
static void attentionEffects(
    DestinationStyleOpInterface op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (!op.hasPureBufferSemantics())
    return;
  for (OpOperand &operand : op->getOpOperands())
    if (isa<MemRefType>(operand.get().getType()))
      effects.emplace_back(op.isDpsInit(&operand)
                               ? static_cast<MemoryEffects::Effect *>(
                                     MemoryEffects::Write::get())
                               : MemoryEffects::Read::get(),
                           &operand, SideEffects::DefaultResource::get());
}

LogicalResult AttentionOp::verify() {
  auto shaped = [](Value v) { return cast<ShapedType>(v.getType()); };
  if (failed(verifyAttention(*this, shaped(getQuery()), shaped(getKey()),
                             shaped(getValue()), {{shaped(getOut()), "out"}},
                             {}, {{shaped(getLse()), "lse"}}, getCausal(),
                             getRowsDim(), "query, key, value and out")))
    return failure();
  return verifyDropout(*this);
}

void AttentionOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  attentionEffects(*this, effects);
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionGradOp::verify() {
  auto shaped = [](Value v) { return cast<ShapedType>(v.getType()); };
  if (failed(verifyAttention(
          *this, shaped(getQuery()), shaped(getKey()), shaped(getValue()),
          {{shaped(getDout()), "dout"}, {shaped(getDquery()), "dquery"}},
          {{shaped(getDkey()), "dkey"}, {shaped(getDvalue()), "dvalue"}},
          {{shaped(getLse()), "lse"}, {shaped(getDelta()), "delta"}},
          getCausal(), getRowsDim(),
          "query, key, value, dout and the gradients")))
    return failure();
  return verifyDropout(*this);
}

void AttentionGradOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  attentionEffects(*this, effects);
}

//===----------------------------------------------------------------------===//
// RoundedMatmulOp
//===----------------------------------------------------------------------===//

SmallVector<int64_t> RoundedMatmulOp::getStaticLoopRanges() {
  SmallVector<AffineMap> maps = getIndexingMapsArray();
  SmallVector<int64_t> ranges(maps.front().getNumDims(), ShapedType::kDynamic);
  for (auto [v, map] : llvm::zip(getOperands(), maps))
    for (auto [pos, e] : llvm::enumerate(map.getResults()))
      if (auto d = dyn_cast<AffineDimExpr>(e))
        ranges[d.getPosition()] = cast<ShapedType>(v.getType()).getDimSize(pos);
  return ranges;
}

LogicalResult RoundedMatmulOp::verify() {
  SmallVector<ShapedType> types;
  for (Value v : getOperands())
    types.push_back(cast<ShapedType>(v.getType()));
  Type elem = types[0].getElementType();
  if (!elem.isBF16() && !elem.isF16())
    return emitOpError("expects bf16 or f16 operands, got ") << elem;
  for (ShapedType t : types) {
    if (t.getElementType() != elem)
      return emitOpError("expects A, B and C of one element type");
    if (!t.hasStaticShape())
      return emitOpError("expects static shapes");
    if (isa<TensorType>(t) != isa<TensorType>(types[0]))
      return emitOpError("expects all tensors or all buffers");
  }
  if (isa<TensorType>(types[0]) != (getNumResults() == 1))
    return emitOpError("returns a tensor exactly on tensors");
  if (getNumResults() && getResult()[0].getType() != types[2])
    return emitOpError("result type differs from the destination");
  SmallVector<AffineMap> maps = getIndexingMapsArray();
  if (maps.size() != 3)
    return emitOpError("expects 3 indexing maps (A, B, C), got ")
           << maps.size();
  unsigned numLoops = maps[0].getNumDims();
  for (auto [i, map] : llvm::enumerate(maps))
    if (map.getNumDims() != numLoops || map.getNumSymbols() ||
        !map.isProjectedPermutation(/*allowZeroInResults=*/false) ||
        map.getNumResults() != unsigned(types[i].getRank()))
      return emitOpError("indexing map ")
             << i << " is not a projected permutation of " << numLoops
             << " loops over the operand's " << types[i].getRank()
             << " dimensions";
  if (!getGemmLoops(maps))
    return emitOpError("expects a GEMM: one M, N and K loop and at most two "
                       "batch loops");
  SmallVector<int64_t> ranges(numLoops, ShapedType::kDynamic);
  for (auto [t, map] : llvm::zip(types, maps))
    for (auto [pos, e] : llvm::enumerate(map.getResults())) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      int64_t size = t.getDimSize(pos);
      if (ranges[d] != ShapedType::kDynamic && ranges[d] != size)
        return emitOpError("loop ")
               << d << " has extents " << ranges[d] << " and " << size;
      ranges[d] = size;
    }
  return success();
}

void RoundedMatmulOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (!isa<MemRefType>(getInit().getType()))
    return;
  effects.emplace_back(MemoryEffects::Read::get(), &getAMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Read::get(), &getBMutable(),
                       SideEffects::DefaultResource::get());
  if (getAccumulate())
    effects.emplace_back(MemoryEffects::Read::get(), &getInitMutable(),
                         SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Write::get(), &getInitMutable(),
                       SideEffects::DefaultResource::get());
}
