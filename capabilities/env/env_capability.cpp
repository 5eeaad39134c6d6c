#include "capabilities/env/env_capability.h"

#include <algorithm>

namespace skillbox::capabilities {

std::map<std::string, std::string> granted_env(const std::vector<std::string>& allowed,
                                               const std::map<std::string, std::string>& tenant_env) {
  std::map<std::string, std::string> out;
  for (const std::string& name : allowed) {
    // '=' cannot be in a name, nor NUL ("A\0B" must never read A).
    if (name.empty() || name.find('\0') != std::string::npos || name.find('=') != std::string::npos) continue;
    if (auto it = tenant_env.find(name); it != tenant_env.end()) out.emplace(name, it->second);
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
