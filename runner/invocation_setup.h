// runner/invocation_setup.h — what every runner computes for an invocation before it runs: the
// checks that refuse it before any skill code runs, the effective limits, and what the capabilities
// know about it. One place, so both runners agree.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>

#include "runner/host_endpoint.h"
#include "skillbox/skillbox.h"

namespace skillbox::runner {

/// Why `invocation` must not start, as the `invalid` RunResult to return, or nullopt when it may:
/// an invalid HostOptions::origin_map entry, a bundle target that is not "tools", "tool:NAME",
/// "hook:NAME" or a sequence (OpenHuman bundles), or a skill id bound to another folder
/// (docs/manifest.md "Identity"). Reads the data directory's bindings; writes nothing.
[[nodiscard]] std::optional<RunResult> refuse_before_start(const Invocation& invocation,
                                                           const TenantContext& tenant);

/// The runner's default tenant (skillbox/tenant.h), built once when the runner is made: the data
/// directory of `options` resolved (resolve_data_dir), its credentials, origin map and loopback trust,
/// and for `env.get` HostOptions::env, or when that is unset a copy of the process environment taken
/// now. No capability reads the environment or a data directory on its own after this.
[[nodiscard]] std::shared_ptr<const TenantContext> make_default_tenant(const HostOptions& options);

/// The manifest's limits lowered by the invocation's overrides, then clamped to the host ceilings the
/// engine's safety rests on (the JS stack must fit the thread's real stack), against a Skill built in
/// code with other values.
/// `tenant`'s ceilings lower them further.
[[nodiscard]] Limits effective_limits(const Invocation& invocation, const TenantContext& tenant);

/// The capabilities' view of `invocation`: id, policy (the manifest's, narrowed by
/// Invocation::narrowing), the tenant's state backends, the values of the granted environment names
/// only (the rest of the tenant's environment never reaches the invocation), the tenant's origin map,
/// an OpenHuman bundle's setup modes and credentials, and the test CA file of `options`.
/// `contacted` (may be null) records the origins its http requests go to.
[[nodiscard]] InvocationContext make_invocation_context(const Invocation& invocation,
                                                        const HostOptions& options,
                                                        const TenantContext& tenant,
                                                        std::shared_ptr<ContactedOrigins> contacted);

/// Gives the tenant's audit sink (if it has one) the record of `invocation`, which ended with `result`
/// after contacting `origins`; `called` is when Runner::run was called. A sink that fails is reported
/// on stderr once per runner process, not in the result: the run has happened.
void record_audit(const TenantContext& tenant, const Invocation& invocation, const RunResult& result,
                  std::chrono::system_clock::time_point called, std::vector<std::string> origins);

/// Runner::run, the same for both runners: `run` runs `invocation` as its tenant (`default_tenant` when it
/// names none), its http capabilities recording the origins they contact in the ContactedOrigins it is
/// given, then the record goes to that tenant's audit sink (record_audit).
template <class Run>
RunResult run_audited(const Invocation& invocation, const TenantContext& default_tenant, Run&& run) {
  const auto called = std::chrono::system_clock::now();
  const TenantContext& tenant = invocation.tenant ? *invocation.tenant : default_tenant;
  const auto contacted = std::make_shared<ContactedOrigins>();
  RunResult result = run(invocation, tenant, contacted);
  record_audit(tenant, invocation, result, called, contacted->list());
  return result;
}

}  // namespace skillbox::runner
