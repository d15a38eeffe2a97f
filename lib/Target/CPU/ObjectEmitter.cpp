//===- ObjectEmitter.cpp - LLVM dialect to a shared library ----*- C++ -*-===//
//
// The lowered module is split into one LLVM module per kernel and one for
// the rest (steps, entries, declarations). Each part is named and cached by
// a hash of its content and the target, optimized and compiled on its own
// thread, and the objects are linked into the step library. Kernels are
// small and few (identical ones were merged), so code generation no longer
// grows faster than the model: LLVM never sees one function that holds the
// whole step with its loops.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Target/CPU/CPUTarget.h"

#include "zero-opt/Dialect/Zero/IR/ZeroDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

/// Bumped whenever the code emitted for the same IR changes, so that old
/// cache entries are not reused.
static constexpr llvm::StringLiteral kObjectFormat = "zero-opt-object-1";

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

namespace {
/// The host CPU, as code generation targets it.
struct HostTarget {
  llvm::Triple triple;
  const llvm::Target *target = nullptr;
  std::string cpu, features;

  static llvm::Expected<HostTarget> get() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    HostTarget h;
    h.triple = llvm::Triple(llvm::sys::getDefaultTargetTriple());
    std::string err;
    h.target = llvm::TargetRegistry::lookupTarget(h.triple, err);
    if (!h.target)
      return makeError("no LLVM target for " + h.triple.str() + ": " + err);
    llvm::SubtargetFeatures f;
    for (auto &feature : llvm::sys::getHostCPUFeatures())
      f.AddFeature(feature.first(), feature.second);
    h.cpu = llvm::sys::getHostCPUName().str();
    h.features = f.getString();
    return h;
  }

  /// A target machine of its own for each compile thread.
  std::unique_ptr<llvm::TargetMachine>
  machine(llvm::CodeGenOptLevel level) const {
    llvm::TargetOptions options;
    return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
        triple, cpu, features, options, llvm::Reloc::PIC_, std::nullopt,
        level));
  }
};

/// One object of the library: a kernel or the rest of the module.
struct Part {
  OwningOpRef<ModuleOp> owned; ///< a kernel's module
  ModuleOp module;
  std::string key;    ///< hash of content, target and options
  std::string object; ///< path of the object file to link
  bool cached = false;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> llvmModule;
  std::string error;
  /// The step functions: straight-line calls to kernels, BLAS and the
  /// runtime, thousands of them in a deep model. Optimizing them buys
  /// nothing and scheduling one huge block costs more than every kernel
  /// together, so they get LLVM's fast path (-O0 instruction selection).
  bool isStep = false;

  unsigned optLevel(unsigned requested) const {
    return isStep ? 0 : requested;
  }
};
} // namespace

std::string zero::cpu::defaultObjectCacheDir() {
  if (auto dir = llvm::sys::Process::GetEnv("ZERO_OPT_CACHE_DIR"))
    return *dir;
  llvm::SmallString<256> path;
  if (auto xdg = llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty())
    path = *xdg;
  else if (!llvm::sys::path::home_directory(path))
    return "";
  else
    llvm::sys::path::append(path, ".cache");
  llvm::sys::path::append(path, "zero-opt", "objects");
  return std::string(path);
}

/// The module attributes that code generation reads; the others (plans,
/// reports) would only keep identical code apart in the cache.
static void copyCodegenAttrs(ModuleOp from, ModuleOp to) {
  for (NamedAttribute a : from->getAttrs())
    if (a.getName().strref().starts_with("llvm.") ||
        a.getName().strref().starts_with("dlti."))
      to->setAttr(a.getName(), a.getValue());
}

/// Moves each kernel (an llvm.func marked zero.kernel) of `module` into a
/// module of its own with declarations of what it references, named
/// `zero_kernel_<hash>` by its content so that the same kernel has the same
/// symbol, and the same cached object, in every compile.
static SmallVector<Part> splitKernels(ModuleOp module) {
  SmallVector<Part> parts;
  SymbolTable symbols(module);
  llvm::StringMap<std::string> renamed;
  llvm::StringSet<> names;
  for (auto fn : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
    if (fn.isExternal() || !fn->hasAttr(zero::kKernelAttr))
      continue;
    Part part;
    part.owned = ModuleOp::create(fn.getLoc());
    part.module = *part.owned;
    copyCodegenAttrs(module, part.module);
    OpBuilder b = OpBuilder::atBlockEnd(part.module.getBody());
    // What the kernel references: functions as declarations, globals whole.
    SmallVector<Operation *> work{fn};
    llvm::SmallPtrSet<Operation *, 8> seen{fn};
    for (size_t i = 0; i < work.size(); ++i) {
      auto uses = SymbolTable::getSymbolUses(work[i]);
      if (!uses)
        continue;
      for (const SymbolTable::SymbolUse &use : *uses) {
        Operation *def =
            symbols.lookup(use.getSymbolRef().getRootReference());
        if (!def || !seen.insert(def).second)
          continue;
        if (auto callee = dyn_cast<LLVM::LLVMFuncOp>(def)) {
          auto decl = cast<LLVM::LLVMFuncOp>(b.cloneWithoutRegions(*callee));
          decl.setLinkage(LLVM::Linkage::External);
          continue;
        }
        b.clone(*def);
        work.push_back(def);
      }
    }
    // The body moves; the step keeps a declaration.
    auto kernel = cast<LLVM::LLVMFuncOp>(b.cloneWithoutRegions(*fn));
    kernel.getBody().takeBody(fn.getBody());
    kernel.setLinkage(LLVM::Linkage::External);
    kernel.setVisibility_(LLVM::Visibility::Hidden);
    // The name follows from the content alone.
    std::string oldName = fn.getSymName().str();
    if (failed(SymbolTable::replaceAllSymbolUses(
            kernel, StringAttr::get(module.getContext(), "zero_kernel"),
            part.module)))
      continue;
    kernel.setSymName("zero_kernel");
    std::string text;
    llvm::raw_string_ostream os(text);
    part.module.print(os, OpPrintingFlags().enableDebugInfo(false));
    std::string name =
        "zero_kernel_" + llvm::toHex(llvm::SHA256::hash(
                                         llvm::arrayRefFromStringRef(text)),
                                     /*LowerCase=*/true)
                             .substr(0, 24);
    kernel.setSymName(name);
    renamed[oldName] = name;
    fn.setLinkage(LLVM::Linkage::External);
    fn.setVisibility_(LLVM::Visibility::Hidden);
    // Kernels that differed only before lowering share one object.
    if (names.insert(name).second)
      parts.push_back(std::move(part));
  }
  // One walk renames every call.
  module.walk([&](LLVM::CallOp call) {
    if (auto callee = call.getCallee()) {
      auto it = renamed.find(*callee);
      if (it != renamed.end())
        call.setCallee(it->second);
    }
  });
  // Declarations, one per name.
  llvm::StringSet<> declared;
  for (auto fn : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
    auto it = renamed.find(fn.getSymName());
    if (it == renamed.end())
      continue;
    if (!declared.insert(it->second).second) {
      fn.erase();
      continue;
    }
    fn.setSymName(it->second);
  }
  return parts;
}

/// Names, orders and merges the private constant globals of `module` by
/// their content. Bufferization creates them in an order that varies from
/// run to run (it visits functions in hash-map order), which would make the
/// same program hash differently and miss the cache.
static void canonicalizeConstants(ModuleOp module) {
  SmallVector<std::pair<std::string, LLVM::GlobalOp>> globals;
  for (auto g : module.getOps<LLVM::GlobalOp>()) {
    if (!g.getConstant() || g.getLinkage() != LLVM::Linkage::Private ||
        !g.getInitializerRegion().empty())
      continue;
    std::string text;
    llvm::raw_string_ostream os(text);
    Operation *copy = g->clone();
    cast<LLVM::GlobalOp>(copy).setSymName("g");
    copy->print(os, OpPrintingFlags().enableDebugInfo(false));
    copy->destroy();
    globals.push_back({std::move(text), g});
  }
  llvm::stable_sort(globals, [](auto &a, auto &b) { return a.first < b.first; });
  llvm::StringMap<std::string> renamed;
  Operation *insertAt = &module.getBody()->front();
  StringRef last;
  std::string name;
  int64_t count = 0;
  for (auto &[text, g] : globals) {
    if (count && text == last) {
      // The same content as the previous one: one global.
      renamed[g.getSymName()] = name;
      g.erase();
      continue;
    }
    name = "__zero_constant_" + std::to_string(count++);
    renamed[g.getSymName()] = name;
    if (g.getOperation() != insertAt)
      g->moveBefore(insertAt);
    insertAt = g->getNextNode();
    last = text;
  }
  module.walk([&](LLVM::AddressOfOp a) {
    auto it = renamed.find(a.getGlobalName());
    if (it != renamed.end())
      a.setGlobalName(it->second);
  });
  for (auto g : module.getOps<LLVM::GlobalOp>()) {
    auto it = renamed.find(g.getSymName());
    if (it != renamed.end())
      g.setSymName(it->second);
  }
}

/// Hash of a part's IR and everything else that decides its object.
static std::string partKey(ModuleOp module, const HostTarget &host,
                           unsigned optLevel) {
  llvm::SHA256 h;
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, OpPrintingFlags().enableDebugInfo(false));
  h.update(text);
  for (llvm::StringRef s :
       {llvm::StringRef(kObjectFormat), llvm::StringRef(LLVM_VERSION_STRING),
        llvm::StringRef(host.triple.str()), llvm::StringRef(host.cpu),
        llvm::StringRef(host.features)}) {
    h.update("\n");
    h.update(s);
  }
  h.update("\nO" + std::to_string(optLevel));
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

/// Writes `bytes` to `path` through a unique temporary name and a rename,
/// so concurrent compiles never see half an object.
static std::error_code writeAtomically(llvm::StringRef path,
                                       llvm::StringRef bytes) {
  llvm::SmallString<256> tmp;
  int fd;
  if (auto ec = llvm::sys::fs::createUniqueFile(path + ".%%%%%%.tmp", fd, tmp))
    return ec;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    os.close();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return ec;
    }
  }
  if (auto ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    return ec;
  }
  return {};
}

/// The C compiler driver that links the objects; it knows the system's
/// linker and C library paths.
static llvm::Expected<std::string> findLinkerDriver() {
  for (const char *name : {"cc", "gcc", "clang-22", "clang"})
    if (auto p = llvm::sys::findProgramByName(name))
      return *p;
  if (auto p = llvm::sys::findProgramByName("clang", {"/usr/lib/llvm-22/bin"}))
    return *p;
  return makeError("no C compiler driver (cc) found to link the step");
}

llvm::Error zero::cpu::emitSharedLibrary(ModuleOp module, StringRef soPath,
                                         const CodegenOptions &options,
                                         TimingScope &timing,
                                         CodegenStats *stats) {
  registerBuiltinDialectTranslation(*module->getContext());
  registerLLVMDialectTranslation(*module->getContext());
  auto host = HostTarget::get();
  if (!host)
    return host.takeError();

  // Objects not taken from the cache are written next to the library.
  llvm::SmallString<256> objDir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory(soPath + ".objects", objDir))
    return makeError("cannot create a folder next to " + soPath + ": " +
                     ec.message());
  std::string tmpSo = (soPath + ".tmp").str();
  auto cleanup = llvm::scope_exit([&] {
    llvm::sys::fs::remove_directories(objDir);
    llvm::sys::fs::remove(tmpSo);
  });
  if (!options.cacheDir.empty())
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.cacheDir))
      return makeError("cannot create the object cache " + options.cacheDir +
                       ": " + ec.message() +
                       " (choose another with --object-cache=DIR, or "
                       "--no-object-cache)");

  SmallVector<Part> parts;
  {
    TimingScope t = timing.nest("split and hash");
    canonicalizeConstants(module);
    if (options.splitKernels)
      parts = splitKernels(module);
    Part rest;
    rest.module = module;
    rest.isStep = true;
    parts.push_back(std::move(rest));
    for (auto [i, part] : llvm::enumerate(parts)) {
      part.key = partKey(part.module, *host, part.optLevel(options.optLevel));
      if (!options.cacheDir.empty()) {
        llvm::SmallString<256> p(options.cacheDir);
        llvm::sys::path::append(p, part.key + ".o");
        part.object = std::string(p);
        part.cached = llvm::sys::fs::exists(p);
      }
      if (!part.cached && options.cacheDir.empty()) {
        llvm::SmallString<256> p(objDir);
        llvm::sys::path::append(p, std::to_string(i) + ".o");
        part.object = std::string(p);
      }
    }
  }

  {
    TimingScope t = timing.nest("translate to LLVM IR");
    for (Part &part : parts) {
      if (part.cached)
        continue;
      part.context = std::make_unique<llvm::LLVMContext>();
      part.llvmModule =
          translateModuleToLLVMIR(part.module, *part.context, "zero_step");
      if (!part.llvmModule)
        return makeError("translation to LLVM IR failed");
      part.llvmModule->setTargetTriple(host->triple);
    }
  }

  {
    TimingScope t = timing.nest("optimize and compile");
    unsigned threads = options.threads;
    llvm::DefaultThreadPool pool(threads ? llvm::hardware_concurrency(threads)
                                         : llvm::hardware_concurrency());
    for (Part &part : parts) {
      if (part.cached)
        continue;
      pool.async([&part, &host, &options, &objDir] {
        unsigned level = part.optLevel(options.optLevel);
        std::unique_ptr<llvm::TargetMachine> tm =
            host->machine(level ? llvm::CodeGenOptLevel::Aggressive
                                : llvm::CodeGenOptLevel::None);
        if (!tm) {
          part.error = "cannot create a target machine";
          return;
        }
        part.llvmModule->setDataLayout(tm->createDataLayout());
        auto transformer = makeOptimizingTransformer(level, 0, tm.get());
        if (llvm::Error e = transformer(part.llvmModule.get())) {
          part.error = llvm::toString(std::move(e));
          return;
        }
        llvm::SmallString<0> object;
        {
          llvm::raw_svector_ostream os(object);
          llvm::legacy::PassManager pm;
          if (tm->addPassesToEmitFile(pm, os, nullptr,
                                      llvm::CodeGenFileType::ObjectFile)) {
            part.error = "the target cannot emit object files";
            return;
          }
          pm.run(*part.llvmModule);
        }
        part.llvmModule.reset();
        part.context.reset();
        if (std::error_code ec = writeAtomically(part.object, object))
          part.error = "cannot write " + part.object + ": " + ec.message();
      });
    }
    pool.wait();
  }
  for (Part &part : parts)
    if (!part.error.empty())
      return makeError(part.error);
  if (stats) {
    stats->kernels = parts.size() - 1;
    stats->objects = parts.size();
    stats->cached = llvm::count_if(parts, [](Part &p) { return p.cached; });
  }

  TimingScope t = timing.nest("link");
  auto driver = findLinkerDriver();
  if (!driver)
    return driver.takeError();
  // Runtime symbols (zero_rt_*) resolve against the loading process.
  SmallVector<std::string> argStorage = {*driver, "-shared", "-o", tmpSo};
  for (Part &part : parts)
    argStorage.push_back(part.object);
  argStorage.push_back("-lm");
  argStorage.append(options.linkArgs.begin(), options.linkArgs.end());
  SmallVector<StringRef> args(argStorage.begin(), argStorage.end());
  std::string errMsg;
  int rc =
      llvm::sys::ExecuteAndWait(*driver, args, std::nullopt, {}, 0, 0, &errMsg);
  if (rc != 0)
    return makeError("linking " + soPath + " with " + *driver +
                     " failed (exit " + llvm::Twine(rc) + ") " + errMsg);
  if (std::error_code ec = llvm::sys::fs::rename(tmpSo, soPath))
    return makeError("cannot rename " + tmpSo + " to " + soPath + ": " +
                     ec.message());
  return llvm::Error::success();
}
