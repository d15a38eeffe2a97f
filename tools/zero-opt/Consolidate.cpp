//===- Consolidate.cpp - zero-opt --consolidate ----------------*- C++ -*-===//
//
// A checkpoint's full weights as one .npz, tensor by tensor: each member is
// streamed from the rank files that hold its pieces, so memory stays
// bounded by the archive's buffers, whatever the model's size.
//
//===----------------------------------------------------------------------===//
#include "CompileDriver.h"

#include "zero-opt/Export/ONNX/ModelFile.h"
#include "zero-rt/Checkpoint.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace zero::rt;
namespace cl = llvm::cl;
namespace onnx_file = ::zero::onnx_file;

bool mlir::zero::isConsolidateInvocation(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a = argv[i];
    if (a == "--consolidate" || a == "-consolidate" ||
        a.starts_with("--consolidate="))
      return true;
  }
  return false;
}

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "zero-opt: error: " << msg << "\n";
  return 1;
}

/// What --save-weights writes, as views that read the checkpoint when the
/// output asks: parameters (a 16-bit one as its fp32 master weight),
/// buffers and frozen initializers.
static std::vector<ArrayView> checkpointWeights(CheckpointReader &ck) {
  const CheckpointManifest &m = ck.manifest();
  std::vector<ArrayView> views;
  for (const CheckpointTensor &t : m.tensors) {
    if (t.role != "parameter" && t.role != "buffer" && t.role != "frozen")
      continue;
    const CheckpointTensor *master = m.masterOf(t.name);
    const CheckpointTensor &src = master ? *master : t;
    ArrayView v;
    v.name = t.name;
    v.dtype = src.dtype;
    v.shape = t.shape;
    v.size = size_t(src.numel()) * itemSize(src.dtype);
    size_t es = itemSize(src.dtype);
    // Any byte range: whole elements around it are read, then cut.
    v.read = [&ck, &src, es](uint64_t offset, void *dst, size_t len,
                             std::string &err) {
      int64_t first = offset / es, last = (offset + len + es - 1) / es;
      if (offset % es == 0 && len % es == 0)
        return ck.read(src, first, last - first, src.dtype, dst, err);
      std::vector<unsigned char> tmp((last - first) * es);
      if (!ck.read(src, first, last - first, src.dtype, tmp.data(), err))
        return false;
      std::memcpy(dst, tmp.data() + offset % es, len);
      return true;
    };
    views.push_back(std::move(v));
  }
  return views;
}

int mlir::zero::consolidateMain(int argc, char **argv) {
  cl::OptionCategory cat("zero-opt --consolidate");
  cl::opt<std::string> dir(
      "consolidate",
      cl::desc("Checkpoint to consolidate: a step-N folder or a "
               "--save-checkpoint folder (its newest whole checkpoint)"),
      cl::value_desc("DIR"), cl::Required, cl::cat(cat));
  cl::opt<std::string> out("o", cl::desc("Weights to write (.npz)"),
                           cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<std::string> exportOnnx(
      "export-onnx",
      cl::desc("Write the trained model as ONNX: the model the checkpoint "
               "was trained from, its initializers holding these weights"),
      cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<std::string> model(
      "model",
      cl::desc("With --export-onnx: the ONNX model (default: the one the "
               "plan was compiled from, as the checkpoint records it)"),
      cl::value_desc("FILE"), cl::cat(cat));
  cl::opt<onnx_file::ExternalDataMode> external(
      "external-data", cl::desc("With --export-onnx: where the weights go"),
      onnx_file::externalDataValues(),
      cl::init(onnx_file::ExternalDataMode::Auto), cl::cat(cat));
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "zero-opt --consolidate DIR [-o weights.npz] [--export-onnx "
      "model.onnx]: the full fp32 weights of a checkpoint, as zero-run "
      "--save-weights writes them, or the trained ONNX model\n");
  if (out.empty() && exportOnnx.empty())
    return fail("--consolidate needs -o weights.npz or --export-onnx "
                "FILE.onnx (or both)");
  if (exportOnnx.empty() &&
      (model.getNumOccurrences() || external.getNumOccurrences()))
    return fail("--model and --external-data go with --export-onnx FILE");

  CheckpointReader ck;
  std::string error;
  if (!ck.open(dir, error))
    return fail(error);
  const CheckpointManifest &m = ck.manifest();
  std::vector<ArrayView> views = checkpointWeights(ck);
  if (views.empty())
    return fail(ck.dir() + ": the checkpoint holds no parameters");
  std::string what = "step " + std::to_string(m.steps) + ", " +
                     std::to_string(m.worldSize) +
                     (m.worldSize == 1 ? " rank" : " ranks") + ", stage " +
                     std::to_string(m.stage);
  if (!out.empty()) {
    if (!writeNpz(out, views, error))
      return fail(error);
    llvm::errs() << "zero-opt: consolidated " << views.size() << " tensors of "
                 << ck.dir() << " (" << what << ") -> " << out << "\n";
  }
  if (!exportOnnx.empty()) {
    std::string source = model.empty() ? m.modelPath : model.getValue();
    if (source.empty())
      return fail(ck.dir() + ": the checkpoint does not record its model's "
                             "path; pass --model MODEL.onnx");
    if (!onnx_file::exportModel(source, views, exportOnnx, external,
                                m.modelHash, error))
      return fail(error);
    llvm::errs() << "zero-opt: exported " << source << " with the weights of "
                 << ck.dir() << " (" << what << ") -> " << exportOnnx << "\n";
  }
  return 0;
}
