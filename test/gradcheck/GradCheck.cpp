//===- GradCheck.cpp - derivative rules against finite differences -*- C++ -*-===//
//
// Compiles a model's first scalar output and its gradient with respect to
// every floating-point graph input and parameter through the real pipeline
// (import, zero.gradient expansion, CPU lowering, code generation), then
// compares each gradient entry with a central finite difference of the
// compiled forward function. Models are meant to be float64.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"
#include "zero-opt/Dialect/Zero/Transforms/Passes.h"
#include "zero-opt/Driver/Compiler.h"
#include "zero-opt/Target/CPU/CPUTarget.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <dlfcn.h>
#include <random>

using namespace mlir;
using namespace mlir::zero;
namespace cl = llvm::cl;

static int fail(const Twine &msg) {
  llvm::errs() << "zero-gradcheck: error: " << msg << "\n";
  return 1;
}

/// Adds @grad(args) -> (loss, d loss / d every float argument).
static LogicalResult addGradFunction(ModuleOp module,
                                     SmallVectorImpl<unsigned> &wrt) {
  auto fn = module.lookupSymbol<func::FuncOp>("main");
  unsigned lossIdx = fn.getNumResults();
  for (unsigned i = 0; i < fn.getNumResults(); ++i) {
    auto t = cast<RankedTensorType>(fn.getResultTypes()[i]);
    if (t.getNumElements() == 1 && isa<FloatType>(t.getElementType())) {
      lossIdx = i;
      break;
    }
  }
  if (lossIdx == fn.getNumResults())
    return fn.emitError("no scalar floating-point output");
  OpBuilder b(fn);
  b.setInsertionPointAfter(fn);
  auto g = cast<func::FuncOp>(b.clone(*fn));
  g.setSymName("grad");
  auto ret = cast<func::ReturnOp>(g.getBody().front().getTerminator());
  Value loss = ret.getOperand(lossIdx);
  SmallVector<Value> xs;
  for (unsigned i = 0; i < g.getNumArguments(); ++i)
    if (isa<FloatType>(
            cast<RankedTensorType>(g.getArgumentTypes()[i]).getElementType())) {
      wrt.push_back(i);
      xs.push_back(g.getArgument(i));
    }
  b.setInsertionPoint(ret);
  auto grad = GradientOp::create(b, ret.getLoc(), TypeRange(xs), loss, xs);
  SmallVector<Value> results = {loss};
  llvm::append_range(results, grad.getGrads());
  SmallVector<Type> types;
  for (Value v : results)
    types.push_back(v.getType());
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  g.setFunctionType(b.getFunctionType(g.getArgumentTypes(), types));
  g.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
  PassManager pm(module.getContext());
  pm.addNestedPass<func::FuncOp>(createZeroExpandGradients());
  return pm.run(module);
}

namespace {
struct Buffer {
  std::vector<double> data;
  int64_t numel;
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::opt<std::string> input(cl::Positional, cl::desc("<model.onnxtxt>"),
                             cl::Required);
  cl::opt<std::string> range("range",
                             cl::desc("Inputs drawn uniformly from LO,HI"),
                             cl::init("-2,2"));
  cl::opt<double> tol("tol", cl::desc("Largest relative error allowed"),
                      cl::init(1e-6));
  cl::opt<unsigned> seed("seed", cl::desc("Random seed"), cl::init(1));
  cl::ParseCommandLineOptions(argc, argv, "zero-opt gradient checker\n");
  double lo, hi;
  {
    auto [a, c] = StringRef(range).split(',');
    if (a.getAsDouble(lo) || c.getAsDouble(hi) || !(lo < hi))
      return fail("--range=" + range + ": expected LO,HI with LO < HI");
  }

  registerCompilerPasses();
  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext ctx(registry);
  CompileOptions opts;
  opts.mode = CompileMode::Infer;
  ParamValues params;
  OwningOpRef<ModuleOp> module = importModel(&ctx, input, opts, params);
  if (!module)
    return 1;
  auto fn = module->lookupSymbol<func::FuncOp>("main");
  for (Type t : fn.getArgumentTypes())
    if (!cast<RankedTensorType>(t).getElementType().isF64() &&
        isa<FloatType>(cast<RankedTensorType>(t).getElementType()))
      return fail("floating-point inputs must be float64 for a gradient "
                  "check");
  SmallVector<unsigned> wrt;
  if (failed(addGradFunction(*module, wrt)))
    return 1;
  module->lookupSymbol<func::FuncOp>("grad")->setAttr(kEntryAttr,
                                                       UnitAttr::get(&ctx));
  // Only the float types of the signature matter from here on.
  SmallVector<RankedTensorType> argTypes, resTypes;
  SmallVector<std::string> argNames;
  SmallVector<bool> isParam;
  for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes())) {
    argTypes.push_back(cast<RankedTensorType>(t));
    auto name = fn.getArgAttrOfType<StringAttr>(i, kNameAttr);
    auto role = fn.getArgAttrOfType<RoleAttr>(i, kRoleAttr);
    argNames.push_back(name ? name.str() : "arg" + std::to_string(i));
    isParam.push_back(role && role.getValue() == Role::parameter);
  }
  for (Type t : fn.getResultTypes())
    resTypes.push_back(cast<RankedTensorType>(t));
  if (failed(lowerStepToLLVM(*module, opts)))
    return 1;
  SmallString<128> so;
  llvm::sys::fs::createTemporaryFile("zero-gradcheck", "so", so);
  TimingScope untimed;
  if (llvm::Error e =
          cpu::emitSharedLibrary(*module, so, cpu::CodegenOptions(), untimed))
    return fail(llvm::toString(std::move(e)));
  void *lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  llvm::sys::fs::remove(so);
  if (!lib)
    return fail(Twine("cannot load the compiled check: ") + dlerror());
  auto fwd = (void (*)(void **))dlsym(lib, "main_entry");
  auto grd = (void (*)(void **))dlsym(lib, "grad_entry");
  if (!fwd || !grd)
    return fail("compiled check lacks its entries");

  // Arguments: float ones random, integer ones (indices, labels) in
  // [0, small) so they are valid for gathers and losses.
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<std::vector<char>> args;
  for (size_t a = 0; a < argTypes.size(); ++a) {
    RankedTensorType t = argTypes[a];
    int64_t n = t.getNumElements();
    std::vector<char> buf;
    Type elt = t.getElementType();
    if (elt.isF64()) {
      buf.resize(n * 8);
      for (int64_t i = 0; i < n; ++i)
        reinterpret_cast<double *>(buf.data())[i] = u(rng);
    } else if (elt.isInteger(64)) {
      buf.resize(n * 8);
      for (int64_t i = 0; i < n; ++i)
        reinterpret_cast<int64_t *>(buf.data())[i] = rng() % 3;
    } else if (elt.isInteger(1)) {
      buf.resize(n);
      for (int64_t i = 0; i < n; ++i)
        buf[i] = rng() % 2;
    } else {
      return fail("unsupported argument type in a gradient check");
    }
    args.push_back(std::move(buf));
  }
  // Parameters start from the model's initializers.
  for (size_t a = 0; a < argTypes.size(); ++a) {
    if (!isParam[a])
      continue;
    for (const auto &[name, value] : params)
      if (name == argNames[a] && !value.isSplat() &&
          value.getRawData().size() == args[a].size())
        std::memcpy(args[a].data(), value.getRawData().data(),
                    args[a].size());
  }

  auto eval = [&]() {
    std::vector<std::vector<char>> outs;
    std::vector<void *> ptrs;
    for (auto &a : args)
      ptrs.push_back(a.data());
    for (RankedTensorType t : resTypes) {
      unsigned w = t.getElementType().isInteger(1)
                       ? 1
                       : t.getElementType().getIntOrFloatBitWidth() / 8;
      outs.emplace_back(t.getNumElements() * w);
    }
    for (auto &o : outs)
      ptrs.push_back(o.data());
    fwd(ptrs.data());
    for (size_t i = 0; i < resTypes.size(); ++i)
      if (resTypes[i].getNumElements() == 1 &&
          resTypes[i].getElementType().isF64())
        return *reinterpret_cast<double *>(outs[i].data());
    return std::nan("");
  };

  std::vector<std::vector<double>> grads;
  {
    std::vector<void *> ptrs;
    for (auto &a : args)
      ptrs.push_back(a.data());
    double loss;
    ptrs.push_back(&loss);
    for (unsigned i : wrt)
      grads.emplace_back(argTypes[i].getNumElements());
    for (auto &g : grads)
      ptrs.push_back(g.data());
    grd(ptrs.data());
  }

  double worst = 0;
  bool ok = true;
  for (size_t k = 0; k < wrt.size(); ++k) {
    unsigned a = wrt[k];
    StringRef name = argNames[a];
    double *x = reinterpret_cast<double *>(args[a].data());
    double argWorst = 0;
    for (int64_t i = 0; i < argTypes[a].getNumElements(); ++i) {
      double saved = x[i];
      double h = 1e-6 * std::max(1.0, std::fabs(saved));
      x[i] = saved + h;
      double fp = eval();
      x[i] = saved - h;
      double fm = eval();
      x[i] = saved;
      double fd = (fp - fm) / (2 * h);
      double an = grads[k][i];
      double scale = std::max(std::fabs(an), std::fabs(fd));
      // Entries whose derivative is ~0 are compared absolutely: a relative
      // error of two roundoff-sized numbers means nothing.
      double err = scale > 1e-7 ? std::fabs(an - fd) / scale
                                : std::fabs(an - fd) * 1e3;
      if (!(err <= tol)) {
        if (ok)
          llvm::outs() << "mismatch in d/d " << name << "[" << i
                       << "]: analytic " << an << ", finite difference "
                       << fd << "\n";
        ok = false;
      }
      argWorst = std::max(argWorst, err);
    }
    llvm::outs() << "d/d " << name << ": "
                 << argTypes[a].getNumElements()
                 << " entries, max relative error "
                 << llvm::format("%.2e", argWorst) << "\n";
    worst = std::max(worst, argWorst);
  }
  llvm::outs() << (ok ? "PASS" : "FAIL") << ": max relative error "
               << llvm::format("%.2e", worst) << " (limit "
               << llvm::format("%.0e", (double)tol) << ")\n";
  dlclose(lib);
  return ok ? 0 : 1;
}
