//===- Checkpoint.h - sharded training checkpoints --------------*- C++ -*-===//
//
// A checkpoint is a folder ROOT/step-NNNNNNNN holding manifest.json and one
// rank-RRRRR.npz per rank of the plan that wrote it (docs/checkpoints.md).
// Each tensor is stored whole in one rank's file, or as the flat,
// end-padded shards of the plan, shard r in rank r's file. The manifest
// records the layout, so a plan of another world size or stage reads just
// the elements it holds. A checkpoint is assembled under ROOT/.tmp-TAG and
// renamed into place once every file is synced: it is whole or absent.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_CHECKPOINT_H
#define ZERO_RT_CHECKPOINT_H

#include "zero-rt/LossScaler.h"
#include "zero-rt/Npz.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zero::rt {

/// One tensor of a checkpoint.
struct CheckpointTensor {
  std::string name, role;
  std::string stateOf; ///< optimizer state or master weight: its parameter
  DType dtype = DType::F32;
  std::vector<int64_t> shape; ///< of the whole tensor
  /// > 0: sharded; rank r's file holds elements [r * shardNumel, (r + 1) *
  /// shardNumel), zero past the tensor's end.
  int64_t shardNumel = 0;
  /// Whole: the rank whose file holds it.
  int64_t file = 0;
  bool sharded() const { return shardNumel > 0; }
  int64_t numel() const;
};

struct CheckpointManifest {
  /// The model's name, the absolute path it was compiled from (where an
  /// export finds the graph) and the hash of its structure.
  std::string model, modelPath, modelHash;
  int64_t worldSize = 1, stage = 0;
  std::string precision = "fp32", optimizer;
  /// Steps run, optimizer steps taken (fp16 skips some) and samples read.
  int64_t steps = 0, optimizerSteps = 0, samples = 0;
  /// Dropout's masks are a function of (seed, optimizer step, sample).
  uint64_t seed = 0;
  std::optional<LossScalerState> lossScaler;
  /// Bytes of each rank's file: a shorter one is truncated.
  std::vector<uint64_t> fileBytes;
  std::vector<CheckpointTensor> tensors;

  const CheckpointTensor *find(const std::string &name) const;
  /// The fp32 master weight of 16-bit parameter `param`, or null.
  const CheckpointTensor *masterOf(const std::string &param) const;
};

/// "step-00000012": the folder name of the checkpoint after `steps` steps.
std::string checkpointTag(int64_t steps);
/// "rank-00003.npz".
std::string rankFileName(int64_t rank);

/// Writes DIR/manifest.json and syncs it.
bool writeManifest(const std::string &dir, const CheckpointManifest &m,
                   std::string &error);

/// Flushes a folder's entries (new names, renames) to disk.
bool syncDirectory(const std::string &dir, std::string &error);

/// Renames the finished folder `tmp` to ROOT/TAG, replacing a checkpoint of
/// that name, and syncs ROOT.
bool publishCheckpoint(const std::string &tmp, const std::string &root,
                       const std::string &tag, std::string &error);

/// Removes ROOT's leftovers of interrupted writes and all but its newest
/// `keep` checkpoints (keep 0: none removed).
bool pruneCheckpoints(const std::string &root, int64_t keep,
                      std::string &error);

/// Reads a checkpoint: `path` is a checkpoint folder, or a ROOT whose
/// newest whole checkpoint is taken.
class CheckpointReader {
public:
  CheckpointReader();
  ~CheckpointReader();
  /// Reads the manifest and checks every rank file's size.
  bool open(const std::string &path, std::string &error);
  const CheckpointManifest &manifest() const { return manifest_; }
  /// The checkpoint folder.
  const std::string &dir() const { return dir_; }
  /// Elements [first, first + count) of the whole tensor, flat, converted
  /// to `to` (floats convert among themselves), into `out`; elements past
  /// the tensor's end are zero.
  bool read(const CheckpointTensor &t, int64_t first, int64_t count, DType to,
            void *out, std::string &error);

private:
  NpzReader *file(int64_t rank, std::string &error);
  CheckpointManifest manifest_;
  std::string dir_;
  std::vector<std::unique_ptr<NpzReader>> files;
};

/// The type a tensor of type `t` is stored as in a rank file: NumPy has no
/// bfloat16, so its bits are stored as uint16 (the manifest keeps the
/// type).
DType storageType(DType t);

/// Converts `n` elements between float types (16-bit ones round to nearest
/// even); other types must be equal and are copied.
void convertElements(const void *in, DType from, void *out, DType to,
                     int64_t n);
bool isFloatType(DType t);

} // namespace zero::rt

#endif
