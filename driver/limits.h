// The ranges of plir-opt's limits, one place for the command line
// (cli/plir_opt.cc), the pipeline's `limits:` (driver/pipeline_spec.cc) and
// a reproducer bundle's values (driver/reproducer.cc): a value outside is an
// error everywhere, never clamped or cast.
#ifndef PLIR_DRIVER_LIMITS_H_
#define PLIR_DRIVER_LIMITS_H_

#include <cstdint>

namespace plir::limits {

// --pass-timeout, limits.pass_timeout: seconds. Below a millisecond a
// timeout would round to "none" in nanoseconds.
inline constexpr double kMinPassTimeoutS = 0.001;
inline constexpr double kMaxPassTimeoutS = 1e6;
// --memory-limit, limits.memory_limit: megabytes (2^40 MB: the shift to
// bytes cannot overflow).
inline constexpr int64_t kMinMemoryLimitMb = 16;
inline constexpr int64_t kMaxMemoryLimitMb = int64_t{1} << 40;
// --threads.
inline constexpr int kMinThreads = 1;
inline constexpr int kMaxThreads = 1024;
// --opt-level.
inline constexpr int kMinOptLevel = 0;
inline constexpr int kMaxOptLevel = 3;

}  // namespace plir::limits

#endif  // PLIR_DRIVER_LIMITS_H_
