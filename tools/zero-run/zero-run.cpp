//===- zero-run.cpp - run a step compiled by zero-opt ----------*- C++ -*-===//
#include "zero-rt/Batches.h"
#include "zero-rt/Npz.h"
#include "zero-rt/Step.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace zero::rt;
namespace cl = llvm::cl;

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "zero-run: error: " << msg << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::OptionCategory cat("zero-run options");
  cl::opt<std::string> dir(cl::Positional, cl::desc("<OUT folder>"),
                           cl::Required, cl::cat(cat));
  cl::opt<bool> infer("infer",
                      cl::desc("Evaluate the graph outputs for each batch"),
                      cl::cat(cat));
  cl::opt<std::string> dataPath("data", cl::desc("Input data (.npz)"),
                                cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<std::string> outPath("out", cl::desc("With --infer: outputs (.npz)"),
                               cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<int64_t> steps("steps",
                         cl::desc("Number of batches (default: one pass "
                                  "over the data)"),
                         cl::init(0), cl::cat(cat));
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(argc, argv, "zero-run: run a compiled step\n");

  Step step;
  std::string error;
  if (!step.load(dir, error))
    return fail(error);
  if (!infer)
    return fail(dir + " holds a forward program; run it with --infer");
  if (dataPath.empty() || outPath.empty())
    return fail("--infer needs --data FILE.npz and --out FILE.npz");
  if (steps < 0)
    return fail("--steps must be positive");

  std::vector<Array> data;
  if (!readNpz(dataPath, data, error))
    return fail(error);
  Batches batches;
  if (!batches.bind(step, std::move(data), error))
    return fail(dataPath + ": " + error);
  std::vector<Array> params;
  if (!step.loadParameters(params, error))
    return fail(error);

  int64_t n = batches.samples(), b = batches.batchSize();
  int64_t count = steps ? steps : (n + b - 1) / b;
  const auto &args = step.arguments();
  const auto &res = step.results();
  std::vector<Array> argBufs, resBufs, outs;
  size_t nextParam = 0;
  for (const BufferSpec &spec : args)
    argBufs.push_back(spec.role == "parameter" ? std::move(params[nextParam++])
                                               : makeArray(spec));
  for (const BufferSpec &spec : res) {
    resBufs.push_back(makeArray(spec));
    Array o = makeArray(spec);
    o.shape.insert(o.shape.begin(), count);
    o.data.assign(o.data.size() * count, 0);
    outs.push_back(std::move(o));
  }
  std::vector<void *> ptrs;
  for (Array &a : argBufs)
    ptrs.push_back(a.data.data());
  for (Array &a : resBufs)
    ptrs.push_back(a.data.data());

  for (int64_t s = 0; s < count; ++s) {
    for (size_t i = 0; i < args.size(); ++i)
      if (batches.inputFor(i) >= 0)
        batches.copyRows(batches.inputFor(i), s * b, b, ptrs[i]);
    step.run(ptrs.data());
    for (size_t r = 0; r < res.size(); ++r) {
      size_t bytes = resBufs[r].data.size();
      std::memcpy(outs[r].data.data() + s * bytes, resBufs[r].data.data(),
                  bytes);
    }
  }
  if (!writeNpz(outPath, outs, error))
    return fail(error);
  llvm::errs() << "zero-run: evaluated " << count << " batches of " << b
               << " samples -> " << outPath << "\n";
  return 0;
}
