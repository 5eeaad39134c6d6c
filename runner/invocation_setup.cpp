#include "runner/invocation_setup.h"

#include <algorithm>

#include "capabilities/env/env_capability.h"

namespace skillbox::runner {

Limits effective_limits(const Invocation& invocation) {
  Limits l = invocation.overrides.apply(invocation.skill.manifest().limits);
  l.memory_bytes = std::clamp(l.memory_bytes, Limits::kMinMemoryBytes, Limits::kMaxMemoryBytes);
  l.steps = std::min(l.steps, Limits::kMaxSteps);
  l.stack_bytes = std::clamp(l.stack_bytes, Limits::kMinStackBytes, Limits::kMaxStackBytes);
  l.timeout_ms = std::min(l.timeout_ms, Limits::kMaxTimeoutMs);
  return l;
}

InvocationContext make_invocation_context(const Skill& skill, const HostOptions& options,
                                          const std::filesystem::path& data_dir) {
  InvocationContext c;
  c.skill_id = skill.manifest().id;
  c.policy = skill.manifest().permissions;
  c.data_dir = data_dir;
  c.extra_ca_file = options.extra_ca_file;
  c.env = capabilities::granted_env(c.policy.env, options.env);
  return c;
}

}  // namespace skillbox::runner
