// capabilities/env/env_capability.h — allowlisted environment values (`env.get`).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bus/messages.h"

namespace skillbox::capabilities {

/// Returns a value only for names listed in the manifest's `permissions.env`.
class EnvCapability {
 public:
  EnvCapability(std::vector<std::string> allowed, const std::map<std::string, std::string>& values);
  bus::Reply handle(const bus::EnvGetRequest& r) const;

 private:
  std::vector<std::string> allowed_;
  const std::map<std::string, std::string>& values_;
};

}  // namespace skillbox::capabilities
