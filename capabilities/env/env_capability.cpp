// Scaffolding: replaced by the env implementation (issue 5).
#include "capabilities/env/env_capability.h"

namespace skillbox::capabilities {
EnvCapability::EnvCapability(std::vector<std::string> allowed, const std::map<std::string, std::string>& values)
    : allowed_(std::move(allowed)), values_(values) {}
bus::Reply EnvCapability::handle(const bus::EnvGetRequest&) const { return bus::OptionalStringReply{}; }
}  // namespace skillbox::capabilities
