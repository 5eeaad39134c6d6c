// policy/limits.cpp — host lowering of a skill's limits.
#include <algorithm>

#include "skillbox/policy.h"

namespace skillbox {

Limits LimitOverrides::apply(Limits base) const {
  // An override can only lower a limit. It is first raised to the smallest value a runtime can work
  // with, so that a careless 0 cannot produce a runtime that fails to start; the result still never
  // exceeds the base.
  const auto lower = [](uint64_t base_value, const std::optional<uint64_t>& override_value, uint64_t floor) {
    if (!override_value) return base_value;
    return std::min(base_value, std::max(*override_value, floor));
  };
  base.memory_bytes = lower(base.memory_bytes, memory_bytes, Limits::kMinMemoryBytes);
  base.steps = lower(base.steps, steps, 1);
  base.stack_bytes = lower(base.stack_bytes, stack_bytes, Limits::kMinStackBytes);
  base.timeout_ms = lower(base.timeout_ms, timeout_ms, 1);
  return base;
}

std::string_view to_string(FsMode mode) {
  switch (mode) {
    case FsMode::none:
      return "none";
    case FsMode::read:
      return "read";
    case FsMode::write:
      return "write";
    case FsMode::readwrite:
      return "readwrite";
  }
  return "none";
}

}  // namespace skillbox
