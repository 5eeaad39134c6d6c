// capabilities/http/http_capability.h — mediated network access (`openhuman.http`) through libcurl.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "bus/dispatcher.h"
#include "bus/messages.h"
#include "skillbox/policy.h"

namespace skillbox::capabilities {

/// Runs the HTTP requests of one invocation on a host I/O thread (curl multi), enforcing the policy
/// before and during each transfer. See docs/http.md.
class HttpCapability {
 public:
  HttpCapability(HttpPolicy policy, std::filesystem::path extra_ca_file, bus::CompletionSink& sink,
                 bus::BusCounters& counters);
  ~HttpCapability();  // cancels everything pending
  HttpCapability(const HttpCapability&) = delete;
  HttpCapability& operator=(const HttpCapability&) = delete;

  /// Starts a request. Policy refusals may complete synchronously (returned); otherwise returns
  /// std::nullopt and the reply arrives through sink.complete(id, ...).
  std::optional<bus::Reply> start(uint64_t id, bus::HttpRequest request);
  /// Cancels all pending requests; no completion is delivered after this returns.
  void cancel_all();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::capabilities
