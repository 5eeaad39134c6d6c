// Scaffolding: replaced by the libcurl implementation (issue 4).
#include "capabilities/http/http_capability.h"

namespace skillbox::capabilities {
struct HttpCapability::Impl {};
HttpCapability::HttpCapability(HttpPolicy, std::filesystem::path, bus::CompletionSink&, bus::BusCounters&) {}
HttpCapability::~HttpCapability() = default;
std::optional<bus::Reply> HttpCapability::start(uint64_t, bus::HttpRequest) {
  return bus::ErrorReply{bus::ErrorCode::PermissionDenied, "openhuman.http is not available yet"};
}
void HttpCapability::cancel_all() {}
}  // namespace skillbox::capabilities
