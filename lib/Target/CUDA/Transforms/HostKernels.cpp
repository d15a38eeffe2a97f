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
#include "mlir/Dialect/Math/Transforms/Passes.h"
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
        !isa<gpu::GPUDialect>(op->getDialect()))
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
  for (BlockArgument arg : kernel.getArguments()) {
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

struct ZeroGPUHostKernelsPass
    : zero::cuda::impl::ZeroGPUHostKernelsBase<ZeroGPUHostKernelsPass> {
  void runOnOperation() override;

private:
  FailureOr<func::FuncOp> hostCopy(gpu::GPUFuncOp kernel);
};

FailureOr<func::FuncOp>
ZeroGPUHostKernelsPass::hostCopy(gpu::GPUFuncOp kernel) {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  Location loc = kernel.getLoc();
  if (std::string why = noHostForm(kernel); !why.empty())
    return kernel.emitError("kernel ") << why << ": it has no host copy";
  std::string name = (kPrefix + kernel.getName()).str();
  if (module.lookupSymbol(name))
    return kernel.emitError("a host copy named ")
           << name << " exists already (two gpu.modules with this kernel?)";

  LLVMTypeConverter converter(ctx);
  auto ptrTy = LLVM::LLVMPointerType::get(ctx);
  Type i64 = IntegerType::get(ctx, 64);
  SmallVector<Type> types{ptrTy};
  types.append(6, i64);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
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
  IRMapping mapping;
  for (BlockArgument arg : kernel.getArguments()) {
    Type t = arg.getType();
    Value value;
    if (auto memref = dyn_cast<MemRefType>(t)) {
      Type descTy = converter.convertType(memref);
      if (!descTy)
        return kernel.emitError("argument ")
               << arg.getArgNumber() << " of type " << t
               << " has no LLVM descriptor";
      auto desc = MemRefDescriptor::poison(b, loc, descTy);
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
    } else if (t.isIntOrFloat()) {
      value = next(t);
    } else {
      return kernel.emitError("argument ")
             << arg.getArgNumber() << " of type " << t
             << " is not a value a launch passes";
    }
    mapping.map(arg, value);
  }

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
        fn.erase();
        return kernel.emitError("a value crosses a barrier: it has no host "
                                "copy");
      }
    replaceIds(b.getInsertionBlock()->getParentOp(), ids, sizes);
  }
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc);

  std::string spec = argumentSpec(kernel) + '\0';
  b.setInsertionPointAfter(fn);
  LLVM::GlobalOp::create(
      b, loc, LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), spec.size()),
      /*isConstant=*/true, LLVM::Linkage::External, name + "_args",
      b.getStringAttr(spec));

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
