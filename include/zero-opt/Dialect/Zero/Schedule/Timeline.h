//===- Timeline.h - cost model and step simulator ---------------*- C++ -*-===//
//
// Predicts a step's timeline from its scheduled buffer-level IR (zero
// start/wait ops, linalg, memref): each compute op costs its FLOPs and
// bytes against a roofline, each collective an alpha-beta time on a
// communication stream that runs alongside compute, as the CPU runtime's
// communication thread (or a NCCL stream) does. No target is assumed.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_SCHEDULE_TIMELINE_H
#define ZERO_OPT_DIALECT_ZERO_SCHEDULE_TIMELINE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace llvm::json {
class Value;
} // namespace llvm::json

namespace mlir {
class Builder;
class DictionaryAttr;
class Operation;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace mlir::zero {

/// A machine from a hardware description (hardware/*.json).
struct HardwareModel {
  std::string name;
  int64_t devicesPerNode = 1, nodes = 1;
  llvm::StringMap<double> peakFlops; ///< by precision: fp32, tf32, bf16...
  double memoryBandwidth = 0;        ///< bytes/s per device
  /// FLOP/s of elementwise and reduction loops (default: peak fp32).
  double loopFlops = 0;
  /// Evaluations per second of exp, tanh, erf, log... in those loops, by
  /// math op name, with "default" for the others (default: loopFlops).
  llvm::StringMap<double> transcendentalFlops;
  /// Seconds each compute op costs beyond its roofline time (a kernel
  /// launch, a call), and each buffer allocation (default 0: a caching
  /// allocator).
  double opOverhead = 0, allocOverhead = 0;
  /// A GPU: the threads it keeps resident at once (SMs x threads per SM;
  /// 0 for a CPU). A launch of fewer threads gets their share of the
  /// loop FLOP rate, and of the bandwidth by warps of 32.
  int64_t deviceThreads = 0;
  /// A GPU's last-level (L2) cache in bytes: what a row group reads again
  /// hits it while the rows in flight touch no more (0: no reuse).
  double cacheBytes = 0;
  /// A GPU's memory latency under load, in seconds: a thread that waits
  /// for each load before it issues the next takes this long per load, so
  /// a launch whose threads hold too few loads in flight runs below the
  /// bandwidth (0: not modelled).
  double memoryLatency = 0;
  /// The same for a load the L2 cache serves (default: memoryLatency).
  double cacheLatency = 0;
  /// The share of the 16-bit matmul peak that the fused attention kernels'
  /// tensor-core products reach (zero.attention, zero.attention_grad).
  double attentionEfficiency = kAttentionEfficiency;
  /// Its default until a GPU measures it: FlashAttention-2 reaches
  /// 35-73% of an A100's peak with shared-memory tiles, which these
  /// kernels do not stage yet.
  static constexpr double kAttentionEfficiency = 0.3;
  /// Links: per device and direction.
  double intraBandwidth = 0, intraLatency = 0;
  double interBandwidth = 0, interLatency = 0;
  /// Measured alpha (s) and beta (bytes sent per second) of each collective
  /// kind (indexed by CollectiveKind), by world size; used when present.
  struct AlphaBeta {
    double alpha = 0, beta = 0;
  };
  std::map<int64_t, std::array<AlphaBeta, 3>> measured;

  /// Reads and checks a description; errors name the file and the key.
  static llvm::Expected<HardwareModel> load(StringRef path);
  static llvm::Expected<HardwareModel> fromJSON(const llvm::json::Value &v,
                                                StringRef path);

  /// An error when the machine cannot run `worldSize` ranks or lacks the
  /// precision, or is no GPU where `gpu` asks for one.
  llvm::Error check(int64_t worldSize, StringRef precision,
                    bool gpu = false) const;
  /// The peak_flops key a GEMM over `elementType` operands runs at: fp64
  /// for f64; bf16 and fp16 on a GPU's tensor cores, `f32Precision` on a
  /// CPU, whose runtime widens them to f32; `f32Precision` (fp32, or tf32
  /// where TF32 is allowed) for f32. A key the description lacks falls
  /// back to `f32Precision`.
  StringRef matmulPeakKey(Type elementType, StringRef f32Precision,
                          bool gpu) const;
  /// Seconds of a collective of `kind` over `worldSize` ranks on a buffer
  /// of `totalBytes` (the whole, unsharded tensor): ring or tree,
  /// whichever is faster, unless measured figures exist.
  double collectiveSeconds(int kind, double totalBytes,
                           int64_t worldSize) const;
};

/// What the simulator predicts for one step of one rank.
struct Timeline {
  struct Event {
    std::string name, category;     ///< category: compute, wait, communication
    double start = 0, duration = 0; ///< seconds from the step's start
    int64_t bytes = 0;              ///< collectives: bytes this rank sends
    int64_t id = -1;                ///< collectives: sequence number
    std::string node = {};          ///< compute: the model's node, if named
    std::string kind = {};          ///< compute: "gemm" or "kernel"
    /// Compute: the ops the slice joins, their FLOPs and bytes moved; the
    /// bound and threads of the longest (OpEstimate).
    int64_t ops = 0;
    double flops = 0, bytesMoved = 0, threads = 0, longest = 0;
    std::string bound = {};
  };
  std::vector<Event> events;
  double stepSeconds = 0;
  double computeSeconds = 0; ///< sum of compute op times
  double commSeconds = 0;    ///< sum of collective times
  double exposedSeconds = 0; ///< compute stream waiting on collectives
  double flops = 0;          ///< FLOPs of the step's compute ops
  /// The part of the compute that recomputes activations in the backward
  /// (ops whose location carries the recomputation mark; a copy fused
  /// into a backward op's loop counts as that op).
  double recomputeSeconds = 0, recomputeFlops = 0;
  int64_t recomputeOps = 0;
  int64_t computeOps = 0, allocations = 0, collectives = 0, bytesSent = 0;
  /// Compute seconds by what bounds each op (OpEstimate::bound).
  std::map<std::string, double> boundSeconds;
  /// GPU: launches of a single thread (loops of pure compute).
  int64_t serialLaunches = 0;
  /// The step time with every collective completing where it starts, and
  /// the bound max(compute, communication) no schedule can beat.
  double noOverlapSeconds = 0, lowerBoundSeconds = 0;
  /// GEMM FLOPs by the peak_flops key they ran at.
  std::map<std::string, double> matmulFlops;
  /// flops / (step time x the peak of `mfuPeak`, the key most GEMM FLOPs
  /// ran at: the precision the model trains in).
  double mfu = 0;
  std::string mfuPeak;
};

struct SimulateOptions {
  int64_t worldSize = 1;
  /// The peak FLOP rate f32 matmuls run at (fp32, or tf32); others run at
  /// their type's (HardwareModel::matmulPeakKey).
  std::string precision = "fp32";
  bool overlap = true; ///< collectives run beside compute
  bool recordEvents = true;
  /// A GPU's launches: every kernel root is one launch (a loop of pure
  /// compute runs on one thread), costed by the threads it runs on; GEMMs
  /// are library calls at the matmul peak; buffers lie in one preplanned
  /// block, so allocations are free.
  bool gpu = false;
  /// The threads a launch of a kernel root (a linalg op or a loop) runs
  /// on, as the target maps it (0: the whole device); unset: one per
  /// parallel iteration of a linalg op, one for a loop.
  std::function<double(Operation *)> launchThreads;
  /// The share of its iterations a row group's member runs, as the
  /// target maps it (a result read only in part written only there);
  /// unset: its zero.written_region's share (zero::writtenRegionOf), or
  /// all of them.
  std::function<double(Operation *)> rowGroupShare;
  /// Iterations of a thread's serial loop whose loads the target issues
  /// together (zero-gpu-batch-loads); 1: each load waited for before the
  /// next.
  int64_t loadBatch = 1;
};

/// FLOPs and seconds of one op; for a GEMM, the peak_flops key it ran at.
struct OpEstimate {
  double flops = 0, seconds = 0;
  StringRef matmulPeak = {};
  /// The bytes it moves, and what bounds it: "compute", "memory",
  /// "latency" (a GPU thread's loads one after another) or "launch" (the
  /// per-op overhead exceeds them all).
  double bytes = 0;
  StringRef bound = {};
  /// A GPU launch's threads (0: not a launch).
  double threads = 0;
};

/// One op of a step before bufferization (tensor operands), by the model
/// the simulator uses: contractions at the matmul peak of their element
/// type (`precision` for f32; `gpu`: 16-bit on tensor cores), loops at
/// their body's rate, both against the bytes they move; shape changes are
/// free.
OpEstimate estimateOp(Operation *op, const HardwareModel &hw,
                      StringRef precision, bool gpu = false);

/// Simulates `fn` (buffer-level IR after zero-schedule-collectives).
Timeline simulateStep(func::FuncOp fn, const HardwareModel &hw,
                      const SimulateOptions &options);

/// The world size the function was partitioned for (zero.world_size).
int64_t worldSizeOf(func::FuncOp fn);

/// The summary figures of `tl` as an attribute (the zero.timeline entry).
DictionaryAttr timelineAttr(Builder &b, const Timeline &tl);

} // namespace mlir::zero

#endif
