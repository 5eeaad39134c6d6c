#include "bus/dispatcher.h"

#include <type_traits>

#include "capabilities/env/env_capability.h"
#include "capabilities/fs/workspace.h"
#include "capabilities/http/http_capability.h"
#include "capabilities/log/log_capability.h"
#include "capabilities/store/store_capability.h"

namespace skillbox::bus {

class Capabilities {
 public:
  capabilities::LogCapability log;
  std::unique_ptr<capabilities::Workspace> fs;
  std::unique_ptr<capabilities::HttpCapability> http;
  std::unique_ptr<capabilities::StoreCapability> store;
  std::unique_ptr<capabilities::EnvCapability> env;
};

Dispatcher::Dispatcher(InvocationContext context, CompletionSink& sink)
    : context_(std::move(context)), sink_(sink), caps_(std::make_unique<Capabilities>()) {}

Dispatcher::~Dispatcher() { cancel_all(); }

void Dispatcher::cancel_all() {
  if (caps_->http) caps_->http->cancel_all();
}

std::vector<LogEntry> Dispatcher::take_logs() { return caps_->log.take(); }

std::optional<Reply> Dispatcher::dispatch(uint64_t request_id, Request request) {
  counters_.host_calls.fetch_add(1, std::memory_order_relaxed);
  Capabilities& c = *caps_;
  return std::visit(
      [&](auto&& r) -> std::optional<Reply> {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, LogRequest>) {
          return c.log.handle(r);
        } else if constexpr (std::is_same_v<T, HttpRequest>) {
          if (!c.http)
            c.http = std::make_unique<capabilities::HttpCapability>(
                context_.policy.http, context_.extra_ca_file, sink_, counters_);
          return c.http->start(request_id, std::move(r));
        } else if constexpr (std::is_same_v<T, StoreGetRequest> || std::is_same_v<T, StoreSetRequest> ||
                             std::is_same_v<T, StoreDeleteRequest> ||
                             std::is_same_v<T, StoreKeysRequest>) {
          if (!c.store)
            c.store = std::make_unique<capabilities::StoreCapability>(
                context_.data_dir, context_.skill_id, context_.policy.store);
          return c.store->handle(r);
        } else if constexpr (std::is_same_v<T, EnvGetRequest>) {
          if (!c.env)
            c.env = std::make_unique<capabilities::EnvCapability>(context_.policy.env, context_.env, &c.log);
          return c.env->handle(r);
        } else {
          if (!c.fs)
            c.fs = std::make_unique<capabilities::Workspace>(context_.data_dir, context_.skill_id,
                                                             context_.policy.fs);
          return c.fs->handle(r);
        }
      },
      std::move(request));
}

const char* error_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::PermissionDenied: return "PermissionDenied";
    case ErrorCode::NotFound: return "NotFound";
    case ErrorCode::QuotaExceeded: return "QuotaExceeded";
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::PayloadTooLarge: return "PayloadTooLarge";
    case ErrorCode::Timeout: return "Timeout";
    case ErrorCode::NetworkError: return "NetworkError";
    case ErrorCode::AlreadyExists: return "AlreadyExists";
    case ErrorCode::NotEmpty: return "NotEmpty";
    case ErrorCode::IoError: return "IoError";
  }
  return "IoError";
}

const char* error_errno(ErrorCode code) {
  switch (code) {
    case ErrorCode::PermissionDenied: return "EACCES";
    case ErrorCode::NotFound: return "ENOENT";
    case ErrorCode::QuotaExceeded: return "EQUOTA";
    case ErrorCode::InvalidArgument: return "EINVAL";
    case ErrorCode::PayloadTooLarge: return "E2BIG";
    case ErrorCode::Timeout: return "ETIMEDOUT";
    case ErrorCode::NetworkError: return "ENET";
    case ErrorCode::AlreadyExists: return "EEXIST";
    case ErrorCode::NotEmpty: return "ENOTEMPTY";
    case ErrorCode::IoError: return "EIO";
  }
  return "EIO";
}

}  // namespace skillbox::bus
