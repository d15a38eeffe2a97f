//===- MemoryReport.cpp - simulated memory use of each step ----*- C++ -*-===//
#include "zero-opt/Target/CPU/Passes.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::zero::cpu {
#define GEN_PASS_DEF_ZEROCPUMEMORYREPORT
#include "zero-opt/Target/CPU/Passes.h.inc"
} // namespace mlir::zero::cpu

using namespace mlir;
using namespace mlir::zero;

namespace {
constexpr unsigned kNumCategories = 6;
using Bytes = std::array<int64_t, kNumCategories>;

struct StepMemory {
  Bytes arguments{}, temporariesPeak{}, atPeak{};
  llvm::StringMap<int64_t> byRole;
  int64_t peak = 0; ///< of all temporaries together
  std::string peakAt;
  std::optional<Phase> peakPhase;
  /// Gradient bytes the backward pass hands to the optimizer step.
  int64_t residentGradients = 0;

  void simulate(func::FuncOp fn) {
    Bytes live{};
    int64_t total = 0;
    DenseMap<Value, std::pair<unsigned, int64_t>> sizes;
    fn.walk([&](Operation *op) {
      auto cls = getBufferClass(op->getLoc());
      if (auto a = dyn_cast<memref::AllocOp>(op)) {
        unsigned c = (unsigned)zero::allocCategory(op);
        int64_t n = zero::bufferBytes(a.getType());
        sizes[a.getResult()] = {c, n};
        live[c] += n;
        total += n;
        temporariesPeak[c] = std::max(temporariesPeak[c], live[c]);
        if (total > peak) {
          peak = total;
          atPeak = live;
          peakAt = zero::nodeName(op->getLoc()).str();
          // Buffers the ZeRO passes add have no model node.
          if (peakAt.empty())
            peakAt =
                (Twine("(") + stringifyMemoryCategory((MemoryCategory)c) + ")")
                    .str();
          peakPhase = cls ? std::optional(cls.getPhase()) : std::nullopt;
        }
      } else if (auto d = dyn_cast<memref::DeallocOp>(op)) {
        auto [c, n] = sizes.lookup(d.getMemref());
        live[c] -= n;
        total -= n;
      }
    });
  }

  void countArguments(func::FuncOp fn) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto t = dyn_cast<MemRefType>(fn.getArgumentTypes()[i]);
      if (!t)
        continue;
      // Results turned into out-parameters have no role.
      auto role = fn.getArgAttrOfType<RoleAttr>(i, kRoleAttr);
      int64_t n = zero::bufferBytes(t);
      byRole[role ? stringifyRole(role.getValue()) : "output"] += n;
      arguments[(unsigned)(role ? memoryCategoryOf(role.getValue())
                                : MemoryCategory::other)] += n;
    }
  }

  DictionaryAttr toAttr(Builder &b) const {
    auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
    SmallVector<NamedAttribute> roles, cats, at;
    for (auto &kv : byRole)
      roles.push_back(b.getNamedAttr(kv.first(), i64(kv.second)));
    int64_t args = 0;
    for (unsigned c = 0; c < kNumCategories; ++c) {
      StringRef name = stringifyMemoryCategory((MemoryCategory)c);
      args += arguments[c];
      cats.push_back(b.getNamedAttr(
          name,
          b.getDictionaryAttr(
              {b.getNamedAttr("arguments", i64(arguments[c])),
               b.getNamedAttr("temporaries_peak", i64(temporariesPeak[c])),
               b.getNamedAttr("peak",
                              i64(arguments[c] + temporariesPeak[c]))})));
      at.push_back(b.getNamedAttr(name, i64(arguments[c] + atPeak[c])));
    }
    auto cat = [&](MemoryCategory c) { return arguments[(unsigned)c]; };
    int64_t grads = cat(MemoryCategory::gradients) + residentGradients;
    return b.getDictionaryAttr(
        {b.getNamedAttr("arguments", b.getDictionaryAttr(roles)),
         b.getNamedAttr("categories", b.getDictionaryAttr(cats)),
         b.getNamedAttr("temporaries_peak", i64(peak)),
         b.getNamedAttr("peak", i64(args + peak)),
         b.getNamedAttr("peak_at", b.getStringAttr(peakAt)),
         b.getNamedAttr(
             "peak_phase",
             b.getStringAttr(peakPhase ? stringifyPhase(*peakPhase) : "")),
         b.getNamedAttr("at_peak", b.getDictionaryAttr(at)),
         b.getNamedAttr(
             "model_states",
             b.getDictionaryAttr(
                 {b.getNamedAttr("parameters",
                                 i64(cat(MemoryCategory::parameters))),
                  b.getNamedAttr("gradients", i64(grads)),
                  b.getNamedAttr(
                      "optimizer_state",
                      i64(cat(MemoryCategory::optimizer_state)))}))});
  }
};

struct ZeroCPUMemoryReportPass
    : zero::cpu::impl::ZeroCPUMemoryReportBase<ZeroCPUMemoryReportPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    Builder b(module.getContext());
    SmallVector<NamedAttribute> reports;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn->hasAttr(kEntryAttr) || fn.isExternal())
        continue;
      StepMemory m;
      if (auto g = fn->getAttrOfType<IntegerAttr>(kResidentGradientsAttr))
        m.residentGradients = g.getInt();
      m.countArguments(fn);
      m.simulate(fn);
      reports.push_back(b.getNamedAttr(fn.getName(), m.toAttr(b)));
    }
    module->setAttr("zero.memory", b.getDictionaryAttr(reports));
  }
};
} // namespace
