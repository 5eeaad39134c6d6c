// Tests of LimitOverrides::apply: a host can lower a skill's limits, never raise them.
#include <gtest/gtest.h>

#include "skillbox/policy.h"

namespace skillbox {
namespace {

TEST(LimitOverrides, NothingSetKeepsTheBase) {
  const Limits base{.memory_bytes = 1 << 20, .steps = 5, .stack_bytes = 64 << 10, .timeout_ms = 9};
  const Limits out = LimitOverrides{}.apply(base);
  EXPECT_EQ(out.memory_bytes, base.memory_bytes);
  EXPECT_EQ(out.steps, base.steps);
  EXPECT_EQ(out.stack_bytes, base.stack_bytes);
  EXPECT_EQ(out.timeout_ms, base.timeout_ms);
}

TEST(LimitOverrides, LowerValuesApply) {
  const Limits out =
      LimitOverrides{.memory_bytes = 8ull << 20, .steps = 1000, .stack_bytes = 32 << 10, .timeout_ms = 50}
          .apply(Limits{});
  EXPECT_EQ(out.memory_bytes, 8ull << 20);
  EXPECT_EQ(out.steps, 1000u);
  EXPECT_EQ(out.stack_bytes, 32u << 10);
  EXPECT_EQ(out.timeout_ms, 50u);
}

TEST(LimitOverrides, HigherValuesNeverRaiseTheManifestsLimits) {
  const Limits base{};
  const Limits out = LimitOverrides{.memory_bytes = Limits::kMaxMemoryBytes,
                                    .steps = Limits::kMaxSteps,
                                    .stack_bytes = Limits::kMaxStackBytes,
                                    .timeout_ms = Limits::kMaxTimeoutMs}
                         .apply(base);
  EXPECT_EQ(out.memory_bytes, base.memory_bytes);
  EXPECT_EQ(out.steps, base.steps);
  EXPECT_EQ(out.stack_bytes, base.stack_bytes);
  EXPECT_EQ(out.timeout_ms, base.timeout_ms);
}

TEST(LimitOverrides, ZeroBecomesTheSmallestWorkableValue) {
  const Limits out =
      LimitOverrides{.memory_bytes = 0, .steps = 0, .stack_bytes = 0, .timeout_ms = 0}.apply(Limits{});
  EXPECT_EQ(out.memory_bytes, Limits::kMinMemoryBytes);
  EXPECT_EQ(out.steps, 1u);
  EXPECT_EQ(out.stack_bytes, Limits::kMinStackBytes);
  EXPECT_EQ(out.timeout_ms, 1u);
}

TEST(LimitOverrides, TheFloorNeverRaisesABaseBelowIt) {
  const Limits base{.memory_bytes = 1000, .steps = 1, .stack_bytes = 100, .timeout_ms = 1};
  const Limits out =
      LimitOverrides{.memory_bytes = 0, .steps = 0, .stack_bytes = 0, .timeout_ms = 0}.apply(base);
  EXPECT_EQ(out.memory_bytes, 1000u);
  EXPECT_EQ(out.stack_bytes, 100u);
}

}  // namespace
}  // namespace skillbox
