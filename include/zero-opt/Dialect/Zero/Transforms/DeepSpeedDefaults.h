//===- DeepSpeedDefaults.h - DeepSpeed's defaults, stated once --*- C++ -*-===//
//
// The zero_optimization keys zero-opt implements, with DeepSpeed's default
// values (in elements). The ds_config reader, the pipelines' options and the
// passes all start from these.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_OPT_DIALECT_ZERO_TRANSFORMS_DEEPSPEEDDEFAULTS_H
#define ZERO_OPT_DIALECT_ZERO_TRANSFORMS_DEEPSPEEDDEFAULTS_H

#include <cstdint>

namespace mlir::zero::deepspeed {

inline constexpr bool kOverlapComm = true;                   // overlap_comm
inline constexpr int64_t kReduceBucketSize = 500000000;      // reduce_bucket_size
inline constexpr int64_t kAllgatherBucketSize = 500000000;   // allgather_bucket_size
inline constexpr int64_t kPrefetchBucketSize = 50000000;     // stage3_prefetch_bucket_size
inline constexpr int64_t kMaxLiveParameters = 1000000000;    // stage3_max_live_parameters
inline constexpr int64_t kMaxReuseDistance = 1000000000;     // stage3_max_reuse_distance
inline constexpr int64_t kPersistenceThreshold = 100000;     // stage3_param_persistence_threshold

} // namespace mlir::zero::deepspeed

#endif
