#include "runner/invocation_setup.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

#include "capabilities/env/env_capability.h"
#include "compat/bundle_flavor.h"
#include "state/audit_sink.h"
#include "state/backends.h"
#include "state/binding_registry.h"
#include "state/credential_vault.h"
#include "state/local_backends.h"

extern char** environ;  // POSIX: the process environment, read once by make_default_tenant()

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

std::optional<RunResult> refuse_before_start(const Invocation& invocation, const TenantContext& tenant) {
  if (!tenant.state) {
    RunResult r;
    r.outcome = Outcome::internal;
    r.error = ErrorInfo{"InternalError",
                        "tenant \"" + tenant.id +
                            "\" has no state backends (TenantContext::state is null): build it with "
                            "skillbox::local_tenant()",
                        "", ""};
    return r;
  }
  for (const auto& mapping : tenant.origin_map) {
    if (auto m = parse_origin_mapping(mapping.first + "=" + mapping.second); !m)
      return invalid_result("InvalidInput", "HostOptions::origin_map: " + m.error().message);
  }
  if (invocation.skill.manifest().format == SkillFormat::openhuman) {
    if (auto target = compat::parse_bundle_target(invocation.export_name); !target)
      return invalid_result("InvalidInput", target.error().message);
  }
  if (auto problem = narrowing_error(invocation.narrowing)) return invalid_result("InvalidInput", *problem);
  // The binding itself is written at the first data request (runner/host_endpoint.cpp).
  if (!tenant.state->bindings)
    return invalid_result("InvalidSkill", "tenant \"" + tenant.id +
                                              "\" has no skill binding registry, so no "
                                              "skill id can be checked against its folder");
  if (auto owner = tenant.state->bindings->check(invocation.skill.manifest().id, invocation.skill.dir());
      !owner)
    return invalid_result("InvalidSkill", owner.error().message);
  // A vault that cannot be read (state/credential_vault.h) ends a bundle's invocation here, before
  // anything starts, rather than running it as if it had no credentials.
  if (invocation.skill.manifest().bundle && tenant.state->credentials) {
    if (auto found = tenant.state->credentials->find(invocation.skill.manifest().id); !found) {
      RunResult r;
      r.outcome = Outcome::internal;
      r.error = ErrorInfo{"InternalError",
                          "the operator's credentials could not be read: " + found.error().message, "", ""};
      return r;
    }
  }
  return std::nullopt;
}

std::shared_ptr<const TenantContext> make_default_tenant(const HostOptions& options) {
  auto tenant = local_tenant("default", resolve_data_dir(options), options.credentials);
  tenant->origin_map = options.origin_map;
  tenant->trust_loopback_origin_map_targets = options.trust_loopback_origin_map_targets;
  if (options.env) {
    tenant->env = *options.env;
  } else {
    // The one read of the process environment: the host must not setenv() while a runner is made.
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const std::string_view entry(*e);
      const size_t eq = entry.find('=');
      if (eq == std::string_view::npos || eq == 0) continue;
      tenant->env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    }
  }
  return tenant;
}

Limits effective_limits(const Invocation& invocation, const TenantContext& tenant) {
  Limits l = tenant.ceilings.apply(invocation.overrides.apply(invocation.skill.manifest().limits));
  l.memory_bytes = std::clamp(l.memory_bytes, Limits::kMinMemoryBytes, Limits::kMaxMemoryBytes);
  l.steps = std::min(l.steps, Limits::kMaxSteps);
  l.stack_bytes = std::clamp(l.stack_bytes, Limits::kMinStackBytes, Limits::kMaxStackBytes);
  l.timeout_ms = std::min(l.timeout_ms, Limits::kMaxTimeoutMs);
  return l;
}

InvocationContext make_invocation_context(const Invocation& invocation, const HostOptions& options,
                                          const TenantContext& tenant,
                                          std::shared_ptr<ContactedOrigins> contacted) {
  const Skill& skill = invocation.skill;
  InvocationContext c;
  c.contacted = std::move(contacted);
  c.skill_id = skill.manifest().id;
  c.policy = narrow_policy(skill.manifest().permissions, invocation.narrowing);
  c.state = tenant.state;
  c.format = skill.manifest().format;
  c.memory_bytes = effective_limits(invocation, tenant).memory_bytes;
  c.extra_ca_file = options.extra_ca_file;
  c.env = capabilities::granted_env(c.policy.env, tenant.env);
  for (const auto& mapping : tenant.origin_map) {
    // Normalized here, so a mapping written in another spelling still matches; an invalid one is
    // refused by refuse_before_start() before anything starts.
    if (auto m = parse_origin_mapping(mapping.first + "=" + mapping.second)) c.origin_map.push_back(*m);
  }
  if (tenant.trust_loopback_origin_map_targets) {
    for (const auto& [from, to] : c.origin_map)
      if (auto endpoint = loopback_endpoint(to)) c.trusted_endpoints.push_back(std::move(*endpoint));
  }
  if (skill.manifest().bundle) {
    c.setup_modes = skill.manifest().bundle->setup_modes;
    // refuse_before_start() has read the vault already, so an error here is a vault failing between
    // the two reads: the bundle then sees no credential.
    if (tenant.state->credentials) {
      if (auto found = tenant.state->credentials->find(c.skill_id); found) c.credentials = std::move(*found);
    }
  }
  return c;
}

void record_audit(const TenantContext& tenant, const Invocation& invocation, const RunResult& result,
                  std::chrono::system_clock::time_point called, std::vector<std::string> origins) {
  if (!tenant.state || !tenant.state->audit) return;
  state::AuditRecord record;
  record.tenant = tenant.id;
  record.skill_id = invocation.skill.manifest().id;
  record.export_name = invocation.export_name;
  record.started = called;
  record.outcome = result.outcome;
  if (result.error) record.error_name = result.error->name;
  record.usage = result.usage;
  record.origins = std::move(origins);
  if (auto recorded = tenant.state->audit->record(record); !recorded) {
    static std::once_flag reported;
    std::call_once(reported,
                   [&] { std::fprintf(stderr, "skillbox: %s\n", recorded.error().message.c_str()); });
  }
}

}  // namespace skillbox::runner
