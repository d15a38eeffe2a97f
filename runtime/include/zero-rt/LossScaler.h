//===- LossScaler.h - fp16 loss scale between steps -------------*- C++ -*-===//
#ifndef ZERO_RT_LOSSSCALER_H
#define ZERO_RT_LOSSSCALER_H

#include <cstdint>
#include <string>

namespace zero::rt {

/// The fp16 block of a DeepSpeed configuration, with its defaults.
struct LossScaling {
  /// A fixed scale; 0 is dynamic, from 2^initialScalePower.
  double lossScale = 0;
  int64_t initialScalePower = 16, window = 1000, hysteresis = 2;
  bool consecutiveHysteresis = false;
  double minScale = 1;
};

/// What a LossScaler carries from one step to the next (checkpoints).
struct LossScalerState {
  double scale = 1;
  int64_t iter = 0, lastOverflow = -1, hysteresisLeft = 1;
};

/// DeepSpeed's DynamicLossScaler: an overflowed step is skipped and, once
/// `hysteresis` of them have been seen, halves the scale (not below
/// minScale); `window` steps without one double it. An overflow with the
/// scale already at minScale stops training. A static scale never moves.
class LossScaler {
public:
  explicit LossScaler(const LossScaling &config);
  double scale() const { return scale_; }
  /// Records step `overflow`; false, with `error`, where training stops.
  bool update(bool overflow, std::string &error);
  LossScalerState state() const {
    return {scale_, iter_, lastOverflow_, hysteresisLeft_};
  }
  void restore(const LossScalerState &s) {
    scale_ = s.scale;
    iter_ = s.iter;
    lastOverflow_ = s.lastOverflow;
    hysteresisLeft_ = s.hysteresisLeft;
  }

private:
  LossScaling config_;
  double scale_;
  int64_t iter_ = 0, lastOverflow_ = -1, hysteresisLeft_;
};

} // namespace zero::rt

#endif
