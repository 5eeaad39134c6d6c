// Scaffolding: replaced by the log capability of the foundation issue.
#include "capabilities/log/log_capability.h"

namespace skillbox::capabilities {
bus::Reply LogCapability::handle(const bus::LogRequest& request) {
  entries_.push_back({static_cast<LogEntry::Level>(request.level), request.text});
  return bus::OkReply{};
}
}  // namespace skillbox::capabilities
