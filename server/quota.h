// server/quota.h — a tenant's quotas per minute (docs/server.md "Quotas per minute"): runs started and
// CPU seconds spent, each a token bucket that refills continuously.
//
//   runs_per_minute = N         a bucket of N runs, refilled at N per 60 s; each run admitted takes one
//   cpu_seconds_per_minute = S  a bucket of S seconds of CPU, refilled at S per 60 s; each run that ends
//                               pays its usage.cpu_ms, and may leave the bucket in debt
//
// A run is admitted while the run bucket holds a whole run and the CPU bucket holds anything; otherwise
// it is refused at once with the time, in whole seconds, after which the bucket will admit it again
// (Retry-After: honest, never 0). A bucket starts full, so a quiet tenant may burst a minute's worth.
//
// Each bucket is kept as the generic cell rate algorithm keeps it (ITU-T I.371): one time, the moment
// the bucket will be full again, moved forward by each unit taken (60 s / N a run, 60 s / S per second
// of CPU). Integer durations, so no rounding creeps in, and nothing to refill on a timer.
//
// Buckets are kept by tenant name, not by config: a SIGHUP reload that changes a quota keeps what was
// spent (as the time it takes to refill), and a tenant removed and brought back continues.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/mutex.h"

namespace skillbox::server {

/// A tenant's quotas; unset: no bound.
struct QuotaConfig {
  std::optional<uint64_t> runs_per_minute;
  std::optional<uint64_t> cpu_seconds_per_minute;
};

class Quotas {
 public:
  using Clock = std::chrono::steady_clock;

  /// Why a run was refused, and when to try again.
  struct Refusal {
    enum class Quota : uint8_t { runs_per_minute, cpu_seconds_per_minute };
    Quota quota = Quota::runs_per_minute;
    uint64_t retry_after_s = 1;  // at least 1
  };

  /// Takes one run from `tenant`'s bucket under `config`, or says which quota is spent (taking
  /// nothing). std::nullopt: admitted. Any thread.
  [[nodiscard]] std::optional<Refusal> admit(const std::string& tenant, const QuotaConfig& config,
                                             Clock::time_point now);
  /// Puts back the run admit() took, for a request refused later (its queue was full). Any thread.
  void give_back(const std::string& tenant, const QuotaConfig& config, Clock::time_point now);
  /// Charges `cpu_ms` of CPU time, a run's usage.cpu_ms, to `tenant`'s CPU bucket. Any thread.
  void charge_cpu(const std::string& tenant, const QuotaConfig& config, uint64_t cpu_ms,
                  Clock::time_point now);

 private:
  /// One bucket: the time at which it is full again (the past, or the epoch, for a full one).
  struct Tenant {
    Clock::time_point runs_full{};
    Clock::time_point cpu_full{};
  };

  base::Mutex mu_;
  std::map<std::string, Tenant> tenants_ SKILLBOX_GUARDED_BY(mu_);
};

/// What a refusal says to the client, the same over /v1 and /mcp: "this tenant has used up its
/// runs_per_minute quota (N runs a minute); retry in S s".
[[nodiscard]] std::string describe(const Quotas::Refusal& refused, const QuotaConfig& config);

}  // namespace skillbox::server
