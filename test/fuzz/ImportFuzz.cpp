//===- ImportFuzz.cpp - mutation smoke test of the model front end -*- C++
//-*-===//
//
// Mutates seed models (bit flips, byte edits, truncation, splices) and runs
// each through loading, import and lowering to the LLVM dialect. Every
// input must end in success or a diagnostic; a crash fails the run, and the
// input that caused it is kept for reproduction.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Driver/Compiler.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <random>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

static std::string currentInput;

static void onCrash(int sig) {
  const char msg[] = "\nzero-import-fuzz: crash; input kept at ";
  (void)!write(2, msg, sizeof(msg) - 1);
  (void)!write(2, currentInput.data(), currentInput.size());
  (void)!write(2, "\n", 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void mutate(std::string &data, std::mt19937_64 &rng,
                   const std::vector<std::string> &seeds) {
  auto pick = [&](size_t n) { return n ? rng() % n : 0; };
  unsigned edits = 1 + pick(4);
  for (unsigned e = 0; e < edits; ++e) {
    size_t n = data.size();
    switch (pick(7)) {
    case 0: // flip a bit
      if (n)
        data[pick(n)] ^= char(1u << pick(8));
      break;
    case 1: // set a byte to an interesting value
      if (n) {
        static const unsigned char vals[] = {0,    1,    0x7f, 0x80, 0xff,
                                             0x08, 0x10, 0x1a, 0x22};
        data[pick(n)] = vals[pick(sizeof(vals))];
      }
      break;
    case 2: // delete a range
      if (n) {
        size_t at = pick(n);
        data.erase(at, 1 + pick(std::min<size_t>(16, n - at)));
      }
      break;
    case 3: // insert random bytes
    {
      size_t at = pick(n + 1), len = 1 + pick(8);
      std::string ins(len, 0);
      for (char &c : ins)
        c = char(rng());
      data.insert(at, ins);
      break;
    }
    case 4: // truncate
      if (n)
        data.resize(pick(n));
      break;
    case 5: // duplicate a chunk
      if (n) {
        size_t at = pick(n), len = 1 + pick(std::min<size_t>(64, n - at));
        data.insert(pick(n + 1), data.substr(at, len));
      }
      break;
    case 6: // splice with another seed
    {
      const std::string &o = seeds[pick(seeds.size())];
      if (!o.empty() && n) {
        size_t cut = pick(n), from = pick(o.size());
        data = data.substr(0, cut) + o.substr(from);
      }
      break;
    }
    }
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::list<std::string> seedDirs(cl::Positional, cl::desc("<seed folders>"),
                                 cl::OneOrMore);
  cl::opt<unsigned> runs("runs", cl::desc("Mutated inputs"), cl::init(10000));
  cl::opt<uint64_t> seed("seed", cl::desc("Random seed"), cl::init(1));
  cl::opt<bool> lower("lower",
                      cl::desc("Also lower imported models to LLVM dialect"),
                      cl::init(true));
  cl::ParseCommandLineOptions(argc, argv, "zero-opt front-end fuzzer\n");

  std::vector<std::string> seeds;
  for (const std::string &dir : seedDirs) {
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
         it != end && !ec; it.increment(ec)) {
      StringRef p = it->path();
      if (!p.ends_with(".onnx") && !p.ends_with(".onnxtxt"))
        continue;
      if (auto buf = llvm::MemoryBuffer::getFile(p))
        seeds.push_back((*buf)->getBuffer().str());
    }
  }
  if (seeds.empty()) {
    llvm::errs() << "zero-import-fuzz: no seed models found\n";
    return 1;
  }

  mlir::zero::registerCompilerPasses();
  DialectRegistry registry;
  mlir::zero::registerCompilerDialects(registry);
  SmallString<128> path;
  llvm::sys::fs::createTemporaryFile("zero-fuzz", "onnx", path);
  currentInput = std::string(path);
  signal(SIGSEGV, onCrash);
  signal(SIGABRT, onCrash);
  signal(SIGBUS, onCrash);
  signal(SIGFPE, onCrash);
  signal(SIGILL, onCrash);

  std::mt19937_64 rng(seed);
  unsigned imported = 0, lowered = 0;
  for (unsigned i = 0; i < runs; ++i) {
    std::string data = seeds[rng() % seeds.size()];
    mutate(data, rng, seeds);
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec);
      os << data;
    }
    // A fresh context per input keeps inputs independent.
    MLIRContext ctx(registry);
    ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
    mlir::zero::ParamValues params;
    mlir::zero::CompileOptions options;
    OwningOpRef<ModuleOp> module =
        mlir::zero::buildStep(&ctx, path, options, params);
    if (!module)
      continue;
    ++imported;
    if (lower && succeeded(mlir::zero::lowerStepToLLVM(*module, options)))
      ++lowered;
  }
  llvm::sys::fs::remove(path);
  llvm::outs() << "zero-import-fuzz: " << runs << " mutated inputs, "
               << imported << " imported, " << lowered
               << " lowered, no crash\n";
  return 0;
}
