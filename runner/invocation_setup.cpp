#include "runner/invocation_setup.h"

#include <arpa/inet.h>

#include <algorithm>
#include <optional>
#include <string>

#include "capabilities/env/env_capability.h"
#include "compat/bundle_flavor.h"
#include "policy/skill_binding.h"

namespace skillbox::runner {
namespace {

RunResult invalid_result(std::string name, std::string message) {
  RunResult r;
  r.outcome = Outcome::invalid;
  r.error = ErrorInfo{std::move(name), std::move(message), "", ""};
  return r;
}

/// "127.0.0.1:8080" or "[::1]:8080", the endpoint of `origin` (normalized "scheme://host[:port]") when
/// its host is a literal loopback address (127.0.0.0/8 or ::1); std::nullopt for anything else, names
/// included (a name could resolve anywhere).
std::optional<std::string> loopback_endpoint(const std::string& origin) {
  HttpAllowList list;
  if (list.push_back(origin + "/") || list.entries().empty()) return std::nullopt;
  const HttpAllowEntry& e = list.entries().front();
  in_addr v4{};
  const bool loopback = e.host == "[::1]" ||
                        (::inet_pton(AF_INET, e.host.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127);
  if (!loopback) return std::nullopt;
  return e.host + ":" + std::to_string(e.port);
}

}  // namespace

std::optional<RunResult> refuse_before_start(const Invocation& invocation, const HostOptions& options,
                                             const std::filesystem::path& data_dir) {
  for (const auto& mapping : options.origin_map) {
    if (auto m = parse_origin_mapping(mapping.first + "=" + mapping.second); !m)
      return invalid_result("InvalidInput", "HostOptions::origin_map: " + m.error().message);
  }
  if (invocation.skill.manifest().format == SkillFormat::openhuman) {
    if (auto target = compat::parse_bundle_target(invocation.export_name); !target)
      return invalid_result("InvalidInput", target.error().message);
  }
  if (auto problem = narrowing_error(invocation.narrowing)) return invalid_result("InvalidInput", *problem);
  // The binding itself is written at the first data request (runner/host_endpoint.cpp).
  if (auto owner = policy::check_skill_id(data_dir, invocation.skill.manifest().id, invocation.skill.dir());
      !owner)
    return invalid_result("InvalidSkill", owner.error().message);
  return std::nullopt;
}

Limits effective_limits(const Invocation& invocation) {
  Limits l = invocation.overrides.apply(invocation.skill.manifest().limits);
  l.memory_bytes = std::clamp(l.memory_bytes, Limits::kMinMemoryBytes, Limits::kMaxMemoryBytes);
  l.steps = std::min(l.steps, Limits::kMaxSteps);
  l.stack_bytes = std::clamp(l.stack_bytes, Limits::kMinStackBytes, Limits::kMaxStackBytes);
  l.timeout_ms = std::min(l.timeout_ms, Limits::kMaxTimeoutMs);
  return l;
}

InvocationContext make_invocation_context(const Invocation& invocation, const HostOptions& options,
                                          const std::filesystem::path& data_dir) {
  const Skill& skill = invocation.skill;
  InvocationContext c;
  c.skill_id = skill.manifest().id;
  c.policy = narrow_policy(skill.manifest().permissions, invocation.narrowing);
  c.data_dir = data_dir;
  c.format = skill.manifest().format;
  c.memory_bytes = effective_limits(invocation).memory_bytes;
  c.extra_ca_file = options.extra_ca_file;
  c.env = capabilities::granted_env(c.policy.env, options.env);
  for (const auto& mapping : options.origin_map) {
    // Normalized here, so a mapping written in another spelling still matches; an invalid one is
    // refused by refuse_before_start() before anything starts.
    if (auto m = parse_origin_mapping(mapping.first + "=" + mapping.second)) c.origin_map.push_back(*m);
  }
  if (options.trust_loopback_origin_map_targets) {
    for (const auto& [from, to] : c.origin_map)
      if (auto endpoint = loopback_endpoint(to)) c.trusted_endpoints.push_back(std::move(*endpoint));
  }
  if (skill.manifest().bundle) {
    c.setup_modes = skill.manifest().bundle->setup_modes;
    if (auto it = options.credentials.find(c.skill_id); it != options.credentials.end())
      c.credentials = it->second;
  }
  return c;
}

}  // namespace skillbox::runner
