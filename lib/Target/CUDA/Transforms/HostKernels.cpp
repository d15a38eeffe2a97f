//===- HostKernels.cpp - host copies of the step's kernels -----*- C++ -*-===//
//
// A --target=cuda build checked on a machine without a GPU runs everything
// but its kernels for real (the host emulator answers the CUDA, cuBLAS and
// NCCL calls). With a host copy of each kernel, taking exactly what
// cuLaunchKernel takes, the emulator runs those too, so the build's values
// can be compared with the CPU target's. The copies come from the same
// gpu.func the device code does, after mapping and outlining.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Target/CUDA/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::zero::cuda {
#define GEN_PASS_DEF_ZEROGPUHOSTKERNELS
#include "zero-opt/Target/CUDA/Passes.h.inc"
} // namespace mlir::zero::cuda

using namespace mlir;

namespace {

constexpr StringLiteral kPrefix = "zero_host_kernel_";
/// A copy of a kernel whose threads meet (barriers anywhere, shuffles,
/// warp-wide matrix products, workgroup memory): it runs one thread, and
/// the emulator runs a block's threads side by side.
constexpr StringLiteral kThreadPrefix = "zero_host_thread_";

/// Why `kernel` has no serial host form, or empty.
std::string noHostForm(gpu::GPUFuncOp kernel) {
  if (!kernel.getBody().hasOneBlock())
    return "has more than one block";
  if (!kernel.getWorkgroupAttributions().empty() ||
      !kernel.getPrivateAttributions().empty())
    return "has workgroup or private memory";
  std::string why;
  kernel.getBody().walk([&](Operation *op) {
    if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::GridDimOp, gpu::BlockDimOp,
            gpu::ReturnOp>(op) ||
        !isa<gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect>(
            op->getDialect()))
      return WalkResult::advance();
    // A barrier every thread reaches splits the body in phases.
    if (isa<gpu::BarrierOp>(op) && op->getParentOp() == kernel)
      return WalkResult::advance();
    why = "uses " + op->getName().getStringRef().str() +
          ", which makes threads depend on each other";
    return WalkResult::interrupt();
  });
  return why;
}

/// What a launch passes: the arguments before the attributions.
ArrayRef<BlockArgument> launchArguments(gpu::GPUFuncOp kernel) {
  return kernel.getArguments().take_front(
      kernel.getFunctionType().getNumInputs());
}

/// How a kernel uses the buffer of memref `v` and its views: 1 read,
/// 2 written; an op that does not say is taken to do both.
unsigned bufferEffects(Value v) {
  unsigned effects = 0;
  for (Operation *user : v.getUsers()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(user);
        view && view.getViewSource() == v) {
      effects |= bufferEffects(view.getViewDest());
      continue;
    }
    auto iface = dyn_cast<MemoryEffectOpInterface>(user);
    if (!iface) {
      effects |= 3;
      continue;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    iface.getEffectsOnValue(v, instances);
    for (MemoryEffects::EffectInstance &e : instances)
      effects |= isa<MemoryEffects::Write>(e.getEffect())  ? 2
                 : isa<MemoryEffects::Read>(e.getEffect()) ? 1
                                                           : 0;
  }
  return effects;
}

/// What the host emulator needs to see a launch's memory accesses: per
/// argument, `m<rank>:<element bytes>:<r|w|rw|->` for a memref (its
/// footprint follows from the descriptor's fields) or `s` for a scalar.
std::string argumentSpec(gpu::GPUFuncOp kernel) {
  std::string spec;
  for (BlockArgument arg : launchArguments(kernel)) {
    if (!spec.empty())
      spec += ' ';
    auto memref = dyn_cast<MemRefType>(arg.getType());
    if (!memref) {
      spec += 's';
      continue;
    }
    unsigned effects = bufferEffects(arg);
    int64_t bytes = (memref.getElementTypeBitWidth() + 7) / 8;
    spec += "m" + std::to_string(memref.getRank()) + ":" +
            std::to_string(bytes) + ":" +
            (effects == 3   ? "rw"
             : effects == 2 ? "w"
             : effects == 1 ? "r"
                            : "-");
  }
  return spec;
}

/// The ids and sizes of a launch as the host copy's loop variables and
/// arguments, in `root`: grid x, y, z, then block x, y, z.
void replaceIds(Operation *root, ArrayRef<Value> ids, ArrayRef<Value> sizes) {
  root->walk([&](Operation *op) {
    Value id;
    if (auto o = dyn_cast<gpu::BlockIdOp>(op))
      id = ids[static_cast<unsigned>(o.getDimension())];
    else if (auto o = dyn_cast<gpu::ThreadIdOp>(op))
      id = ids[3 + static_cast<unsigned>(o.getDimension())];
    else if (auto o = dyn_cast<gpu::GridDimOp>(op))
      id = sizes[static_cast<unsigned>(o.getDimension())];
    else if (auto o = dyn_cast<gpu::BlockDimOp>(op))
      id = sizes[3 + static_cast<unsigned>(o.getDimension())];
    if (!id)
      return;
    op->getResult(0).replaceAllUsesWith(id);
    op->erase();
  });
}

/// The emulator's slots in the context each thread of a cooperative copy
/// gets (CudaHostEmulator.cpp's `ThreadContext`, which starts with them).
enum ContextSlot : int32_t { kBarrier, kShuffle, kMma, kShared };
/// `gpu.shuffle`'s modes as the emulator numbers them.
int32_t shuffleMode(gpu::ShuffleMode mode) {
  switch (mode) {
  case gpu::ShuffleMode::XOR:
    return 0;
  case gpu::ShuffleMode::UP:
    return 1;
  case gpu::ShuffleMode::DOWN:
    return 2;
  case gpu::ShuffleMode::IDX:
    return 3;
  }
  llvm_unreachable("shuffle mode");
}

/// The emulator's number for an `nvgpu.mma.sync` it computes: 0 for
/// m16n8k16 with bf16 inputs, 1 with f16 inputs (f32 accumulators both);
/// -1 for any other.
int32_t mmaKind(nvgpu::MmaSyncOp mma) {
  std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
  auto a = cast<VectorType>(mma.getMatrixA().getType());
  auto b = cast<VectorType>(mma.getMatrixB().getType());
  auto c = cast<VectorType>(mma.getMatrixC().getType());
  Type in = a.getElementType();
  if (ArrayRef<int64_t>(shape) != ArrayRef<int64_t>{16, 8, 16} ||
      a.getShape() != ArrayRef<int64_t>{4, 2} ||
      b.getShape() != ArrayRef<int64_t>{2, 2} ||
      c.getShape() != ArrayRef<int64_t>{2, 2} || b.getElementType() != in ||
      !c.getElementType().isF32() || mma.getTf32Enabled())
    return -1;
  return in.isBF16() ? 0 : in.isF16() ? 1 : -1;
}

/// A memref type in the host's memory (no GPU address space).
MemRefType onHost(MemRefType t) {
  return MemRefType::get(t.getShape(), t.getElementType(), t.getLayout());
}

/// Why `kernel` has no copy that runs its threads side by side, or empty.
std::string noThreadForm(gpu::GPUFuncOp kernel) {
  SmallVector<BlockArgument> buffers(kernel.getWorkgroupAttributions());
  llvm::append_range(buffers, kernel.getPrivateAttributions());
  for (BlockArgument a : buffers) {
    auto t = dyn_cast<MemRefType>(a.getType());
    if (!t || !t.hasStaticShape() || !t.getLayout().isIdentity() ||
        t.getElementTypeBitWidth() % 8)
      return "has a workgroup or private buffer that is not a static "
             "identity-layout memref of whole bytes";
  }
  std::string why;
  kernel.getBody().walk([&](Operation *op) {
    if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::GridDimOp, gpu::BlockDimOp,
            gpu::LaneIdOp, gpu::ReturnOp, gpu::BarrierOp>(op))
      return WalkResult::advance();
    if (auto s = dyn_cast<gpu::ShuffleOp>(op);
        s && (s.getValue().getType().isInteger(32) ||
              s.getValue().getType().isF32()))
      return WalkResult::advance();
    if (auto m = dyn_cast<nvgpu::MmaSyncOp>(op); m && mmaKind(m) >= 0)
      return WalkResult::advance();
    if (!isa<gpu::GPUDialect, nvgpu::NVGPUDialect, NVVM::NVVMDialect>(
            op->getDialect()))
      return WalkResult::advance();
    std::string s;
    llvm::raw_string_ostream os(s);
    os << "uses " << op->getName();
    if (isa<gpu::ShuffleOp, nvgpu::MmaSyncOp>(op))
      os << " on " << op->getOperandTypes();
    why = s + ", which the host emulator does not run";
    return WalkResult::interrupt();
  });
  return why;
}

struct ZeroGPUHostKernelsPass
    : zero::cuda::impl::ZeroGPUHostKernelsBase<ZeroGPUHostKernelsPass> {
  void runOnOperation() override;

private:
  FailureOr<func::FuncOp> hostCopy(gpu::GPUFuncOp kernel);
  func::FuncOp serialCopy(gpu::GPUFuncOp kernel, StringRef name);
  func::FuncOp threadCopy(gpu::GPUFuncOp kernel, StringRef name);
  /// Starts `name`: a function taking the parameter array then `extra`,
  /// the kernel's arguments read from the array into `mapping`.
  func::FuncOp start(gpu::GPUFuncOp kernel, StringRef name,
                     ArrayRef<Type> extra, IRMapping &mapping, OpBuilder &b);
};

func::FuncOp ZeroGPUHostKernelsPass::start(gpu::GPUFuncOp kernel,
                                           StringRef name, ArrayRef<Type> extra,
                                           IRMapping &mapping, OpBuilder &b) {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  Location loc = kernel.getLoc();
  LLVMTypeConverter converter(ctx);
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  Type i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> types{ptrTy};
  types.append(extra.begin(), extra.end());
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, loc, name, b.getFunctionType(types, {}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);

  // The launch's parameter array holds a pointer to each value it passes:
  // a memref's descriptor fields, one value otherwise (gpu-to-llvm's
  // promoted operands).
  Value params = entry->getArgument(0);
  int32_t slot = 0;
  auto next = [&](Type t) -> Value {
    Value at = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy, params,
                                   ArrayRef<LLVM::GEPArg>{slot++});
    Value p = LLVM::LoadOp::create(b, loc, ptrTy, at);
    return LLVM::LoadOp::create(b, loc, t, p);
  };
  for (BlockArgument arg : launchArguments(kernel)) {
    Type t = arg.getType();
    Value value;
    if (auto memref = dyn_cast<MemRefType>(t)) {
      auto desc = MemRefDescriptor::poison(b, loc, converter.convertType(t));
      desc.setAllocatedPtr(b, loc, next(desc.getElementPtrType()));
      desc.setAlignedPtr(b, loc, next(desc.getElementPtrType()));
      desc.setOffset(b, loc, next(i64));
      for (int64_t d = 0; d < memref.getRank(); ++d)
        desc.setSize(b, loc, d, next(i64));
      for (int64_t d = 0; d < memref.getRank(); ++d)
        desc.setStride(b, loc, d, next(i64));
      value = UnrealizedConversionCastOp::create(b, loc, t, Value(desc))
                  .getResult(0);
    } else if (t.isIndex()) {
      value =
          UnrealizedConversionCastOp::create(b, loc, t, next(i64)).getResult(0);
    } else {
      value = next(t);
    }
    mapping.map(arg, value);
  }
  return fn;
}

FailureOr<func::FuncOp>
ZeroGPUHostKernelsPass::hostCopy(gpu::GPUFuncOp kernel) {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  LLVMTypeConverter converter(ctx);
  for (BlockArgument arg : launchArguments(kernel)) {
    Type t = arg.getType();
    if (isa<MemRefType>(t) ? !converter.convertType(t)
                           : !t.isIndex() && !t.isIntOrFloat())
      return kernel.emitError("argument ")
             << arg.getArgNumber() << " of type " << t
             << " is not a value a launch passes";
  }
  for (StringRef prefix : {kPrefix, kThreadPrefix})
    if (std::string taken = (prefix + kernel.getName()).str();
        module.lookupSymbol(taken))
      return kernel.emitError("a host copy named ")
             << taken << " exists already (two gpu.modules with this kernel?)";
  // Threads that depend on each other only through barriers at the top of
  // the body, each phase reading only what it computes, run in turn; any
  // other dependence needs them side by side.
  func::FuncOp fn;
  if (noHostForm(kernel).empty())
    fn = serialCopy(kernel, (kPrefix + kernel.getName()).str());
  if (!fn) {
    if (std::string threads = noThreadForm(kernel); !threads.empty())
      return kernel.emitError("kernel ") << threads << ": it has no host copy";
    fn = threadCopy(kernel, (kThreadPrefix + kernel.getName()).str());
  }

  Location loc = kernel.getLoc();
  OpBuilder b(ctx);
  b.setInsertionPointAfter(fn);
  std::string spec = argumentSpec(kernel) + '\0';
  LLVM::GlobalOp::create(
      b, loc, LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), spec.size()),
      /*isConstant=*/true, LLVM::Linkage::External,
      (fn.getName() + "_args").str(), b.getStringAttr(spec));
  return fn;
}

func::FuncOp ZeroGPUHostKernelsPass::serialCopy(gpu::GPUFuncOp kernel,
                                                StringRef name) {
  Location loc = kernel.getLoc();
  OpBuilder b(&getContext());
  IRMapping mapping;
  func::FuncOp fn =
      start(kernel, name, SmallVector<Type>(6, b.getI64Type()), mapping, b);
  Block *entry = &fn.getBody().front();

  // Every block in turn, and in it each phase (the body between barriers)
  // for every thread in turn, x innermost: threads depend on each other
  // only through a barrier (checked above), so this order computes the
  // GPU's values.
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> sizes; // grid x, y, z, block x, y, z
  for (unsigned i = 1; i <= 6; ++i)
    sizes.push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                               entry->getArgument(i)));
  SmallVector<Value> ids(6);
  for (unsigned i : {2u, 1u, 0u}) {
    auto loop = scf::ForOp::create(b, loc, zero, sizes[i], one);
    ids[i] = loop.getInductionVar();
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  SmallVector<SmallVector<Operation *>> phases(1);
  DenseMap<Operation *, unsigned> phaseOf;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (isa<gpu::BarrierOp>(op)) {
      phases.emplace_back();
      continue;
    }
    phases.back().push_back(&op);
    phaseOf[&op] = phases.size() - 1;
  }
  OpBuilder::InsertPoint inBlock = b.saveInsertionPoint();
  for (unsigned current = 0; current < phases.size(); ++current) {
    b.restoreInsertionPoint(inBlock);
    for (unsigned i : {5u, 4u, 3u}) {
      auto loop = scf::ForOp::create(b, loc, zero, sizes[i], one);
      ids[i] = loop.getInductionVar();
      b.setInsertionPoint(loop.getBody()->getTerminator());
    }
    // What a phase uses from an earlier one is computed again in it (the
    // mapping's index arithmetic); anything else has no serial form.
    IRMapping local = mapping;
    std::function<LogicalResult(Operation *)> cloneWithDefs =
        [&](Operation *op) -> LogicalResult {
      WalkResult r = op->walk([&](Operation *nested) {
        for (Value v : nested->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (!def || local.contains(v) || def->getParentOp() != kernel ||
              phaseOf.lookup(def) == current)
            continue;
          if (def->getNumRegions() || !isPure(def) ||
              failed(cloneWithDefs(def)))
            return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (r.wasInterrupted())
        return failure();
      b.clone(*op, local);
      return success();
    };
    for (Operation *op : phases[current])
      if (failed(cloneWithDefs(op))) {
        // A loaded value crosses a barrier: one thread's would be all's.
        fn.erase();
        return nullptr;
      }
    replaceIds(b.getInsertionBlock()->getParentOp(), ids, sizes);
  }
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc);
  return fn;
}

func::FuncOp ZeroGPUHostKernelsPass::threadCopy(gpu::GPUFuncOp kernel,
                                                StringRef name) {
  MLIRContext *ctx = &getContext();
  Location loc = kernel.getLoc();
  OpBuilder b(ctx);
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  SmallVector<Type> extra{ptrTy};
  extra.append(12, i64);
  IRMapping mapping;
  func::FuncOp fn = start(kernel, name, extra, mapping, b);
  Block *entry = &fn.getBody().front();
  Value context = entry->getArgument(1);
  // grid x, y, z, block x, y, z, block id x, y, z, thread id x, y, z
  SmallVector<Value> values;
  for (unsigned i = 2; i < 14; ++i)
    values.push_back(arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                entry->getArgument(i)));
  ArrayRef<Value> sizes = ArrayRef(values).take_front(6);
  ArrayRef<Value> ids = ArrayRef(values).drop_front(6);
  // A lane is the thread's place in its warp: x fastest.
  Value linear = arith::AddIOp::create(
      b, loc, ids[3],
      arith::MulIOp::create(
          b, loc, sizes[3],
          arith::AddIOp::create(
              b, loc, ids[4],
              arith::MulIOp::create(b, loc, sizes[4], ids[5]))));
  Value lane = arith::RemUIOp::create(
      b, loc, linear, arith::ConstantIndexOp::create(b, loc, 32));
  // The context's slots, read once.
  SmallVector<Value> slots;
  for (int32_t s : {kBarrier, kShuffle, kMma, kShared}) {
    Value p = LLVM::GEPOp::create(b, loc, ptrTy, ptrTy, context,
                                  ArrayRef<LLVM::GEPArg>{s});
    slots.push_back(LLVM::LoadOp::create(b, loc, ptrTy, p));
  }

  // Workgroup buffers lie in the block's shared bytes, 16-byte aligned,
  // in order; private ones on the thread's stack.
  Value shared = slots[kShared];
  int64_t offset = 0;
  LLVMTypeConverter converter(ctx);
  for (BlockArgument a : kernel.getWorkgroupAttributions()) {
    MemRefType t = onHost(cast<MemRefType>(a.getType()));
    Value base = LLVM::GEPOp::create(b, loc, ptrTy, b.getI8Type(), shared,
                                     ArrayRef<LLVM::GEPArg>{int32_t(offset)});
    auto desc =
        MemRefDescriptor::fromStaticShape(b, loc, converter, t, base, base);
    mapping.map(a, UnrealizedConversionCastOp::create(b, loc, t, Value(desc))
                       .getResult(0));
    offset +=
        llvm::alignTo(t.getNumElements() * t.getElementTypeBitWidth() / 8, 16);
  }
  for (BlockArgument a : kernel.getPrivateAttributions())
    mapping.map(a, memref::AllocaOp::create(
                       b, loc, onHost(cast<MemRefType>(a.getType()))));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(fn);
    LLVM::GlobalOp::create(b, loc, i64, /*isConstant=*/true,
                           LLVM::Linkage::External, (name + "_shared").str(),
                           b.getI64IntegerAttr(offset));
  }

  // The kernel's blocks after the entry, which branches to its first; a
  // thread's ids and sizes are the copy's arguments.
  kernel.getBody().cloneInto(&fn.getBody(), mapping);
  b.setInsertionPointToEnd(entry);
  cf::BranchOp::create(b, loc, mapping.lookup(&kernel.getBody().front()));
  replaceIds(fn, ids, sizes);

  // Operations that make threads meet call the emulator through the
  // context; their memory lives on the host.
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) { ops.push_back(op); });
  OpBuilder entryBuilder(ctx);
  entryBuilder.setInsertionPoint(entry->getTerminator());
  // One buffer (and its pointer) per product operand and type, for every
  // product of the copy.
  DenseMap<std::pair<unsigned, Type>, std::pair<Value, Value>> mmaBuffers;
  auto mmaBuffer = [&](unsigned operand, VectorType t) {
    auto [it, fresh] = mmaBuffers.try_emplace({operand, t});
    if (fresh) {
      Value buf = memref::AllocaOp::create(
          entryBuilder, loc,
          MemRefType::get({t.getNumElements()}, t.getElementType()));
      Value index = memref::ExtractAlignedPointerAsIndexOp::create(entryBuilder,
                                                                   loc, buf);
      Value p = LLVM::IntToPtrOp::create(entryBuilder, loc, ptrTy,
                                         ValueRange{arith::IndexCastOp::create(
                                             entryBuilder, loc, i64, index)});
      it->second = {buf, p};
    }
    return it->second;
  };
  for (Operation *op : ops) {
    b.setInsertionPoint(op);
    if (auto ret = dyn_cast<gpu::ReturnOp>(op)) {
      func::ReturnOp::create(b, ret.getLoc());
      ret.erase();
    } else if (isa<gpu::LaneIdOp>(op)) {
      op->getResult(0).replaceAllUsesWith(lane);
      op->erase();
    } else if (isa<gpu::BarrierOp>(op)) {
      auto type =
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), {ptrTy});
      LLVM::CallOp::create(b, op->getLoc(), type,
                           ValueRange{slots[kBarrier], context});
      op->erase();
    } else if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op)) {
      Location at = shuffle.getLoc();
      Type t = shuffle.getValue().getType();
      Value bits = shuffle.getValue();
      if (t.isF32())
        bits = arith::BitcastOp::create(b, at, i32, bits);
      auto type = LLVM::LLVMFunctionType::get(i64, {ptrTy, i32, i32, i32, i32});
      Value mode = arith::ConstantIntOp::create(b, at, i32,
                                                shuffleMode(shuffle.getMode()));
      Value r = LLVM::CallOp::create(b, at, type,
                                     ValueRange{slots[kShuffle], context, bits,
                                                shuffle.getOffset(),
                                                shuffle.getWidth(), mode})
                    .getResult();
      Value value = arith::TruncIOp::create(b, at, i32, r);
      if (t.isF32())
        value = arith::BitcastOp::create(b, at, t, value);
      Value valid = arith::TruncIOp::create(
          b, at, b.getI1Type(),
          arith::ShRUIOp::create(b, at, r,
                                 arith::ConstantIntOp::create(b, at, i64, 32)));
      shuffle.getShuffleResult().replaceAllUsesWith(value);
      shuffle.getValid().replaceAllUsesWith(valid);
      shuffle.erase();
    } else if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op)) {
      // Each operand's registers in order, rows first, in the thread's
      // buffer for that operand, made at the entry.
      Location at = mma.getLoc();
      auto store = [&](Value v, Value buf) {
        auto t = cast<VectorType>(v.getType());
        for (int64_t r = 0; r < t.getDimSize(0); ++r) {
          Value row = vector::ExtractOp::create(b, at, v, r);
          vector::StoreOp::create(b, at, row, buf,
                                  ValueRange{arith::ConstantIndexOp::create(
                                      b, at, r * t.getDimSize(1))});
        }
      };
      SmallVector<Value> pointers;
      SmallVector<Value, 3> operands{mma.getMatrixA(), mma.getMatrixB(),
                                     mma.getMatrixC()};
      for (auto [i, v] : llvm::enumerate(operands)) {
        auto [buf, p] = mmaBuffer(i, cast<VectorType>(v.getType()));
        store(v, buf);
        pointers.push_back(p);
      }
      auto [out, outPtr] =
          mmaBuffer(3, cast<VectorType>(mma.getRes().getType()));
      auto type =
          LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                      {ptrTy, ptrTy, ptrTy, ptrTy, ptrTy, i32});
      LLVM::CallOp::create(
          b, at, type,
          ValueRange{slots[kMma], context, pointers[0], pointers[1],
                     pointers[2], outPtr,
                     arith::ConstantIntOp::create(b, at, i32, mmaKind(mma))});
      auto resTy = cast<VectorType>(mma.getRes().getType());
      Value res = ub::PoisonOp::create(b, at, resTy);
      for (int64_t r = 0; r < resTy.getDimSize(0); ++r) {
        Value row = vector::LoadOp::create(
            b, at,
            VectorType::get({resTy.getDimSize(1)}, resTy.getElementType()), out,
            ValueRange{arith::ConstantIndexOp::create(
                b, at, r * resTy.getDimSize(1))});
        res = vector::InsertOp::create(b, at, row, res, r);
      }
      mma.getRes().replaceAllUsesWith(res);
      mma.erase();
    }
  }
  // Shared memory is host memory here.
  fn.walk([](Operation *op) {
    auto strip = [](Value v) {
      if (auto t = dyn_cast<MemRefType>(v.getType()); t && t.getMemorySpace())
        v.setType(onHost(t));
    };
    for (Value v : op->getResults())
      strip(v);
    for (Region &r : op->getRegions())
      for (Block &block : r)
        for (BlockArgument a : block.getArguments())
          strip(a);
  });
  return fn;
}

void ZeroGPUHostKernelsPass::runOnOperation() {
  SmallVector<gpu::GPUFuncOp> kernels;
  for (auto gpuModule : getOperation().getOps<gpu::GPUModuleOp>())
    for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>())
      if (kernel.isKernel())
        kernels.push_back(kernel);
  SmallVector<func::FuncOp> copies;
  for (gpu::GPUFuncOp kernel : kernels) {
    FailureOr<func::FuncOp> copy = hostCopy(kernel);
    if (failed(copy))
      return signalPassFailure();
    copies.push_back(*copy);
  }

  // 16-bit floats compute in f32 and round back, as the device code does
  // (libdevice's math is f32), and bf16 conversions become integer
  // arithmetic, which needs no compiler-runtime helpers on the host.
  OpPassManager pm(func::FuncOp::getOperationName());
  pm.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(zero::createZeroKeep16BitRounding());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  for (func::FuncOp copy : copies)
    if (failed(runPipeline(pm, copy)))
      return signalPassFailure();
}

} // namespace
