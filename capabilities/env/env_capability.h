// capabilities/env/env_capability.h — allowlisted environment values (`env.get`).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bus/messages.h"

namespace skillbox::capabilities {

/// The values an invocation may see: for each name in `allowed` (the manifest's `permissions.env`), its
/// value in `tenant_env` (TenantContext::env: HostOptions::env, or the process environment the runner
/// copied once when it was made). Names without a value are left out. Only granted names are ever
/// copied, so the InvocationContext never carries the tenant's other values. Reads no environment.
[[nodiscard]] std::map<std::string, std::string> granted_env(
    const std::vector<std::string>& allowed, const std::map<std::string, std::string>& tenant_env);

/// The answer to one `env.get`: the reply for the skill, and a note for the run's log.
struct EnvAnswer {
  bus::Reply reply;
  /// Set when the name is not granted: a debug line naming the manifest key to add it to. Never
  /// holds a value. Whoever composes the capabilities (runner::HostEndpoint) sends it to the log
  /// capability, so it counts against the run's log budget like any other line.
  std::optional<bus::LogRequest> note;
};

/// Serves `env.get(name)`: the value only for names listed in the manifest's `permissions.env`.
/// Replies: OptionalStringReply (nullopt for a name that is not granted or has no value);
/// InvalidArgument for an empty name or one containing NUL or '='. A refused name comes with a note
/// (EnvAnswer::note); values never appear in notes or errors.
class EnvCapability {
 public:
  /// `values` must outlive the capability (the HostEndpoint's InvocationContext).
  EnvCapability(std::vector<std::string> allowed, const std::map<std::string, std::string>& values);
  /// Answers `r`. Never throws except std::bad_alloc.
  [[nodiscard]] EnvAnswer handle(const bus::EnvGetRequest& r) const;

 private:
  std::vector<std::string> allowed_;
  const std::map<std::string, std::string>& values_;
};

}  // namespace skillbox::capabilities
