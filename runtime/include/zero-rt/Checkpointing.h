//===- Checkpointing.h - saving and resuming a training run -----*- C++ -*-===//
//
// zero-run's side of checkpoints (zero-rt/Checkpoint.h): every rank writes
// the state it holds, rank 0 the manifest; a resume maps the checkpoint's
// layout onto the plan's, reading only what this rank holds.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_CHECKPOINTING_H
#define ZERO_RT_CHECKPOINTING_H

#include "zero-rt/Checkpoint.h"
#include "zero-rt/Step.h"

namespace zero::rt {

/// Where a run stands between two steps.
struct RunState {
  int64_t steps = 0, optimizerSteps = 0, samples = 0;
  std::optional<LossScalerState> lossScaler;
};

/// Training state of the step: parameters, buffers, master weights and
/// optimizer states.
bool isCheckpointed(const BufferSpec &spec);

/// Whether every rank's `ok` holds. Collective. Where one does not, the
/// lowest failing rank keeps its `error` (the one to print) and the others
/// clear theirs. `value` is gathered into `values`, by rank.
bool allRanksOk(bool ok, std::string &error, int64_t value = 0,
                std::vector<int64_t> *values = nullptr);

/// Writes ROOT/step-N for `state` from the step's argument buffers `args`
/// and keeps the newest `keep` (0: all). Collective: every rank calls it
/// and all return the same answer; `error` is set on one rank only (the
/// one to print it).
bool saveCheckpoint(const Program &prog, const Function &fn,
                    const std::vector<Array> &args, const RunState &state,
                    const std::string &root, int64_t keep, std::string &error);

/// Fills this rank's checkpointed arguments of `fn` in `args` (already
/// allocated to the plan's shapes) and `state` from the checkpoint at
/// `path`, whatever world size, stage or precision wrote it. Not
/// collective: a rank reads only what it holds.
bool loadCheckpoint(const Program &prog, const Function &fn, int64_t rank,
                    const std::string &path, std::vector<Array> &args,
                    RunState &state, std::string &error);

} // namespace zero::rt

#endif
