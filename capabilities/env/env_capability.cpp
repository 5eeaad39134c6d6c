#include "capabilities/env/env_capability.h"

#include <algorithm>
#include <cstdlib>

namespace skillbox::capabilities {

std::map<std::string, std::string> granted_env(
    const std::vector<std::string>& allowed,
    const std::optional<std::map<std::string, std::string>>& host_env) {
  std::map<std::string, std::string> out;
  for (const std::string& name : allowed) {
    // A name with NUL would be truncated by getenv ("A\0B" would read A); '=' cannot be in a name.
    if (name.empty() || name.find('\0') != std::string::npos || name.find('=') != std::string::npos) continue;
    if (host_env) {
      if (auto it = host_env->find(name); it != host_env->end()) out.emplace(name, it->second);
      continue;
    }
    // Read-only use of the process environment; a host must not setenv() while invocations start.
    const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
    if (value != nullptr) out.emplace(name, value);
  }
  return out;
}

EnvCapability::EnvCapability(std::vector<std::string> allowed,
                             const std::map<std::string, std::string>& values)
    : allowed_(std::move(allowed)), values_(values) {}

EnvAnswer EnvCapability::handle(const bus::EnvGetRequest& r) const {
  const std::string& name = r.name;
  if (name.empty())
    return {bus::ErrorReply{bus::ErrorCode::InvalidArgument, "env.get: the name is empty"}, {}};
  // NUL truncation: "API_KEY\0x" must not read API_KEY.
  if (name.find('\0') != std::string::npos)
    return {bus::ErrorReply{bus::ErrorCode::InvalidArgument, "env.get: the name contains a NUL character"},
            {}};
  if (name.find('=') != std::string::npos)
    return {bus::ErrorReply{bus::ErrorCode::InvalidArgument, "env.get: the name contains '='"}, {}};
  if (std::find(allowed_.begin(), allowed_.end(), name) == allowed_.end()) {
    return {bus::OptionalStringReply{},
            bus::LogRequest{bus::LogLevel::debug, "env.get(\"" + name +
                                                      "\") returned undefined: the name is not "
                                                      "listed in permissions.env of skill.json"}};
  }
  auto it = values_.find(name);
  if (it == values_.end()) return {bus::OptionalStringReply{}, {}};
  return {bus::OptionalStringReply{it->second}, {}};
}

}  // namespace skillbox::capabilities
