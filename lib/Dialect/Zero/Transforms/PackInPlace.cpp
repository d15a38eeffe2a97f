//===- PackInPlace.cpp - results written straight into buckets --*- C++ -*-===//
//
// A 16-bit gradient is rounded from its f32 sums into a buffer of its own,
// which its bucket's pack then copies into the staging buffer: the
// rounding can write the staging buffer's slot itself, and so can any op
// that writes the buffer (a weight gradient's GEMM): into a one-row bucket
// over the slot viewed as the buffer, into rows with the loop of the
// buffer's first dimension split by the rows (a GEMM in row blocks).
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/Buckets.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::zero {
#define GEN_PASS_DEF_ZEROPACKINPLACE
#include "zero-opt/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace mlir::zero

using namespace mlir;
using namespace mlir::zero;

namespace {
/// A contiguous buffer of at least one dimension: rows can view it.
bool contiguous(Value v) {
  return isContiguousBuffer(v) && cast<MemRefType>(v.getType()).getRank() > 0;
}

/// An op that computes each element of its one output from the same
/// element of its inputs, on contiguous buffers: it can run over any
/// reshaping of them.
bool elementwise(linalg::GenericOp op) {
  return op.hasPureBufferSemantics() && op.getNumDpsInits() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         !op.hasIndexSemantics() &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) &&
         llvm::all_of(op->getOperands(), contiguous);
}

/// Whether `op` may write its outputs through strided views of the
/// staging buffer: linalg ops and 16-bit GEMMs take any layout.
bool writesAnyLayout(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.hasPureBufferSemantics();
  auto mm = dyn_cast<RoundedMatmulOp>(op);
  return mm && !mm.getAccumulate();
}

/// The indexing maps of a linalg op or a 16-bit GEMM.
SmallVector<AffineMap> indexingMaps(Operation *op) {
  if (auto mm = dyn_cast<RoundedMatmulOp>(op))
    return mm.getIndexingMapsArray();
  return cast<linalg::LinalgOp>(op).getIndexingMapsArray();
}

/// `maps` with loop `loop` split in two, outer (the block) first: every
/// read of it reads both.
SmallVector<AffineMap> splitLoop(ArrayRef<AffineMap> maps, unsigned loop) {
  SmallVector<AffineMap> split;
  for (AffineMap map : maps) {
    MLIRContext *ctx = map.getContext();
    SmallVector<AffineExpr> results;
    for (AffineExpr e : map.getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      if (d == loop)
        results.push_back(getAffineDimExpr(d, ctx));
      results.push_back(getAffineDimExpr(d < loop ? d : d + 1, ctx));
    }
    split.push_back(AffineMap::get(map.getNumDims() + 1, 0, results, ctx));
  }
  return split;
}

/// How an op computes its output `init` in blocks of rows: loop `loop`,
/// the output's first dimension that is not a unit one (`dim`), split into
/// the rows and their share of it.
struct RowBlocks {
  unsigned loop, dim;
};

/// The row blocks of `op`'s output `init` in `rows` rows, each a batch of
/// its own: the loop is parallel, every map reads loops as they are
/// (projected permutations), no index is read, the rows divide its extent,
/// and a GEMM stays one.
std::optional<RowBlocks> rowBlocks(Operation *op, unsigned init, int64_t rows) {
  SmallVector<AffineMap> maps = indexingMaps(op);
  if (llvm::any_of(maps, [](AffineMap m) {
        return !m.isProjectedPermutation(/*allowZeroInResults=*/false);
      }))
    return std::nullopt;
  auto dps = cast<DestinationStyleOpInterface>(op);
  OpOperand *out = dps.getDpsInitOperand(init);
  auto type = cast<MemRefType>(out->get().getType());
  ArrayRef<int64_t> shape = type.getShape();
  auto dim = llvm::find_if(shape, [](int64_t d) { return d != 1; });
  if (dim == shape.end() || *dim % rows)
    return std::nullopt;
  RowBlocks blocks;
  blocks.dim = dim - shape.begin();
  blocks.loop =
      cast<AffineDimExpr>(maps[out->getOperandNumber()].getResult(blocks.dim))
          .getPosition();
  bool gemm = true;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (linalgOp.hasIndexSemantics() ||
        !linalg::isParallelIterator(
            linalgOp.getIteratorTypesArray()[blocks.loop]))
      return std::nullopt;
    gemm = getGemmLoops(linalgOp).has_value();
  }
  if (gemm && !getGemmLoops(splitLoop(maps, blocks.loop)))
    return std::nullopt;
  return blocks;
}

/// The op that alone writes the buffer a pack copies (its output `init`),
/// which nothing else reads: the buffer, its reshapes, the zero fills
/// before a GEMM writing it, and how the op writes the slot: again over
/// the pack's rows (elementwise, no fills), over the slot viewed as the
/// buffer (a one-row bucket), or in `blocks` of rows.
struct SoleWriter {
  Operation *op = nullptr;
  unsigned init = 0;
  memref::AllocOp alloc;
  SmallVector<Operation *> views;
  SmallVector<linalg::FillOp> fills;
  bool overRows = false;
  std::optional<RowBlocks> blocks;
};

/// The sole writer of what `pack` copies; its `op` null when there is
/// none. Into a one-row (all-reduce) bucket any op writing the buffer
/// itself will do; over several rows an elementwise op, or one whose
/// output's first dimension splits into the rows.
SoleWriter soleWriter(BucketPackOp pack) {
  SoleWriter w;
  Value v = pack.getSource();
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(def) ||
        !contiguous(def->getOperand(0)))
      break;
    v = def->getOperand(0);
  }
  w.alloc = v.getDefiningOp<memref::AllocOp>();
  if (!w.alloc || !contiguous(w.alloc) ||
      w.alloc->getBlock() != pack->getBlock())
    return {};
  Operation *writer = nullptr;
  bool inPlace = false;
  SmallVector<OpOperand *> uses = usesThroughReshapes(w.alloc, w.views);
  // Rows cannot view a view of no dimension.
  if (llvm::any_of(w.views, [](Operation *view) {
        return !contiguous(view->getResult(0));
      }))
    return {};
  for (OpOperand *use : uses) {
    Operation *user = use->getOwner();
    if (user == pack)
      continue;
    bool onBuffer = use->get() == w.alloc.getResult();
    // A GEMM's zero fill: it writes the slot too.
    if (auto fill = dyn_cast<linalg::FillOp>(user);
        fill && onBuffer && fill.hasPureBufferSemantics() &&
        fill->getBlock() == pack->getBlock()) {
      w.fills.push_back(fill);
      continue;
    }
    auto dps = dyn_cast<DestinationStyleOpInterface>(user);
    if (writer || !dps || !dps.isDpsInit(use) ||
        user->getBlock() != pack->getBlock() || !user->isBeforeInBlock(pack))
      return {};
    w.init = use->getOperandNumber() - dps.getNumDpsInputs();
    auto g = dyn_cast<linalg::GenericOp>(user);
    w.overRows = g && elementwise(g);
    inPlace = onBuffer && writesAnyLayout(user);
    if (inPlace && pack.getRows() > 1) {
      w.blocks = rowBlocks(user, w.init, pack.getRows());
      inPlace = w.blocks.has_value();
    }
    if (!w.overRows && !inPlace)
      return {};
    writer = user;
  }
  // Fills only before an op that writes the buffer where it lies.
  if (!w.fills.empty()) {
    if (!writer || !inPlace || llvm::any_of(w.fills, [&](linalg::FillOp f) {
          return !f->isBeforeInBlock(writer);
        }))
      return {};
    w.overRows = false;
  }
  if (w.overRows)
    w.blocks.reset();
  w.op = writer;
  return w;
}

/// `g` again over `pack`'s rows (one row: flat), writing its slot. Erases
/// `g`.
void writeRows(OpBuilder &b, Location loc, linalg::GenericOp g,
               BucketPackOp pack) {
  int64_t rows = pack.getRows();
  int64_t cols =
      cast<MemRefType>(pack.getSource().getType()).getNumElements() / rows;
  Value slot =
      bucketSlotView(b, loc, pack.getStaging(), rows, pack.getOffset(), cols);
  SmallVector<Value> ins;
  for (Value in : g.getDpsInputs())
    ins.push_back(bucketMemberView(b, loc, in, rows));
  unsigned rank = rows == 1 ? 1 : 2;
  SmallVector<AffineMap> maps(ins.size() + 1, b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto rowsOp = linalg::GenericOp::create(b, loc, TypeRange{}, ins,
                                          ValueRange{slot}, maps, iters);
  rowsOp.getRegion().takeBody(g.getRegion());
  g->erase();
}

/// `writer` writes its output `init`, `alloc`, at its slot of a one-row
/// bucket instead: the slot is contiguous, viewed in the buffer's shape.
void writeSlot(OpBuilder &b, Location loc, Operation *writer, unsigned init,
               ArrayRef<linalg::FillOp> fills, memref::AllocOp alloc,
               BucketPackOp pack) {
  MemRefType t = alloc.getType();
  Value slot = bucketSlotView(b, loc, pack.getStaging(), /*rows=*/1,
                              pack.getOffset(), t.getNumElements());
  if (t.getRank() > 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
    slot = memref::ExpandShapeOp::create(b, loc, t.getShape(), slot,
                                         ArrayRef<ReassociationIndices>{all});
  }
  cast<DestinationStyleOpInterface>(writer).getDpsInitsMutable()[init].set(
      slot);
  for (linalg::FillOp fill : fills)
    fill.getOutputsMutable()[0].set(slot);
}

/// `shape` with dimension `pos` split in `rows` and the rest.
SmallVector<int64_t> splitShape(ArrayRef<int64_t> shape, unsigned pos,
                                int64_t rows) {
  SmallVector<int64_t> split(shape);
  split[pos] /= rows;
  split.insert(split.begin() + pos, rows);
  return split;
}

/// `v`, read through `map`, with the dimension that reads `loop` split in
/// `rows` and the rest; `v` itself when no dimension reads it.
Value splitDim(OpBuilder &b, Location loc, Value v, AffineMap map,
               unsigned loop, int64_t rows) {
  std::optional<unsigned> pos = map.getResultPosition(b.getAffineDimExpr(loop));
  if (!pos)
    return v;
  auto type = cast<MemRefType>(v.getType());
  SmallVector<int64_t> shape = splitShape(type.getShape(), *pos, rows);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d)
    groups.push_back(d == int64_t(*pos)
                         ? ReassociationIndices{d, d + 1}
                         : ReassociationIndices{d < *pos ? d : d + 1});
  return memref::ExpandShapeOp::create(b, loc, shape, v, groups);
}

/// `writer` computes its output `init`, `alloc`, in `pack`'s rows: the
/// loop of `blocks` split into the rows and their share of it, each other
/// operand it indexes viewed likewise, the output the slot viewed as the
/// rows of the buffer. Erases `writer`.
void writeRowBlocks(OpBuilder &b, Location loc, Operation *writer,
                    unsigned init, RowBlocks blocks,
                    ArrayRef<linalg::FillOp> fills, memref::AllocOp alloc,
                    BucketPackOp pack) {
  int64_t rows = pack.getRows();
  MemRefType t = alloc.getType();
  Value slot = bucketSlotView(b, loc, pack.getStaging(), rows, pack.getOffset(),
                              t.getNumElements() / rows);
  // [rows, columns] as the buffer's unit dimensions and the rows, then
  // their share of the split dimension and the rest.
  SmallVector<int64_t> blockShape = splitShape(t.getShape(), blocks.dim, rows);
  if (blockShape.size() > 2) {
    int64_t split = blocks.dim + 1;
    SmallVector<ReassociationIndices> groups{
        llvm::to_vector<2>(llvm::seq<int64_t>(0, split)),
        llvm::to_vector<2>(llvm::seq<int64_t>(split, blockShape.size()))};
    slot = memref::ExpandShapeOp::create(b, loc, blockShape, slot, groups);
  }
  for (linalg::FillOp fill : fills)
    fill.getOutputsMutable()[0].set(slot);
  if (auto named = dyn_cast<linalg::LinalgOp>(writer);
      named && !isa<linalg::GenericOp>(writer)) {
    IRRewriter rewriter(b.getContext());
    rewriter.setInsertionPoint(writer);
    writer = *linalg::generalizeNamedOp(rewriter, named);
  }
  // The inputs may be computed after the fills: viewed at the writer.
  b.setInsertionPoint(writer);
  SmallVector<AffineMap> maps = indexingMaps(writer);
  SmallVector<AffineMap> blockMaps = splitLoop(maps, blocks.loop);
  auto dps = cast<DestinationStyleOpInterface>(writer);
  unsigned out = dps.getNumDpsInputs() + init;
  SmallVector<Value> operands;
  for (OpOperand &operand : writer->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    operands.push_back(
        i == out ? slot
                 : splitDim(b, loc, operand.get(), maps[i], blocks.loop, rows));
  }
  Operation *split;
  if (isa<RoundedMatmulOp>(writer)) {
    split = RoundedMatmulOp::create(b, loc, TypeRange{}, operands[0],
                                    operands[1], operands[2],
                                    b.getAffineMapArrayAttr(blockMaps));
  } else {
    auto linalgOp = cast<linalg::LinalgOp>(writer);
    SmallVector<utils::IteratorType> iters = linalgOp.getIteratorTypesArray();
    iters.insert(iters.begin() + blocks.loop, utils::IteratorType::parallel);
    ArrayRef<Value> all(operands);
    auto g = linalg::GenericOp::create(
        b, loc, TypeRange{}, all.take_front(dps.getNumDpsInputs()),
        all.drop_front(dps.getNumDpsInputs()), blockMaps, iters);
    g.getRegion().takeBody(writer->getRegion(0));
    split = g;
  }
  split->setDiscardableAttrs(writer->getDiscardableAttrDictionary());
  writer->erase();
}

struct ZeroPackInPlacePass
    : zero::impl::ZeroPackInPlaceBase<ZeroPackInPlacePass> {
  void runOnOperation() override {
    SmallVector<BucketPackOp> packs;
    getOperation().walk([&](BucketPackOp op) { packs.push_back(op); });
    for (BucketPackOp pack : packs) {
      SoleWriter w = soleWriter(pack);
      auto stageAlloc = pack.getStaging().getDefiningOp<memref::AllocOp>();
      if (!w.op || !stageAlloc || stageAlloc->getBlock() != w.op->getBlock())
        continue;
      // The slot is written from the first of them on.
      Operation *first = w.op;
      for (linalg::FillOp fill : w.fills)
        if (fill->isBeforeInBlock(first))
          first = fill;
      if (first->isBeforeInBlock(stageAlloc))
        stageAlloc->moveBefore(first);
      OpBuilder b(first);
      Location loc = w.op->getLoc();
      if (w.overRows)
        writeRows(b, loc, cast<linalg::GenericOp>(w.op), pack);
      else if (w.blocks)
        writeRowBlocks(b, loc, w.op, w.init, *w.blocks, w.fills, w.alloc, pack);
      else
        writeSlot(b, loc, w.op, w.init, w.fills, w.alloc, pack);
      pack->erase();
      for (Operation *view : llvm::reverse(w.views))
        if (view->use_empty())
          view->erase();
      if (w.alloc->use_empty())
        w.alloc->erase();
    }
  }
};
} // namespace
