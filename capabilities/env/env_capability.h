// capabilities/env/env_capability.h — allowlisted environment values (`env.get`).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bus/messages.h"

namespace skillbox::capabilities {

class LogCapability;

/// The values an invocation may see: for each name in `allowed` (the manifest's `permissions.env`),
/// its value from `host_env` when the host set one (HostOptions::env, e.g. from --env-file), else from
/// the process environment. Names without a value are left out. Only granted names are ever copied,
/// so the InvocationContext (which may cross to a worker process) never carries other secrets.
[[nodiscard]] std::map<std::string, std::string> granted_env(
    const std::vector<std::string>& allowed,
    const std::optional<std::map<std::string, std::string>>& host_env);

/// Serves `env.get(name)`: the value only for names listed in the manifest's `permissions.env`.
/// Replies: OptionalStringReply (nullopt for a name that is not granted or has no value);
/// InvalidArgument for an empty name or one containing NUL or '='. A refused name is reported as a
/// debug line in the run's log that names the manifest key to add it to; values never appear in logs
/// or errors.
class EnvCapability {
 public:
  /// `values` must outlive the capability (the dispatcher's InvocationContext). `log`, when given,
  /// receives the debug line for refused names.
  EnvCapability(std::vector<std::string> allowed, const std::map<std::string, std::string>& values,
                LogCapability* log = nullptr);
  bus::Reply handle(const bus::EnvGetRequest& r) const;

 private:
  std::vector<std::string> allowed_;
  const std::map<std::string, std::string>& values_;
  LogCapability* log_;
};

}  // namespace skillbox::capabilities
