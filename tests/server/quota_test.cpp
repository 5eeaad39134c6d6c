// server/quota.h: the token buckets behind runs_per_minute and cpu_seconds_per_minute, on a clock the
// test moves: what is admitted, what is refused, the Retry-After it gives, and that a changed config
// keeps what was spent.
#include "server/quota.h"

#include <gtest/gtest.h>

#include <chrono>

namespace skillbox::server {
namespace {

using namespace std::chrono_literals;
using Quota = Quotas::Refusal::Quota;

const Quotas::Clock::time_point t0{};

QuotaConfig runs(uint64_t n) {
  return QuotaConfig{.runs_per_minute = n, .cpu_seconds_per_minute = std::nullopt};
}
QuotaConfig cpu(uint64_t s) {
  return QuotaConfig{.runs_per_minute = std::nullopt, .cpu_seconds_per_minute = s};
}

TEST(Quotas, NoQuotaAdmitsEverything) {
  Quotas q;
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(q.admit("a", QuotaConfig{}, t0).has_value());
}

TEST(Quotas, RunsPerMinuteAdmitsABurstThenRefillsAtItsRate) {
  Quotas q;
  EXPECT_FALSE(q.admit("a", runs(2), t0).has_value());
  EXPECT_FALSE(q.admit("a", runs(2), t0).has_value());
  const auto refused = q.admit("a", runs(2), t0);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->quota, Quota::runs_per_minute);
  EXPECT_EQ(refused->retry_after_s, 30u);  // 2 a minute: one every 30 s
  // Just before the time it gave, still refused (with at least 1 s to wait); at that time, admitted.
  const auto early = q.admit("a", runs(2), t0 + 29s);
  ASSERT_TRUE(early.has_value());
  EXPECT_EQ(early->retry_after_s, 1u);
  EXPECT_FALSE(q.admit("a", runs(2), t0 + 30s).has_value());
  EXPECT_TRUE(q.admit("a", runs(2), t0 + 30s).has_value());
}

TEST(Quotas, ARunGivenBackCanBeTakenAgain) {
  Quotas q;
  EXPECT_FALSE(q.admit("a", runs(1), t0).has_value());
  EXPECT_TRUE(q.admit("a", runs(1), t0).has_value());
  q.give_back("a", runs(1), t0);
  EXPECT_FALSE(q.admit("a", runs(1), t0).has_value());
}

TEST(Quotas, CpuSecondsAreChargedAfterTheRunAndDebtIsRepaidAtTheRate) {
  Quotas q;
  EXPECT_FALSE(q.admit("a", cpu(1), t0).has_value());  // anything left admits a run
  q.charge_cpu("a", cpu(1), 3000, t0);                 // it took 3 s: 2 s of debt
  const auto refused = q.admit("a", cpu(1), t0);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->quota, Quota::cpu_seconds_per_minute);
  // 1 s a minute refills 1/60 s each second: 2 s of debt (and a millisecond) take 121 s.
  EXPECT_EQ(refused->retry_after_s, 121u);
  EXPECT_TRUE(q.admit("a", cpu(1), t0 + 120s).has_value());
  EXPECT_FALSE(q.admit("a", cpu(1), t0 + 121s).has_value());
}

TEST(Quotas, TenantsHaveTheirOwnBuckets) {
  Quotas q;
  EXPECT_FALSE(q.admit("a", runs(1), t0).has_value());
  EXPECT_TRUE(q.admit("a", runs(1), t0).has_value());
  EXPECT_FALSE(q.admit("b", runs(1), t0).has_value());
}

TEST(Quotas, AChangedQuotaKeepsWhatWasSpent) {
  Quotas q;
  EXPECT_FALSE(q.admit("a", runs(2), t0).has_value());
  EXPECT_FALSE(q.admit("a", runs(2), t0).has_value());
  // A reload raises the quota: the bucket is not refilled by it, only by time, at the new rate.
  const auto refused = q.admit("a", runs(4), t0);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->retry_after_s, 15u);
  // A reload lowers it: what was spent is owed at the new rate (one run of 60 a minute took 1 s).
  Quotas fresh;
  EXPECT_FALSE(fresh.admit("a", runs(60), t0).has_value());
  const auto lowered = fresh.admit("a", runs(1), t0);
  ASSERT_TRUE(lowered.has_value());
  EXPECT_EQ(lowered->retry_after_s, 1u);
  EXPECT_FALSE(fresh.admit("a", runs(1), t0 + 1s).has_value());
}

}  // namespace
}  // namespace skillbox::server
