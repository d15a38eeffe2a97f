//===- ONNXConformance.cpp - ONNX backend node tests ------------*- C++ -*-===//
//
// Runs ONNX's own node tests (model.onnx + test_data_set_*/{input,output}_*.pb)
// through import, the CPU pipeline and zero-run's step loader, and compares
// with the shipped outputs. A test is skipped when it uses an op or element
// type zero-opt does not lower, or when the importer reports an unsupported
// feature; the reason is listed. Each test runs in its own process, so a
// crash is a failure and never takes the driver down.
//
// Operands that must be compile-time constants (Reshape's shape, Slice's
// starts, ...) are graph inputs in these tests; they are bound to the
// test's values as initializers before compiling, as a user would freeze
// them.
//
//===----------------------------------------------------------------------===//
#include "zero-opt/Driver/Compiler.h"
#include "zero-rt/Float16.h"
#include "zero-rt/Step.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;
namespace rt = ::zero::rt;

namespace {
enum class Outcome { Pass, Fail, Skip };

struct Result {
  Outcome outcome;
  std::string detail;
};

bool readProto(const std::string &path, google::protobuf::MessageLite &msg) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::stringstream ss;
  ss << in.rdbuf();
  return msg.ParseFromString(ss.str());
}

std::optional<rt::DType> dtypeOf(int32_t t) {
  switch (t) {
  case onnx::TensorProto::FLOAT:
    return rt::DType::F32;
  case onnx::TensorProto::DOUBLE:
    return rt::DType::F64;
  case onnx::TensorProto::FLOAT16:
    return rt::DType::F16;
  case onnx::TensorProto::BFLOAT16:
    return rt::DType::BF16;
  case onnx::TensorProto::INT64:
    return rt::DType::I64;
  case onnx::TensorProto::INT32:
    return rt::DType::I32;
  case onnx::TensorProto::INT16:
    return rt::DType::I16;
  case onnx::TensorProto::INT8:
    return rt::DType::I8;
  case onnx::TensorProto::BOOL:
    return rt::DType::Bool;
  default:
    return std::nullopt;
  }
}

template <typename T, typename Field>
void fill(const onnx::TensorProto &t, const Field &f, rt::Array &a) {
  if (t.has_raw_data()) {
    a.data.assign(t.raw_data().begin(), t.raw_data().end());
    return;
  }
  a.data.resize(f.size() * sizeof(T));
  T *out = reinterpret_cast<T *>(a.data.data());
  for (int i = 0; i < f.size(); ++i)
    out[i] = static_cast<T>(f.Get(i));
}

/// `declared`: the type the step declares for it. ONNX's own tests store
/// bfloat16 data as UINT16 tensors.
bool toArray(const onnx::TensorProto &t, rt::Array &a,
             std::optional<rt::DType> declared = std::nullopt) {
  bool bf16AsU16 =
      t.data_type() == onnx::TensorProto::UINT16 && declared == rt::DType::BF16;
  auto dt = bf16AsU16 ? declared : dtypeOf(t.data_type());
  if (!dt)
    return false;
  a.dtype = *dt;
  a.name = t.name();
  a.shape.assign(t.dims().begin(), t.dims().end());
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    fill<float>(t, t.float_data(), a);
    break;
  case onnx::TensorProto::DOUBLE:
    fill<double>(t, t.double_data(), a);
    break;
  case onnx::TensorProto::INT64:
    fill<int64_t>(t, t.int64_data(), a);
    break;
  case onnx::TensorProto::INT32:
    fill<int32_t>(t, t.int32_data(), a);
    break;
  case onnx::TensorProto::INT16:
    fill<int16_t>(t, t.int32_data(), a);
    break;
  case onnx::TensorProto::INT8:
    fill<int8_t>(t, t.int32_data(), a);
    break;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::UINT16:
    fill<uint16_t>(t, t.int32_data(), a);
    break;
  case onnx::TensorProto::BOOL:
    fill<uint8_t>(t, t.int32_data(), a);
    break;
  }
  return (int64_t)a.data.size() == a.numel() * (int64_t)a.itemSize();
}

double elementAsDouble(const rt::Array &a, int64_t i) {
  switch (a.dtype) {
  case rt::DType::F32:
    return a.as<float>()[i];
  case rt::DType::F64:
    return a.as<double>()[i];
  default:
    return 0;
  }
}

/// ONNX backend tolerances: |got - want| <= atol + rtol * |want|.
std::string compare(const rt::Array &got, const rt::Array &want, double rtol,
                    double atol) {
  if (got.shape != want.shape || got.dtype != want.dtype)
    return "shape or dtype differs from the expected output";
  int64_t n = want.numel();
  bool isFloat = want.dtype == rt::DType::F32 || want.dtype == rt::DType::F64 ||
                 want.dtype == rt::DType::F16 || want.dtype == rt::DType::BF16;
  if (!isFloat)
    return std::memcmp(got.data.data(), want.data.data(), want.data.size())
               ? "integer or bool values differ"
               : "";
  // Cast to bfloat16 leaves the rounding unspecified before opset 19: the
  // shipped outputs truncate, round-to-nearest-even (what zero-opt, PyTorch
  // and opset 19 do) may differ by one unit in the last place, 2^-7 of the
  // value at most.
  if (want.dtype == rt::DType::BF16)
    rtol = std::max(rtol, 1.0 / 128);
  for (int64_t i = 0; i < n; ++i) {
    double g, w;
    if (want.dtype == rt::DType::F16) {
      g = rt::f16ToFloat(got.as<uint16_t>()[i]);
      w = rt::f16ToFloat(want.as<uint16_t>()[i]);
    } else if (want.dtype == rt::DType::BF16) {
      g = rt::bf16ToFloat(got.as<uint16_t>()[i]);
      w = rt::bf16ToFloat(want.as<uint16_t>()[i]);
    } else {
      g = elementAsDouble(got, i);
      w = elementAsDouble(want, i);
    }
    if (std::isnan(w) && std::isnan(g))
      continue;
    if (std::isinf(w) && g == w)
      continue;
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
      std::ostringstream os;
      os << "element " << i << ": got " << g << ", expected " << w;
      return os.str();
    }
  }
  return "";
}

/// Folder of replacement expected outputs (test/test_data_set_N/output_K).
std::string expectedOverrides;

/// The static shape the model declares for graph input `name`, if any.
std::optional<std::vector<int64_t>> declaredShape(const onnx::GraphProto &g,
                                                  const std::string &name) {
  for (const auto &vi : g.input()) {
    if (vi.name() != name || !vi.type().has_tensor_type() ||
        !vi.type().tensor_type().has_shape())
      continue;
    std::vector<int64_t> shape;
    for (const auto &d : vi.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value())
        return std::nullopt;
      shape.push_back(d.dim_value());
    }
    return shape;
  }
  return std::nullopt;
}

/// Compiles and runs one data set of one test.
Result runDataSet(const onnx::ModelProto &original, const std::string &dataDir,
                  const std::string &workDir) {
  onnx::ModelProto model = original;
  onnx::GraphProto *g = model.mutable_graph();
  std::set<std::string> inits;
  for (const auto &t : g->initializer())
    inits.insert(t.name());
  std::vector<std::string> inputNames;
  for (const auto &vi : g->input())
    if (!inits.count(vi.name()))
      inputNames.push_back(vi.name());

  std::map<std::string, onnx::TensorProto> inputs;
  for (size_t i = 0; i < inputNames.size(); ++i) {
    onnx::TensorProto t;
    std::string p = dataDir + "/input_" + std::to_string(i) + ".pb";
    if (!readProto(p, t))
      return {Outcome::Skip, "input " + std::to_string(i) +
                                 " is not a tensor (sequence or optional)"};
    t.set_name(inputNames[i]);
    inputs[inputNames[i]] = t;
  }
  std::vector<onnx::TensorProto> outputs;
  std::string expectedDir = dataDir;
  if (!expectedOverrides.empty()) {
    llvm::SmallString<256> alt(expectedOverrides);
    llvm::sys::path::append(
        alt, llvm::sys::path::filename(llvm::sys::path::parent_path(dataDir)),
        llvm::sys::path::filename(dataDir));
    if (llvm::sys::fs::exists(alt))
      expectedDir = std::string(alt);
  }
  for (int i = 0; i < g->output_size(); ++i) {
    onnx::TensorProto t;
    std::string p = expectedDir + "/output_" + std::to_string(i) + ".pb";
    if (!readProto(p, t))
      return {Outcome::Skip, "output " + std::to_string(i) +
                                 " is not a tensor (sequence or optional)"};
    outputs.push_back(t);
  }

  // Bind inputs in compile-time operand positions as initializers.
  std::set<std::string> bound;
  for (const auto &node : g->node())
    for (int i = 0; i < node.input_size(); ++i)
      if (inputs.count(node.input(i)) &&
          mlir::zero::isCompileTimeOperand(node.op_type(), i))
        bound.insert(node.input(i));
  if (!bound.empty()) {
    auto *in = g->mutable_input();
    for (int i = in->size() - 1; i >= 0; --i)
      if (bound.count(in->Get(i).name()))
        in->DeleteSubrange(i, 1);
    for (const std::string &name : bound)
      *g->add_initializer() = inputs[name];
  }

  std::string modelPath = workDir + "/model.onnx";
  {
    std::ofstream os(modelPath, std::ios::binary);
    model.SerializeToOstream(&os);
  }
  DialectRegistry registry;
  mlir::zero::registerCompilerDialects(registry);
  MLIRContext ctx(registry);
  std::string diag;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (diag.empty())
      diag = d.str();
    return success();
  });
  std::string outDir = workDir + "/out";
  mlir::zero::CompileOptions options;
  options.mode = mlir::zero::CompileMode::Infer;
  if (failed(mlir::zero::compileModel(&ctx, modelPath, options, outDir))) {
    if (llvm::StringRef(diag).starts_with("unsupported"))
      return {Outcome::Skip, diag};
    return {Outcome::Fail, "compile: " + diag};
  }

  rt::Program prog;
  std::string error;
  if (!prog.load(outDir, error) || !prog.open(error))
    return {Outcome::Fail, error};
  const rt::Function *fn = prog.function("forward");
  if (!fn)
    return {Outcome::Fail, "no forward function"};
  std::vector<rt::Array> params;
  if (!prog.loadParameters(*fn, params, error))
    return {Outcome::Fail, error};
  std::vector<rt::Array> bufs;
  size_t nextParam = 0;
  for (const rt::BufferSpec &spec : fn->arguments) {
    if (spec.initialized()) {
      bufs.push_back(std::move(params[nextParam++]));
      continue;
    }
    // Random draws: the shipped outputs hold numpy's masks, not Philox's
    // (test/e2e/dropout.py tests the masks).
    if (spec.role == "rng")
      return {Outcome::Skip, "output depends on the random mask the "
                             "reference drew"};
    rt::Array a;
    bool converted = toArray(inputs[spec.name], a, spec.dtype);
    // Test data that contradicts the model's static input shape (a few
    // upstream CastLike tests feed a [1] 'like' to a [3, 4] input).
    if (converted && a.dtype == spec.dtype && a.shape != spec.shape &&
        declaredShape(*g, spec.name) == spec.shape)
      return {Outcome::Skip, "the test data's input '" + spec.name +
                                 "' has another shape than the model "
                                 "declares"};
    if (!converted || a.dtype != spec.dtype || a.shape != spec.shape)
      return {Outcome::Fail, "input '" + spec.name +
                                 "' does not match the compiled signature"};
    bufs.push_back(std::move(a));
  }
  size_t firstResult = bufs.size();
  for (const rt::BufferSpec &spec : fn->results)
    bufs.push_back(rt::makeArray(spec));
  std::vector<void *> ptrs;
  for (rt::Array &a : bufs)
    ptrs.push_back(a.data.data());
  fn->run(ptrs.data());
  for (size_t i = 0; i < outputs.size(); ++i) {
    rt::Array want;
    if (!toArray(outputs[i], want, bufs[firstResult + i].dtype))
      return {Outcome::Skip, "expected output has an unsupported type"};
    std::string mismatch =
        compare(bufs[firstResult + i], want, /*rtol=*/1e-3, /*atol=*/1e-7);
    if (!mismatch.empty())
      return {Outcome::Fail, "output " + std::to_string(i) + ": " + mismatch};
  }
  return {Outcome::Pass, ""};
}

/// Static checks that decide a skip before compiling.
std::optional<std::string> unsupportedReason(const onnx::ModelProto &m) {
  for (const auto &node : m.graph().node()) {
    if (!mlir::zero::isSupportedONNXOp(node.domain(), node.op_type()))
      return "op " + node.op_type() +
             (node.domain().empty() ? "" : " of domain " + node.domain());
  }
  auto checkType =
      [](const onnx::ValueInfoProto &vi) -> std::optional<std::string> {
    if (!vi.type().has_tensor_type())
      return "non-tensor value '" + vi.name() + "'";
    if (!dtypeOf(vi.type().tensor_type().elem_type()))
      return "element type " + onnx::TensorProto::DataType_Name(
                                   (onnx::TensorProto::DataType)vi.type()
                                       .tensor_type()
                                       .elem_type());
    return std::nullopt;
  };
  for (const auto &vi : m.graph().input())
    if (auto r = checkType(vi))
      return r;
  for (const auto &vi : m.graph().output())
    if (auto r = checkType(vi))
      return r;
  return std::nullopt;
}

Result runTest(const std::string &dir, const std::string &workDir) {
  onnx::ModelProto model;
  if (!readProto(dir + "/model.onnx", model))
    return {Outcome::Fail, "cannot read model.onnx"};
  if (auto reason = unsupportedReason(model))
    return {Outcome::Skip, *reason};
  std::vector<std::string> sets;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::filename(it->path()).starts_with("test_data_set_"))
      sets.push_back(it->path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty())
    return {Outcome::Skip, "no test data"};
  for (const std::string &set : sets) {
    Result r = runDataSet(model, set, workDir);
    if (r.outcome != Outcome::Pass)
      return r;
  }
  return {Outcome::Pass, ""};
}

/// Runs one test in a child process; returns its result through a pipe.
pid_t spawn(const std::string &dir, const std::string &workDir, int &fd) {
  int p[2];
  if (pipe(p) != 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    alarm(300);
    llvm::sys::fs::create_directories(workDir);
    Result r = runTest(dir, workDir);
    std::string msg = std::to_string((int)r.outcome) + " " + r.detail;
    (void)!write(p[1], msg.data(), msg.size());
    close(p[1]);
    llvm::sys::fs::remove_directories(workDir);
    _exit(0);
  }
  close(p[1]);
  fd = p[0];
  return pid;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::list<std::string> roots(cl::Positional, cl::desc("<node test folders>"),
                              cl::OneOrMore);
  cl::opt<unsigned> jobs("jobs", cl::desc("Tests run in parallel"),
                         cl::init(2));
  cl::opt<std::string> filter("filter", cl::desc("Regex on test names"),
                              cl::init(""));
  cl::opt<unsigned> minPass(
      "min-pass", cl::desc("Fail unless at least this many pass"), cl::init(0));
  cl::opt<bool> verbose("v", cl::desc("Print every test"));
  cl::list<std::string> require(
      "require",
      cl::desc("Tests (suite/name) that must pass: a skip fails the run"),
      cl::CommaSeparated);
  cl::opt<std::string> overrides(
      "expected-overrides",
      cl::desc("Folder of expected outputs replacing shipped ones that "
               "contradict their model"),
      cl::init(""));
  cl::ParseCommandLineOptions(argc, argv, "ONNX node conformance\n");
  expectedOverrides = overrides;
  mlir::zero::registerCompilerPasses();

  std::vector<std::string> tests;
  std::error_code ec;
  llvm::Regex re(filter);
  for (const std::string &root : roots) {
    size_t before = tests.size();
    for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec;
         it.increment(ec)) {
      std::string name = llvm::sys::path::filename(it->path()).str();
      if (llvm::sys::fs::exists(it->path() + "/model.onnx") &&
          (filter.empty() || re.match(name)))
        tests.push_back(it->path());
    }
    if (ec || (tests.size() == before && filter.empty())) {
      llvm::errs() << "no node tests under " << root << "\n";
      return 1;
    }
  }
  std::sort(tests.begin(), tests.end());

  SmallString<128> work;
  llvm::sys::fs::createUniqueDirectory("zero-conformance", work);
  struct Running {
    std::string name;
    int fd;
  };
  std::map<pid_t, Running> running;
  std::map<std::string, Result> results;
  size_t next = 0;
  while (next < tests.size() || !running.empty()) {
    while (next < tests.size() &&
           running.size() < std::max(1u, (unsigned)jobs)) {
      // Suite/test, since several suites may share test names.
      std::string name = (llvm::sys::path::filename(
                              llvm::sys::path::parent_path(tests[next])) +
                          "/" + llvm::sys::path::filename(tests[next]))
                             .str();
      int fd;
      pid_t pid =
          spawn(tests[next], (work + "/" + std::to_string(next)).str(), fd);
      running[pid] = {name, fd};
      ++next;
    }
    int status;
    pid_t pid = wait(&status);
    auto it = running.find(pid);
    if (it == running.end())
      continue;
    std::string msg;
    char buf[4096];
    ssize_t len;
    while ((len = read(it->second.fd, buf, sizeof(buf))) > 0)
      msg.append(buf, len);
    close(it->second.fd);
    Result r;
    if (!WIFEXITED(status) || msg.empty()) {
      r = {Outcome::Fail,
           WIFSIGNALED(status)
               ? "crashed with signal " + std::to_string(WTERMSIG(status))
               : "no result"};
    } else {
      r.outcome = (Outcome)(msg[0] - '0');
      r.detail = msg.size() > 2 ? msg.substr(2) : "";
    }
    const std::string &name = it->second.name;
    if (r.outcome == Outcome::Fail)
      llvm::outs() << "FAIL " << name << ": " << r.detail << "\n";
    else if (verbose)
      llvm::outs() << (r.outcome == Outcome::Pass ? "PASS " : "SKIP ") << name
                   << (r.detail.empty() ? "" : ": " + r.detail) << "\n";
    llvm::outs().flush();
    results[name] = r;
    running.erase(it);
  }
  llvm::sys::fs::remove_directories(work);

  unsigned pass = 0, fail = 0, skip = 0;
  llvm::outs() << "\nSkipped tests and reasons:\n";
  for (auto &[name, r] : results) {
    if (r.outcome == Outcome::Pass)
      ++pass;
    else if (r.outcome == Outcome::Fail)
      ++fail;
    else {
      ++skip;
      llvm::outs() << "  SKIP " << name << ": " << r.detail << "\n";
    }
  }
  llvm::outs() << "\n"
               << pass << " passed, " << fail << " failed, " << skip
               << " skipped\n";
  for (const std::string &name : require) {
    auto it = results.find(name);
    if (it == results.end() || it->second.outcome != Outcome::Pass) {
      llvm::outs() << "required test " << name << " did not pass"
                   << (it == results.end() ? " (not found)" : "") << "\n";
      ++fail;
    }
  }
  if (fail)
    return 1;
  if (pass < minPass) {
    llvm::outs() << "fewer than " << minPass << " tests passed\n";
    return 1;
  }
  return 0;
}
