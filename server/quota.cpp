// server/quota.cpp — see quota.h.
#include "server/quota.h"

#include <algorithm>

namespace skillbox::server {
namespace {

using Duration = Quotas::Clock::duration;

/// A bucket's size as time: a full bucket refills in one minute.
constexpr Duration kWindow = std::chrono::minutes(1);

/// How long until a bucket full at `full` is full, from `now` (0 for a full one).
Duration backlog(Quotas::Clock::time_point full, Quotas::Clock::time_point now) {
  return std::max(full - now, Duration::zero());
}

/// Whole seconds covering `d`, at least 1 (a client told 0 would retry at once and be refused again).
uint64_t whole_seconds(Duration d) {
  const auto s = std::chrono::ceil<std::chrono::seconds>(d).count();
  return static_cast<uint64_t>(std::max<int64_t>(1, s));
}

/// The time one run takes to refill under `per_minute` runs a minute.
Duration per_run(uint64_t per_minute) {
  return kWindow / static_cast<int64_t>(per_minute);
}

}  // namespace

std::optional<Quotas::Refusal> Quotas::admit(const std::string& tenant, const QuotaConfig& config,
                                             Clock::time_point now) {
  if (!config.runs_per_minute && !config.cpu_seconds_per_minute) return std::nullopt;
  base::MutexLock lock(mu_);
  Tenant& t = tenants_[tenant];
  // Any CPU left admits a run: what it will spend is known only when it ends.
  if (config.cpu_seconds_per_minute) {
    const Duration owed = backlog(t.cpu_full, now);
    if (owed >= kWindow) {
      // Admitted once strictly less than a window is owed: one tick past the edge.
      return Refusal{.quota = Refusal::Quota::cpu_seconds_per_minute,
                     .retry_after_s = whole_seconds(owed - kWindow + std::chrono::nanoseconds(1))};
    }
  }
  if (config.runs_per_minute) {
    const Duration after = backlog(t.runs_full, now) + per_run(*config.runs_per_minute);
    if (after > kWindow) {
      return Refusal{.quota = Refusal::Quota::runs_per_minute,
                     .retry_after_s = whole_seconds(after - kWindow)};
    }
    t.runs_full = now + after;
  }
  return std::nullopt;
}

void Quotas::give_back(const std::string& tenant, const QuotaConfig& config, Clock::time_point now) {
  if (!config.runs_per_minute) return;
  base::MutexLock lock(mu_);
  Tenant& t = tenants_[tenant];
  t.runs_full =
      now + std::max(backlog(t.runs_full, now) - per_run(*config.runs_per_minute), Duration::zero());
}

void Quotas::charge_cpu(const std::string& tenant, const QuotaConfig& config, uint64_t cpu_ms,
                        Clock::time_point now) {
  if (!config.cpu_seconds_per_minute) return;
  base::MutexLock lock(mu_);
  Tenant& t = tenants_[tenant];
  // Each CPU millisecond takes 60 s / S milliseconds to refill. Debt is kept whole: a run that took
  // five minutes' worth keeps the tenant out for about five minutes.
  const auto cost = std::chrono::duration_cast<Duration>(std::chrono::milliseconds(cpu_ms) * 60) /
                    static_cast<int64_t>(*config.cpu_seconds_per_minute);
  t.cpu_full = now + backlog(t.cpu_full, now) + cost;
}

std::string describe(const Quotas::Refusal& refused, const QuotaConfig& config) {
  const std::string retry = "; retry in " + std::to_string(refused.retry_after_s) + " s";
  if (refused.quota == Quotas::Refusal::Quota::runs_per_minute) {
    return "this tenant has used up its runs_per_minute quota (" +
           std::to_string(config.runs_per_minute.value_or(0)) + " runs a minute)" + retry;
  }
  return "this tenant's runs have used up its cpu_seconds_per_minute quota (" +
         std::to_string(config.cpu_seconds_per_minute.value_or(0)) + " CPU seconds a minute)" + retry;
}

}  // namespace skillbox::server
