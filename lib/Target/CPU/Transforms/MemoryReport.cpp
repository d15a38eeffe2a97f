//===- MemoryReport.cpp - simulated memory use of each step ----*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUMEMORYREPORT
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;

static int64_t bytesOf(MemRefType t) {
  unsigned bits = t.getElementType().isInteger(1)
                      ? 8
                      : t.getElementType().getIntOrFloatBitWidth();
  return t.hasStaticShape() ? t.getNumElements() * ((bits + 7) / 8) : 0;
}

/// The ONNX node (or other name) an op's location carries, if any.
static std::string nameOf(Location loc) {
  std::string name;
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

namespace {
struct ZeroCPUMemoryReportPass
    : zero::cpu::impl::ZeroCPUMemoryReportBase<ZeroCPUMemoryReportPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    SmallVector<NamedAttribute> reports;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr("zero.entry") || fn.isExternal())
        continue;
      llvm::StringMap<int64_t> byRole;
      for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
        auto t = dyn_cast<MemRefType>(fn.getArgumentTypes()[i]);
        if (!t)
          continue;
        std::string role = "output";
        if (auto r = fn.getArgAttr(i, "zero.role")) {
          // #zero.role<parameter> prints as that; keep the case name.
          std::string s;
          llvm::raw_string_ostream os(s);
          r.print(os);
          auto l = StringRef(s).find('<'), e = StringRef(s).rfind('>');
          role = StringRef(s).substr(l + 1, e - l - 1).str();
        }
        byRole[role] += bytesOf(t);
      }
      int64_t live = 0, peak = 0;
      std::string peakAt;
      DenseMap<Value, int64_t> sizes;
      fn.walk([&](Operation *op) {
        if (auto a = dyn_cast<memref::AllocOp>(op)) {
          int64_t n = bytesOf(a.getType());
          sizes[a.getResult()] = n;
          live += n;
          if (live > peak) {
            peak = live;
            peakAt = nameOf(op->getLoc());
          }
        } else if (auto d = dyn_cast<memref::DeallocOp>(op)) {
          live -= sizes.lookup(d.getMemref());
        }
      });
      int64_t args = 0;
      SmallVector<NamedAttribute> roles;
      for (auto &kv : byRole) {
        args += kv.second;
        roles.push_back(
            b.getNamedAttr(kv.first(), b.getI64IntegerAttr(kv.second)));
      }
      reports.push_back(b.getNamedAttr(
          fn.getName(),
          b.getDictionaryAttr(
              {b.getNamedAttr("arguments", b.getDictionaryAttr(roles)),
               b.getNamedAttr("temporaries_peak", b.getI64IntegerAttr(peak)),
               b.getNamedAttr("peak", b.getI64IntegerAttr(args + peak)),
               b.getNamedAttr("peak_at", b.getStringAttr(peakAt))})));
    }
    module->setAttr("zero.memory", b.getDictionaryAttr(reports));
  }
};
} // namespace
