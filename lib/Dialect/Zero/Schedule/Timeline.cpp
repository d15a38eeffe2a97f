//===- Timeline.cpp - cost model and step simulator ------------*- C++ -*-===//
#include "zero-opt/Dialect/Zero/Schedule/Timeline.h"

#include "zero-opt/Dialect/Zero/Schedule/Footprint.h"
#include "zero-opt/Dialect/Zero/Utils/GuardedReads.h"
#include "zero-opt/Dialect/Zero/Utils/Kernels.h"
#include "zero-opt/Dialect/Zero/Utils/Masks.h"
#include "zero-opt/Dialect/Zero/Utils/MatmulLayout.h"
#include "zero-opt/Dialect/Zero/Utils/Philox.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;
using namespace mlir::zero;

/// `mayOverlap` on values, as a callback.
static bool valuesMayOverlap(Value a, Value b) { return mayOverlap(a, b); }

//===----------------------------------------------------------------------===//
// Hardware descriptions
//===----------------------------------------------------------------------===//

namespace {
/// Reads keys of one JSON object, naming `file: path.key` in errors.
struct Reader {
  StringRef file;
  std::string path;
  const llvm::json::Object *obj;
  std::string error;

  std::string where(StringRef key) const {
    return (file + ": " + (path.empty() ? "" : path + ".") + key).str();
  }
  bool fail(StringRef key, StringRef what) {
    if (error.empty())
      error = where(key) + ": " + what.str();
    return false;
  }
  /// A positive number, or (when `required` is false) absent.
  bool number(StringRef key, double &out, bool required, bool allowZero) {
    const llvm::json::Value *v = obj->get(key);
    if (!v || v->kind() == llvm::json::Value::Null)
      return required ? fail(key, "missing; expected a number") : true;
    std::optional<double> d = v->getAsNumber();
    if (!d || !std::isfinite(*d) || *d < 0 || (!allowZero && *d == 0))
      return fail(key, allowZero ? "expected a number >= 0"
                                 : "expected a number > 0");
    out = *d;
    return true;
  }
  /// An object of positive numbers by name, or absent.
  bool rates(StringRef key, llvm::StringMap<double> &out) {
    const llvm::json::Value *v = obj->get(key);
    if (!v)
      return true;
    const llvm::json::Object *o = v->getAsObject();
    if (!o)
      return fail(key, "expected an object of evaluations per second by "
                       "function (exp, tanh, erf, ..., default)");
    Reader r = child(key, o);
    for (const auto &kv : *o) {
      double d = 0;
      if (!r.number(kv.first, d, true, false)) {
        error = r.error;
        return false;
      }
      out[kv.first.str()] = d;
    }
    return true;
  }
  bool integer(StringRef key, int64_t &out) {
    const llvm::json::Value *v = obj->get(key);
    if (!v)
      return true;
    std::optional<int64_t> i = v->getAsInteger();
    if (!i || *i < 1)
      return fail(key, "expected an integer >= 1");
    out = *i;
    return true;
  }
  /// A nested object, or null when absent (or JSON null).
  const llvm::json::Object *object(StringRef key, bool &ok) {
    const llvm::json::Value *v = obj->get(key);
    if (!v || v->kind() == llvm::json::Value::Null)
      return nullptr;
    if (!v->getAsObject())
      ok = fail(key, "expected an object");
    return v->getAsObject();
  }
  Reader child(StringRef key, const llvm::json::Object *o) const {
    return {file, path.empty() ? key.str() : path + "." + key.str(), o, {}};
  }
};

constexpr const char *kCollectiveNames[] = {"all_reduce", "reduce_scatter",
                                            "all_gather"};
} // namespace

llvm::Expected<HardwareModel> HardwareModel::load(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError(
        llvm::formatv("cannot read the hardware description {0}: {1}", path,
                      buffer.getError().message()));
  llvm::Expected<llvm::json::Value> v =
      llvm::json::parse((*buffer)->getBuffer());
  if (!v)
    return llvm::createStringError(llvm::formatv(
        "{0}: not valid JSON: {1}", path, llvm::toString(v.takeError())));
  return fromJSON(*v, path);
}

llvm::Expected<HardwareModel>
HardwareModel::fromJSON(const llvm::json::Value &v, StringRef path) {
  auto fail = [&](const std::string &msg) -> llvm::Error {
    return llvm::createStringError(msg);
  };
  const llvm::json::Object *root = v.getAsObject();
  if (!root)
    return fail((path + ": expected a JSON object").str());
  HardwareModel hw;
  Reader r{path, "", root, {}};
  bool ok = true;
  if (auto name = root->getString("name"))
    hw.name = name->str();
  else
    hw.name = path.str();
  ok &= r.integer("devices_per_node", hw.devicesPerNode) &&
        r.integer("nodes", hw.nodes);

  const llvm::json::Object *device = r.object("device", ok);
  if (!device && ok)
    return fail(r.where("device") + ": missing; expected an object with "
                                    "peak_flops and memory_bandwidth");
  Reader d = r.child("device", device);
  if (ok) {
    const llvm::json::Object *peaks = d.object("peak_flops", ok);
    if (!peaks && ok)
      return fail(d.where("peak_flops") +
                  ": missing; expected an object of FLOP/s by precision "
                  "(fp32, tf32, bf16, ...)");
    Reader p = d.child("peak_flops", peaks);
    for (const auto &kv : peaks ? *peaks : llvm::json::Object()) {
      double f = 0;
      if (!p.number(kv.first, f, true, false)) {
        ok = false;
        d.error = p.error;
        break;
      }
      hw.peakFlops[kv.first.str()] = f;
    }
    if (ok && !hw.peakFlops.count("fp32"))
      return fail(p.where("fp32") + ": missing; the compiled steps compute "
                                    "in fp32");
    ok = ok && d.number("memory_bandwidth", hw.memoryBandwidth, true, false) &&
         d.number("loop_flops", hw.loopFlops, false, false) &&
         d.rates("transcendental_flops", hw.transcendentalFlops) &&
         d.number("op_overhead", hw.opOverhead, false, true) &&
         d.number("alloc_overhead", hw.allocOverhead, false, true) &&
         d.integer("threads", hw.deviceThreads) &&
         d.number("cache_bytes", hw.cacheBytes, false, true) &&
         d.number("memory_latency", hw.memoryLatency, false, true) &&
         d.number("cache_latency", hw.cacheLatency, false, true) &&
         d.number("attention_efficiency", hw.attentionEfficiency, false, false);
    if (ok && hw.attentionEfficiency > 1)
      return fail(d.where("attention_efficiency") +
                  ": above 1; expected the share of the 16-bit peak (0, 1]");
  }
  if (!hw.loopFlops)
    hw.loopFlops = hw.peakFlops.lookup("fp32");
  if (!hw.transcendentalFlops.count("default"))
    hw.transcendentalFlops["default"] = hw.loopFlops;

  if (ok)
    if (const llvm::json::Object *intra = r.object("intra_node", ok)) {
      Reader i = r.child("intra_node", intra);
      ok =
          i.number("bandwidth_per_direction", hw.intraBandwidth, true, false) &&
          i.number("latency", hw.intraLatency, true, true);
      r.error = i.error;
    }
  if (ok)
    if (const llvm::json::Object *inter = r.object("inter_node", ok)) {
      Reader i = r.child("inter_node", inter);
      ok = i.number("bandwidth_per_direction_per_device", hw.interBandwidth,
                    true, false) &&
           i.number("latency", hw.interLatency, true, true);
      r.error = i.error;
    }
  // collectives_<N>_ranks: measured alpha-beta at N ranks.
  for (const auto &kv : *root) {
    StringRef key = kv.first;
    if (!ok || !key.consume_front("collectives_") ||
        !key.consume_back("_ranks"))
      continue;
    int64_t n;
    if (key.getAsInteger(10, n) || n < 2) {
      r.fail(kv.first, "expected collectives_<N>_ranks with N >= 2");
      ok = false;
      break;
    }
    const llvm::json::Object *c = r.object(kv.first, ok);
    if (!c)
      break;
    Reader cr = r.child(kv.first, c);
    std::array<AlphaBeta, 3> abs;
    for (int kind = 0; kind < 3 && ok; ++kind) {
      const llvm::json::Object *o = cr.object(kCollectiveNames[kind], ok);
      if (!o && ok)
        ok = cr.fail(kCollectiveNames[kind], "missing; expected {alpha, beta}");
      if (!ok)
        break;
      Reader ab = cr.child(kCollectiveNames[kind], o);
      ok = ab.number("alpha", abs[kind].alpha, true, true) &&
           ab.number("beta", abs[kind].beta, true, false);
      cr.error = ab.error;
    }
    r.error = cr.error;
    hw.measured[n] = abs;
  }
  for (const std::string &e : {r.error, d.error})
    if (!e.empty())
      return fail(e);
  return hw;
}

StringRef HardwareModel::matmulPeakKey(Type elementType, StringRef f32Precision,
                                       bool gpu) const {
  StringRef key = elementType.isF64()           ? "fp64"
                  : gpu && elementType.isBF16() ? "bf16"
                  : gpu && elementType.isF16()  ? "fp16"
                                                : f32Precision;
  return peakFlops.count(key) ? key : f32Precision;
}

llvm::Error HardwareModel::check(int64_t worldSize, StringRef precision,
                                 bool gpu) const {
  if (gpu && deviceThreads <= 0)
    return llvm::createStringError(llvm::formatv(
        "{0} describes no GPU (device.threads: the threads it keeps "
        "resident), and the CUDA target's launches are costed by the "
        "threads they run on; pass a GPU description such as "
        "hardware/h100-8x-nvlink.json",
        name));
  if (!peakFlops.count(precision)) {
    std::string have;
    for (const auto &kv : peakFlops)
      have += (have.empty() ? "" : ", ") + kv.first().str();
    return llvm::createStringError(llvm::formatv(
        "{0} gives no peak_flops for {1}; it has {2}", name, precision, have));
  }
  if (worldSize > devicesPerNode * nodes)
    return llvm::createStringError(llvm::formatv(
        "--world-size={0} needs {0} devices but {1} describes {2} ({3} per "
        "node x {4} nodes)",
        worldSize, name, devicesPerNode * nodes, devicesPerNode, nodes));
  if (worldSize <= 1 || measured.count(worldSize))
    return llvm::Error::success();
  if (intraBandwidth <= 0)
    return llvm::createStringError(llvm::formatv(
        "{0} has no collective model for {1} ranks: add intra_node "
        "{{bandwidth_per_direction, latency} or collectives_{1}_ranks",
        name, worldSize));
  if (worldSize > devicesPerNode && interBandwidth <= 0)
    return llvm::createStringError(llvm::formatv(
        "--world-size={0} spans nodes but {1} has no inter_node link",
        worldSize, name));
  return llvm::Error::success();
}

double HardwareModel::collectiveSeconds(int kind, double totalBytes,
                                        int64_t n) const {
  if (n <= 1)
    return 0;
  bool allReduce = kind == int(CollectiveKind::all_reduce);
  // Bytes each rank sends by the ring algorithm (zero-run counts the same).
  double sent = (allReduce ? 2.0 : 1.0) * totalBytes * double(n - 1) / n;
  auto m = measured.find(n);
  if (m != measured.end()) {
    const AlphaBeta &ab = m->second[kind];
    return ab.alpha + sent / ab.beta;
  }
  // A ring across nodes runs at the slower link and pays its latency on
  // every step (NCCL builds one ring per NIC, so the per-device inter-node
  // bandwidth is what each ring gets).
  bool multiNode = n > devicesPerNode;
  double bw =
      multiNode ? std::min(intraBandwidth, interBandwidth) : intraBandwidth;
  double lat = multiNode ? interLatency : intraLatency;
  double ring = (allReduce ? 2.0 : 1.0) * (n - 1) * lat + sent / bw;
  if (!allReduce)
    return ring;
  // Double binary tree: log-depth latency, the buffer up and down once.
  double tree =
      2.0 * std::ceil(std::log2(double(n))) * lat + 2.0 * totalBytes / bw;
  return std::min(ring, tree);
}

//===----------------------------------------------------------------------===//
// Simulation
//===----------------------------------------------------------------------===//

/// Bytes of a statically shaped buffer or tensor (0 for other values).
static double valueBytes(Value v) {
  auto t = dyn_cast<ShapedType>(v.getType());
  return t && t.hasRank() ? double(zero::shapedBytes(t)) : 0;
}

namespace {
/// What an op does: its FLOPs, the seconds its arithmetic takes at the
/// device's full loop rate, and the bytes it moves; a GEMM's peak key.
struct Work {
  double flops = 0, seconds = 0, bytes = 0;
  StringRef matmulPeak = {};
  /// GPU: the loads one thread waits for one after another, from memory
  /// and from the cache.
  double rounds = 0, cacheRounds = 0;
  Work &operator+=(const Work &o) {
    flops += o.flops;
    seconds += o.seconds;
    bytes += o.bytes;
    rounds += o.rounds;
    cacheRounds += o.cacheRounds;
    return *this;
  }
  Work operator*(double n) const {
    return {flops * n,  seconds * n, bytes * n,
            matmulPeak, rounds * n,  cacheRounds * n};
  }
};

/// Op costs against a roofline; the same for buffers and tensors.
struct CostModel {
  const HardwareModel &hw;
  StringRef f32Precision;
  bool gpu;
  int64_t loadBatch = 1;

  /// The peak_flops key a GEMM over `elementType` operands runs at.
  StringRef peakKey(Type elementType) const {
    return hw.matmulPeakKey(elementType, f32Precision, gpu);
  }

  /// A GEMM of `flops` over `elementType` operands moving `bytes`.
  OpEstimate gemm(double flops, double bytes, Type elementType) const {
    StringRef key = peakKey(elementType);
    OpEstimate e = roofline(flops, bytes, hw.peakFlops.lookup(key));
    e.matmulPeak = key;
    return e;
  }

  OpEstimate roofline(double flops, double bytes, double peak) const {
    return bounded(
        flops, bytes,
        {{"compute", flops / peak}, {"memory", bytes / hw.memoryBandwidth}});
  }

  /// The op overhead plus the longest of `terms` (seconds by what they
  /// bound), that term's name as the bound; "launch" where the overhead
  /// is longer.
  OpEstimate
  bounded(double flops, double bytes,
          std::initializer_list<std::pair<StringRef, double>> terms) const {
    std::pair<StringRef, double> longest = {"launch", 0};
    for (const auto &term : terms)
      if (term.second > longest.second)
        longest = term;
    if (longest.second < hw.opOverhead)
      longest.first = "launch";
    OpEstimate e{flops, hw.opOverhead + longest.second};
    e.bytes = bytes;
    e.bound = longest.first;
    return e;
  }

  /// A GPU launch of `threads` threads (0: enough for the whole device).
  /// Arithmetic runs on the launch's share of the resident threads; memory
  /// requests go out per warp, so a lone thread still streams at a warp's
  /// share of the bandwidth. Each thread waits `w.rounds` memory latencies
  /// one after another, once per wave of resident threads.
  OpEstimate launch(const Work &w, double threads) const {
    double resident = double(hw.deviceThreads);
    double compute = 1, memory = 1, waves = 1;
    if (resident > 0 && threads > 0) {
      compute = std::min(1.0, threads / resident);
      memory = std::min(1.0, 32 * std::ceil(threads / 32) / resident);
      waves = std::max(1.0, threads / resident);
    }
    double cacheLatency =
        hw.cacheLatency > 0 ? hw.cacheLatency : hw.memoryLatency;
    double latency =
        (hw.memoryLatency * w.rounds + cacheLatency * w.cacheRounds) * waves;
    OpEstimate e = bounded(w.flops, w.bytes,
                           {{"compute", w.seconds / compute},
                            {"memory", w.bytes / (hw.memoryBandwidth * memory)},
                            {"latency", latency}});
    e.threads = threads > 0 ? threads : resident;
    return e;
  }

  /// The loads a GPU thread of `op` waits for one after another on a
  /// launch of `threads` threads, as the `rounds` (from memory) and
  /// `cacheRounds` of a Work to add to the op's: its share of the iterations in
  /// batches of `loadBatch` (one at a time where an input may be what it
  /// writes, as zero-gpu-batch-loads leaves them), each batch one round for its
  /// loads, one more for guarded reads after their masks (a select's side)
  /// and for an element at a loaded index; none for an op that reads no
  /// memory. A round is the cache's when every buffer it reads is: one
  /// `cached` says is (a row group's second read), or one read more often
  /// than it has elements that fits the cache (a mask, a broadcast bias,
  /// a reduction's accumulator).
  Work rounds(linalg::LinalgOp op, double threads,
              llvm::function_ref<bool(OpOperand *)> cached = nullptr) const {
    Work w;
    if (!gpu || hw.memoryLatency <= 0)
      return w;
    double iterations = 1;
    for (int64_t r : op.getStaticLoopRanges())
      iterations *= ShapedType::isDynamic(r) ? 1 : r;
    auto fromCache = [&](OpOperand *o) {
      return (cached && cached(o)) || readFromCache(o->get(), iterations);
    };
    // Plain reads and guarded ones: whether any, whether any from memory.
    bool any[2] = {false, false}, memory[2] = {false, false};
    double batch = double(loadBatch);
    for (OpOperand &o : op->getOpOperands()) {
      if (!isa<ShapedType>(o.get().getType()) ||
          (op.isDpsInit(&o) && !op.payloadUsesValueFromOperand(&o)))
        continue;
      bool guarded = !op.isDpsInit(&o) && readShare(op, &o) < 1;
      any[guarded] = true;
      memory[guarded] |= !fromCache(&o);
      if (!op.isDpsInit(&o) && isa<MemRefType>(o.get().getType()))
        for (OpOperand &init : op.getDpsInitsMutable())
          if (mayOverlap(o.get(), init.get()))
            batch = 1;
    }
    for (int i : {0, 1})
      if (any[i])
        (memory[i] ? w.rounds : w.cacheRounds) += 1;
    if (op->getRegion(0)
            .walk([](Operation *inner) {
              return isa<memref::LoadOp, tensor::ExtractOp>(inner)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted())
      w.rounds += 1;
    double perThread = threads > 0 ? std::max(1.0, iterations / threads) : 1;
    double batches = std::ceil(perThread / batch);
    w.rounds *= batches;
    w.cacheRounds *= batches;
    return w;
  }

  /// Whether a GPU's cache serves `buffer` when it is read `reads` times:
  /// more often than it has elements, and it fits.
  bool readFromCache(Value buffer, double reads) const {
    auto t = dyn_cast<ShapedType>(buffer.getType());
    return t && t.hasStaticShape() && double(t.getNumElements()) < reads &&
           valueBytes(buffer) <= hw.cacheBytes;
  }

  /// Seconds of one scalar op in a loop body: an instruction, or a math
  /// function's evaluation; 0 for what is not arithmetic.
  double scalarSeconds(Operation &inner, double &flops) const {
    // Square roots and rounding are instructions; exp, tanh, log, erf...
    // are library calls or long expansions.
    if (isa<math::SqrtOp, math::RsqrtOp, math::AbsFOp, math::FmaOp,
            math::CopySignOp, math::FloorOp, math::CeilOp, math::RoundOp,
            math::TruncOp>(inner) ||
        (isa<arith::ArithDialect>(inner.getDialect()) &&
         !isa<arith::ConstantOp, arith::IndexCastOp>(inner))) {
      flops += 1;
      return 1 / hw.loopFlops;
    }
    if (isa<math::MathDialect>(inner.getDialect())) {
      flops += 1;
      return mathSeconds(inner.getName().stripDialect());
    }
    return 0;
  }

  /// A GEMM over `op`'s operands (A, B, C): a multiply-add per iteration
  /// at A's peak, each operand moved once.
  Work gemmWork(Operation *op, ArrayRef<int64_t> ranges) const {
    double iterations = 1, bytes = 0;
    for (int64_t size : ranges)
      iterations *= size;
    for (Value v : op->getOperands())
      bytes += valueBytes(v);
    StringRef key = peakKey(getElementTypeOrSelf(op->getOperand(0).getType()));
    return {2 * iterations, 2 * iterations / hw.peakFlops.lookup(key), bytes,
            key};
  }

  Work linalgWork(linalg::LinalgOp op) const {
    if (getGemmLoops(op))
      return gemmWork(op, op.getStaticLoopRanges());
    double iterations = 1;
    for (int64_t r : op.getStaticLoopRanges())
      iterations *= ShapedType::isDynamic(r) ? 1 : r;
    double flops = 0, seconds = 0;
    for (Operation &inner : op->getRegion(0).front())
      seconds += scalarSeconds(inner, flops);
    double bytes = 0;
    for (OpOperand *in : op.getDpsInputOperands())
      bytes += valueBytes(in->get()) * readShare(op, in);
    for (OpOperand &init : op.getDpsInitsMutable())
      bytes += valueBytes(init.get()) *
               (op.payloadUsesValueFromOperand(&init) ? 2 : 1);
    return {iterations * flops, iterations * seconds, bytes};
  }

  /// The share of `in` a launch of `op` reads: a GPU thread loads what
  /// one side of a select needs under its condition (a causal mask's upper
  /// triangle of scores is not read).
  double readShare(linalg::LinalgOp op, OpOperand *in) const {
    return gpu ? guardedReadShare(op, in) : 1;
  }

  /// The work of `op` run by one thread: a loop by its trip count, a
  /// conditional by its first region.
  Work serialWork(Operation &op) const {
    Work w;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      return linalgWork(linalgOp);
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      return {0, 0, 2 * valueBytes(copy.getSource())};
    if (isa<memref::LoadOp, memref::StoreOp>(op)) {
      auto t = cast<MemRefType>(
          (isa<memref::LoadOp>(op) ? op.getOperand(0) : op.getOperand(1))
              .getType());
      return {0, 0,
              double(zero::shapedBytes(
                  RankedTensorType::get({}, t.getElementType())))};
    }
    if (op.getNumRegions()) {
      Region &body = op.getRegion(0);
      if (!body.empty())
        for (Operation &inner : body.front())
          w += serialWork(inner);
      if (auto loop = dyn_cast<scf::ForOp>(op))
        w = w * double(tripCount(loop));
      return w;
    }
    w.seconds = scalarSeconds(op, w.flops);
    return w;
  }

  static int64_t tripCount(scf::ForOp loop) {
    auto lb = getConstantIntValue(loop.getLowerBound());
    auto ub = getConstantIntValue(loop.getUpperBound());
    auto step = getConstantIntValue(loop.getStep());
    return lb && ub && step && *step > 0
               ? std::max<int64_t>(0, (*ub - *lb + *step - 1) / *step)
               : 1;
  }

  /// A linalg op: a GEMM at its type's peak, else its loop body's cost,
  /// against the bytes it moves.
  OpEstimate estimate(const Work &w) const {
    OpEstimate e = bounded(
        w.flops, w.bytes,
        {{"compute", w.seconds}, {"memory", w.bytes / hw.memoryBandwidth}});
    e.matmulPeak = w.matmulPeak;
    return e;
  }
  OpEstimate linalg(linalg::LinalgOp op) const {
    return estimate(linalgWork(op));
  }
  /// zero.attention (two products of [Tq, Tk, D] a pair) or its gradient
  /// (seven: the probabilities and their gradients are computed on the
  /// key side and the query side): the products at the share of the
  /// 16-bit peak the hardware gives, where causal only the key blocks up
  /// to each query block's diagonal, plus an exponential per score
  /// computed (and a dropout's draw); each operand moved once (a pair's K and
  /// V, read again per query block, come from the cache).
  OpEstimate attention(Operation *op) const {
    auto q = cast<ShapedType>(op->getOperand(0).getType());
    auto k = cast<ShapedType>(op->getOperand(1).getType());
    bool forward = isa<AttentionOp>(op);
    int64_t at = attentionRowsDim(op);
    double rows = double(q.getDimSize(at)), keys = double(k.getDimSize(at)),
           depth = double(q.getShape().back());
    double pairs = double(q.getNumElements()) / (rows * depth);
    double seen = 1;
    if (isCausalAttention(op)) {
      double blocks = std::ceil(rows / 64);
      seen = (blocks + 1) / (2 * blocks);
    }
    double scores = pairs * rows * keys * seen;
    double flops = (forward ? 2 : 7) * 2 * scores * depth;
    double exps = (forward ? 1 : 2) * scores;
    // A dropout draws each score's flag on every side that computes it.
    double draws = attentionDropout(op) ? exps : 0;
    double bytes = 0;
    for (Value v : op->getOperands())
      bytes += valueBytes(v);
    StringRef key = peakKey(q.getElementType());
    double peak = hw.peakFlops.lookup(key) * hw.attentionEfficiency;
    OpEstimate e =
        bounded(flops, bytes,
                {{"compute", flops / peak + exps * mathSeconds("exp") +
                                 draws * kPhiloxDrawOps / hw.loopFlops},
                 {"memory", bytes / hw.memoryBandwidth}});
    e.matmulPeak = key;
    e.threads = pairs * std::ceil((forward ? rows : rows + keys) / 64) * 128;
    return e;
  }
  OpEstimate roundedMatmul(RoundedMatmulOp op) const {
    Work w = gemmWork(op, op.getStaticLoopRanges());
    // C is read as well as written.
    if (op.getAccumulate())
      w.bytes += valueBytes(op.getInit());
    return estimate(w);
  }

  /// Seconds of one evaluation of a math function.
  double mathSeconds(StringRef fn) const {
    double rate = hw.transcendentalFlops.lookup(fn);
    return 1 / (rate ? rate : hw.transcendentalFlops.lookup("default"));
  }
};

} // namespace

OpEstimate mlir::zero::estimateOp(Operation *op, const HardwareModel &hw,
                                  StringRef precision, bool gpu) {
  CostModel cost{hw, precision, gpu};
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return cost.linalg(linalgOp);
  if (auto mm = dyn_cast<RoundedMatmulOp>(op))
    return cost.roundedMatmul(mm);
  if (isa<AttentionOp, AttentionGradOp>(op))
    return cost.attention(op);
  // Reshapes and slices move no data once bufferized.
  if (isa<ViewLikeOpInterface>(op) || isReshape(op) || op->getNumResults() == 0)
    return {};
  double bytes = 0, elements = 0;
  for (Value v : op->getOperands())
    bytes += valueBytes(v);
  for (Value v : op->getResults()) {
    bytes += valueBytes(v);
    if (auto t = dyn_cast<RankedTensorType>(v.getType());
        t && t.hasStaticShape())
      elements += double(t.getNumElements());
  }
  auto shape = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  if (auto mm = dyn_cast<tosa::MatMulOp>(op)) {
    // [N, H, C] x [N, C, W]: 2NHWC.
    return cost.gemm(2 * elements * double(shape(mm.getA())[2]), bytes,
                     getElementTypeOrSelf(mm.getA()));
  }
  if (auto conv = dyn_cast<tosa::Conv2DOp>(op)) {
    // Each output element: a dot product over [KH, KW, C_in].
    ArrayRef<int64_t> w = shape(conv.getWeight());
    return cost.gemm(2 * elements * double(w[1] * w[2] * w[3]), bytes,
                     getElementTypeOrSelf(conv.getInput()));
  }
  // Elementwise: one evaluation per result element, a library call for
  // the math functions.
  if (isa<tosa::ExpOp, tosa::TanhOp, tosa::ErfOp, tosa::SigmoidOp, tosa::LogOp,
          tosa::PowOp, tosa::ReciprocalOp, tosa::RsqrtOp>(op)) {
    StringRef fn = op->getName().stripDialect();
    double seconds = elements * cost.mathSeconds(fn);
    return cost.bounded(
        elements, bytes,
        {{"compute", seconds}, {"memory", bytes / hw.memoryBandwidth}});
  }
  return cost.roofline(elements, bytes, hw.loopFlops);
}

namespace {
class Simulator {
public:
  Simulator(const HardwareModel &hw, const SimulateOptions &opt, Timeline &tl)
      : hw(hw), opt(opt),
        tl(tl), cost{hw, opt.precision, opt.gpu, opt.loadBatch} {}

  void run(Block &block, SymbolTableCollection &symbols, unsigned depth) {
    for (Operation &op : block)
      visit(&op, symbols, depth);
  }

  void finish() {
    // The step ends when its compute ends; collectives still in flight
    // were waited for inside it.
    tl.stepSeconds = std::max(tc, 0.0);
  }

private:
  const HardwareModel &hw;
  const SimulateOptions &opt;
  Timeline &tl;
  CostModel cost;
  double tc = 0, tq = 0; ///< compute and communication clocks
  DenseMap<Value, double> pending;

  /// `op` on the compute stream; `counted` false for work that runs in
  /// another op's launch.
  /// `share`: for a launch group, the fraction of its time and the FLOPs
  /// that recompute, and how many of its ops do (else from `op`'s location).
  struct RecomputeShare {
    double fraction = 0, flops = 0;
    int64_t ops = 0;
  };
  void compute(Operation *op, OpEstimate c, bool counted = true,
               std::optional<RecomputeShare> share = std::nullopt) {
    if (c.seconds <= 0)
      return;
    tl.computeSeconds += c.seconds;
    tl.flops += c.flops;
    if (counted)
      ++tl.computeOps;
    if (!c.matmulPeak.empty())
      tl.matmulFlops[c.matmulPeak.str()] += c.flops;
    bool recompute = isRecomputeLoc(op->getLoc());
    if (share) {
      tl.recomputeSeconds += share->fraction * c.seconds;
      tl.recomputeFlops += share->flops;
      tl.recomputeOps += share->ops;
    } else if (recompute) {
      tl.recomputeSeconds += c.seconds;
      tl.recomputeFlops += c.flops;
      if (counted)
        ++tl.recomputeOps;
    }
    if (opt.recordEvents) {
      StringRef name = nodeName(op->getLoc());
      std::string label =
          name.empty() ? op->getName().getStringRef().str() : name.str();
      if (recompute)
        label = "recompute " + label;
      // Consecutive ops of one node form one slice, its library GEMMs one
      // and its generated kernels another, as a measured trace tells them.
      std::string kind = c.matmulPeak.empty() ? "kernel" : "gemm";
      Timeline::Event *last = tl.events.empty() ? nullptr : &tl.events.back();
      if (!last || last->category != "compute" || last->name != label ||
          last->kind != kind ||
          std::abs(last->start + last->duration - tc) >= 1e-15) {
        tl.events.push_back({label, "compute", tc, 0, 0, -1, name.str(), kind});
        last = &tl.events.back();
      }
      last->duration += c.seconds;
      ++last->ops;
      last->flops += c.flops;
      last->bytesMoved += c.bytes;
      if (c.seconds > last->longest) {
        last->longest = c.seconds;
        last->bound = c.bound.str();
        last->threads = c.threads;
      }
    }
    if (!c.bound.empty())
      tl.boundSeconds[c.bound.str()] += c.seconds;
    tc += c.seconds;
  }

  /// A collective started by `op`; `sync` when it completes where it
  /// starts (a collective not split into start and wait).
  void commStart(CollectiveOpInterface op, bool sync) {
    bool overlap = opt.overlap && !sync;
    int kind = int(op.getCollectiveKind());
    int64_t n = opt.worldSize;
    double seconds = hw.collectiveSeconds(kind, op.getTotalBytes(), n);
    int64_t sent = n > 1 ? op.getRingBytesSent() : 0;
    double start = overlap ? std::max(tc, tq) : tc;
    double end = start + seconds;
    tl.commSeconds += seconds;
    tl.bytesSent += sent;
    int64_t id = tl.collectives++;
    if (opt.recordEvents)
      tl.events.push_back(
          {kCollectiveNames[kind], "communication", start, seconds, sent, id});
    if (overlap) {
      tq = end;
      pending[op->getResult(0)] = end;
      return;
    }
    // Synchronous: compute stands still for the whole collective.
    if (opt.recordEvents && seconds > 0)
      tl.events.push_back({"wait", "wait", tc, end - tc, sent, id});
    tl.exposedSeconds += end - tc;
    tc = end;
  }

  void commWait(WaitOp wait) {
    auto it = pending.find(wait.getRequest());
    if (it == pending.end())
      return;
    double end = it->second;
    pending.erase(it);
    if (end <= tc)
      return;
    if (opt.recordEvents)
      tl.events.push_back({"wait", "wait", tc, end - tc});
    tl.exposedSeconds += end - tc;
    tc = end;
  }

  /// One thread per parallel iteration (0 when one is dynamic: the whole
  /// device).
  static double parallelIterations(linalg::LinalgOp op) {
    double threads = 1;
    for (auto [extent, it] :
         llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray())) {
      if (it != utils::IteratorType::parallel)
        continue;
      if (ShapedType::isDynamic(extent))
        return 0;
      threads *= double(extent);
    }
    return threads;
  }

  /// Bytes a copy or bucket copy moves, and its elements (0 when not
  /// static: the whole device).
  static std::pair<double, double> copyWork(Operation *op) {
    Value from = op->getOperand(isa<BucketUnpackOp>(op) ? 1 : 0);
    auto t = cast<ShapedType>(from.getType());
    double elements = t.hasStaticShape() ? double(t.getNumElements()) : 0;
    return {2 * valueBytes(from), elements};
  }

  /// A GPU's view of `op` (SimulateOptions::gpu): true when it was one
  /// launch, or an allocation in the preplanned block.
  bool visitLaunch(Operation *op) {
    if (isa<memref::AllocOp>(op)) {
      ++tl.allocations;
      return true;
    }
    if (!isKernelRoot(op) && !isa<BucketPackOp, BucketUnpackOp>(op))
      return false;
    // A launch group is one launch: its ops' work on all their threads,
    // and no sooner done than its slowest op alone.
    // Its recomputing ops' share of the time is theirs alone over all.
    if (auto group = dyn_cast<LaunchGroupOp>(op)) {
      Work work, pending;
      double threads = 0, alone = 0, recomputeAlone = 0;
      OpEstimate slowest;
      RecomputeShare share;
      for (Operation &inner : group.getBody().front()) {
        double n;
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(inner)) {
          pending += cost.linalgWork(linalgOp);
          if (fusedInitializationRoot(&inner, valuesMayOverlap))
            continue;
          n = opt.launchThreads ? opt.launchThreads(&inner)
                                : parallelIterations(linalgOp);
          pending += cost.rounds(linalgOp, n);
        } else {
          // A copy: a thread per element, as alone.
          auto [bytes, elements] = copyWork(&inner);
          pending += Work{0, 0, bytes, {}, 1};
          n = elements;
        }
        OpEstimate single = cost.launch(pending, n);
        double seconds = single.seconds;
        if (seconds > slowest.seconds)
          slowest = single;
        alone += seconds;
        if (isRecomputeLoc(inner.getLoc())) {
          recomputeAlone += seconds;
          share.flops += pending.flops;
          ++share.ops;
        }
        work += pending;
        pending = Work();
        threads += n;
      }
      // Each op's threads wait for their own loads: in its time alone.
      work.rounds = work.cacheRounds = 0;
      OpEstimate e = cost.launch(work, threads);
      if (slowest.seconds > e.seconds) {
        e.seconds = slowest.seconds;
        e.bound = slowest.bound;
      }
      share.fraction = alone > 0 ? recomputeAlone / alone : 0;
      compute(op, e, /*counted=*/true, share);
      return true;
    }
    // A row group is one launch of all its ops' work that moves each
    // buffer once: read where the group reads it before writing it, and
    // written. What one op wrote or read, a later op reads from the cache
    // while the rows in flight (the device's resident threads' share of
    // the launch) touch no more than it holds; beyond, that share of the
    // reads goes to memory again.
    if (auto group = dyn_cast<RowGroupOp>(op)) {
      Work work;
      double again = 0;
      // A buffer: its root and its bytes (views of one buffer's whole).
      using Key = std::pair<Value, double>;
      SmallVector<Key> written;
      // The share of each buffer read so far (guarded reads read part).
      SmallVector<std::pair<Key, double>> read;
      auto first = [](SmallVectorImpl<Key> &seen, Key key) {
        if (llvm::is_contained(seen, key))
          return false;
        seen.push_back(key);
        return true;
      };
      // Without the target's mapping: a thread a row.
      double threads = opt.launchThreads ? opt.launchThreads(op)
                                         : double(group.getNumRows());
      DenseSet<OpOperand *> readAgain;
      for (Operation &inner : group.getBody().front()) {
        auto linalgOp = cast<linalg::LinalgOp>(inner);
        Work w = cost.linalgWork(linalgOp);
        // A member running part of its iterations (its last loop's, by
        // row) reads and writes that part of what that loop indexes.
        double part = 1;
        if (opt.rowGroupShare)
          part = opt.rowGroupShare(&inner);
        else if (std::optional<WrittenRegion> r = writtenRegionOf(&inner))
          part = r->share();
        unsigned lastLoop = linalgOp.getNumLoops() - 1;
        work.flops += w.flops * part;
        work.seconds += w.seconds * part;
        for (OpOperand &operand : linalgOp->getOpOperands()) {
          Value v = operand.get();
          if (!isa<MemRefType>(v.getType()))
            continue;
          bool init = linalgOp.isDpsInit(&operand);
          bool reads = !init || linalgOp.payloadUsesValueFromOperand(&operand);
          Key key{rootBuffer(v), valueBytes(v)};
          AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
          double within = map.isFunctionOfDim(lastLoop) ? part : 1;
          if (reads) {
            double share = std::min(cost.readShare(linalgOp, &operand), within);
            if (llvm::is_contained(written, key)) {
              again += share * key.second;
              readAgain.insert(&operand);
            } else {
              auto *seen = llvm::find_if(
                  read, [&](const auto &entry) { return entry.first == key; });
              double before = 0;
              if (seen == read.end())
                read.push_back({key, share});
              else
                before =
                    std::exchange(seen->second, std::max(seen->second, share));
              // What no earlier op read comes from memory.
              work.bytes += std::max(0.0, share - before) * key.second;
              again += std::min(share, before) * key.second;
              if (before >= share)
                readAgain.insert(&operand);
            }
          }
          if (init && first(written, key))
            work.bytes += key.second * within;
        }
      }
      double inFlight = hw.deviceThreads > 0 && threads > 0
                            ? std::min(1.0, double(hw.deviceThreads) / threads)
                            : 1;
      double touched = work.bytes * inFlight;
      double hit = touched <= hw.cacheBytes ? 1 : hw.cacheBytes / touched;
      work.bytes += (1 - hit) * again;
      // Each phase's loads after the last phase's; a second read from the
      // cache while most of it hits.
      for (Operation &inner : group.getBody().front()) {
        work += cost.rounds(
            cast<linalg::LinalgOp>(inner), threads,
            [&](OpOperand *o) { return hit > 0.5 && readAgain.contains(o); });
      }
      compute(op, cost.launch(work, threads));
      return true;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      // GEMMs are cuBLAS calls.
      if (getGemmLoops(linalgOp)) {
        compute(op, cost.linalg(linalgOp));
        return true;
      }
      // A fill the next op's threads run is no launch of its own.
      Operation *root = fusedInitializationRoot(op, valuesMayOverlap);
      auto launched = root ? cast<linalg::LinalgOp>(root) : linalgOp;
      double threads = opt.launchThreads ? opt.launchThreads(launched)
                                         : parallelIterations(launched);
      Work work = cost.linalgWork(linalgOp);
      work += cost.rounds(linalgOp, threads);
      OpEstimate e = cost.launch(work, threads);
      if (root)
        e.seconds -= hw.opOverhead;
      else if (threads == 1)
        ++tl.serialLaunches;
      compute(op, e, /*counted=*/!root);
      return true;
    }
    // Copies and bucket packing: one thread per element.
    if (isa<memref::CopyOp, BucketPackOp, BucketUnpackOp>(op)) {
      auto [bytes, elements] = copyWork(op);
      compute(op, cost.launch({0, 0, bytes, {}, 1}, elements));
      return true;
    }
    // A loop or conditional of pure compute: one thread runs all of it,
    // unless the target spreads the loop's elements over a grid.
    double threads = opt.launchThreads ? opt.launchThreads(op) : 1;
    if (threads == 1)
      ++tl.serialLaunches;
    Work work = cost.serialWork(*op);
    if (auto loop = dyn_cast<scf::ForOp>(op))
      work += loopRounds(loop, threads);
    compute(op, cost.launch(work, threads));
    return true;
  }

  /// The loads a thread of a loop kernel on `threads` threads waits for
  /// one after another. Every thread runs every iteration: the body's own
  /// loads (a token's id) are a round each, in batches of the load batch
  /// where nothing in the body writes their buffer, from the cache where
  /// the threads read it more often than it has elements; each op of the
  /// body adds its rounds in the iterations whose row lies in the thread's
  /// part of the rows (the launch's threads over the op's: a scatter split
  /// into parts), one iteration after another, as each may update what the
  /// last one wrote.
  Work loopRounds(scf::ForOp loop, double threads) const {
    Work w;
    if (!opt.gpu || hw.memoryLatency <= 0)
      return w;
    double trips = double(CostModel::tripCount(loop));
    SmallVector<linalg::LinalgOp> ops;
    SmallVector<Value> written;
    for (Operation &inner : loop.getBody()->without_terminator()) {
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(inner)) {
        ops.push_back(linalgOp);
        llvm::append_range(written, linalgOp.getDpsInits());
      } else if (auto copy = dyn_cast<memref::CopyOp>(inner)) {
        written.push_back(copy.getTarget());
      } else if (auto store = dyn_cast<memref::StoreOp>(inner)) {
        written.push_back(store.getMemRef());
      }
    }
    bool loads = false, memory = false, batched = true;
    for (Operation &inner : loop.getBody()->without_terminator()) {
      auto load = dyn_cast<memref::LoadOp>(inner);
      if (!load)
        continue;
      loads = true;
      Value from = load.getMemRef();
      batched &= llvm::none_of(written,
                               [&](Value to) { return mayOverlap(from, to); });
      memory |= !cost.readFromCache(from, trips * threads);
    }
    if (loads) {
      double rounds =
          batched ? std::ceil(trips / double(opt.loadBatch)) : trips;
      (memory ? w.rounds : w.cacheRounds) += rounds;
    }
    for (linalg::LinalgOp body : ops) {
      double opThreads = opt.launchThreads ? opt.launchThreads(body)
                                           : parallelIterations(body);
      opThreads = opThreads > 0 ? std::min(threads, opThreads) : threads;
      double parts = opThreads > 0 ? std::max(1.0, threads / opThreads) : 1;
      w += cost.rounds(body, opThreads) * std::ceil(trips / parts);
    }
    return w;
  }

  void visit(Operation *op, SymbolTableCollection &symbols, unsigned depth) {
    // Started collectives run on the communication stream; a synchronous
    // one is a start and its wait.
    if (auto coll = dyn_cast<CollectiveOpInterface>(op))
      return commStart(coll, /*sync=*/op->getNumResults() != 1 ||
                                 !isa<RequestType>(op->getResult(0).getType()));
    if (auto wait = dyn_cast<WaitOp>(op))
      return commWait(wait);
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto fn = symbols.lookupNearestSymbolFrom<func::FuncOp>(
          op, call.getCalleeAttr());
      if (fn && !fn.isExternal() && depth < 8)
        run(fn.getBody().front(), symbols, depth + 1);
      return;
    }
    // BLAS writes C without reading it instead (beta = 0).
    if (auto fill = dyn_cast<linalg::FillOp>(op); fill && isGemmZeroFill(fill))
      return;
    // A library GEMM on every target.
    if (auto mm = dyn_cast<RoundedMatmulOp>(op))
      return compute(op, cost.roundedMatmul(mm));
    // A target's fused attention kernel.
    if (isa<AttentionOp, AttentionGradOp>(op))
      return compute(op, cost.attention(op));
    if (opt.gpu && visitLaunch(op))
      return;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      return compute(op, cost.linalg(linalgOp));
    // Packing into and out of a bucket is a copy.
    if (isa<BucketPackOp, BucketUnpackOp>(op))
      return compute(op, cost.roofline(0,
                                       2 * valueBytes(op->getOperand(
                                               isa<BucketPackOp>(op) ? 0 : 1)),
                                       hw.loopFlops));
    // An allocation costs a call into the allocator.
    if (isa<memref::AllocOp>(op)) {
      ++tl.allocations;
      tl.computeSeconds += hw.allocOverhead;
      tc += hw.allocOverhead;
      return;
    }
    if (auto copy = dyn_cast<memref::CopyOp>(op))
      return compute(
          op, cost.roofline(0, 2 * valueBytes(copy.getSource()), hw.loopFlops));
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      int64_t trips = CostModel::tripCount(loop);
      for (int64_t i = 0; i < trips; ++i)
        run(*loop.getBody(), symbols, depth);
      return;
    }
    // Other control flow: its first region once (the verifier keeps
    // collectives out of rank-dependent branches).
    if (op->getNumRegions() && !op->getRegion(0).empty() &&
        !isa<linalg::LinalgOp>(op))
      run(op->getRegion(0).front(), symbols, depth);
  }
};

Timeline simulateOnce(func::FuncOp fn, const HardwareModel &hw,
                      const SimulateOptions &opt) {
  Timeline tl;
  SymbolTableCollection symbols;
  Simulator sim(hw, opt, tl);
  sim.run(fn.getBody().front(), symbols, 0);
  sim.finish();
  return tl;
}
} // namespace

Timeline mlir::zero::simulateStep(func::FuncOp fn, const HardwareModel &hw,
                                  const SimulateOptions &options) {
  Timeline tl = simulateOnce(fn, hw, options);
  SimulateOptions sync = options;
  sync.overlap = false;
  sync.recordEvents = false;
  tl.noOverlapSeconds =
      options.overlap ? simulateOnce(fn, hw, sync).stepSeconds : tl.stepSeconds;
  tl.lowerBoundSeconds = std::max(tl.computeSeconds, tl.commSeconds);
  // MFU against the peak of the type most GEMM FLOPs ran at.
  tl.mfuPeak = options.precision;
  double most = 0;
  for (const auto &[key, flops] : tl.matmulFlops)
    if (flops > most)
      most = flops, tl.mfuPeak = key;
  double peak = hw.peakFlops.lookup(tl.mfuPeak);
  tl.mfu =
      tl.stepSeconds > 0 && peak > 0 ? tl.flops / (tl.stepSeconds * peak) : 0;
  return tl;
}
