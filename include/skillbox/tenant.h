// skillbox/tenant.h — the tenant of an invocation: whoever owns the skill, and everything that is theirs.
//
// A runner serves invocations of many tenants at once (one WorkerRunner, one zygote, one pool for all):
// what differs between tenants travels with each invocation in a TenantContext, never in the runner.
// The context names where the tenant's state lives (its backends: store, workspace, bundle database,
// skill bindings, credentials, audit), the values `env.get` may return, the origin map and the ceilings
// on the limits. An Invocation without a tenant runs as the runner's default tenant, built once from
// its HostOptions (data directory, environment, credentials, origin map), which is what the CLI and
// embedders of earlier versions get unchanged.
//
//   auto acme = skillbox::local_tenant("acme", "/srv/skillbox/tenants/acme");
//   acme->env = {{"WEATHER_API_KEY", "..."}};
//   acme->ceilings.timeout_ms = 2000;
//   runner.run({.skill = *skill, .tenant = acme});
//
// Nothing in a tenant context reaches another tenant's invocation: state goes through the tenant's own
// backends, and no capability reads the process environment or a global data directory on its own
// (docs/architecture.md "Tenants").
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "skillbox/credentials.h"
#include "skillbox/policy.h"

namespace skillbox {

namespace state {
struct Backends;  // state/backends.h: one backend per kind of state (internal interface)
}

/// Everything that belongs to one tenant. Shared (read-only) by every invocation of the tenant, from
/// any thread; build a new one to change it.
struct TenantContext {
  /// The tenant's name, for audit records and messages ("default" for the runner's own). Never used
  /// to find state: `state` says where it lives.
  std::string id = "default";
  /// The tenant's state backends (store, workspace, bundle database, bindings, credentials, audit).
  /// Null: the invocation ends `internal` ("the tenant has no state backends") before anything starts.
  std::shared_ptr<const state::Backends> state;
  /// Values offered to `env.get`, still filtered by the manifest's `permissions.env`. Names not here
  /// are undefined to the skill whatever the process environment holds.
  std::map<std::string, std::string> env;
  /// Origins mapped to others (HostOptions::origin_map has the contract).
  std::vector<std::pair<std::string, std::string>> origin_map;
  /// HostOptions::trust_loopback_origin_map_targets, for this tenant's origin map.
  bool trust_loopback_origin_map_targets = false;
  /// Upper bounds on every invocation's limits: each set field lowers the manifest's value (after the
  /// invocation's own overrides) as LimitOverrides::apply does. Unset fields bound nothing beyond the
  /// host's fixed ceilings (Limits::kMax*).
  LimitOverrides ceilings{};
};

/// A tenant whose state lives in the data directory `data_dir` on this machine (the local backends:
/// SQLite and files, laid out as docs/architecture.md "Data directory" says), with the credentials of
/// OpenHuman bundles by skill id (see HostOptions::credentials). Creates nothing on disk until an
/// invocation writes. `data_dir` should be absolute; an empty one gives a tenant whose every data
/// request fails with a message saying to set a data directory.
[[nodiscard]] std::shared_ptr<TenantContext> local_tenant(
    std::string id, const std::filesystem::path& data_dir,
    std::map<std::string, SkillCredentials> credentials = {});

}  // namespace skillbox
