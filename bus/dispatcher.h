// bus/dispatcher.h — routes each typed request of one invocation to its capability.
//
// One Dispatcher exists per invocation. It owns the capabilities that invocation uses, created lazily
// on first use so that a skill that never touches the store never opens SQLite (sandbox start-up is the
// hot path). Capabilities receive only the typed request and the invocation's policy.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bus/messages.h"
#include "skillbox/policy.h"
#include "skillbox/skillbox.h"

namespace skillbox::bus {

/// Receives replies of asynchronous requests (http). complete() may be called from any thread.
class CompletionSink {
 public:
  virtual ~CompletionSink() = default;
  virtual void complete(uint64_t request_id, Reply reply) = 0;
};

/// What the capabilities of one invocation need to know about it. Plain values only.
struct InvocationContext {
  std::string skill_id;
  Policy policy;
  std::filesystem::path data_dir;  // resolved data directory (workspaces, store.sqlite)
  std::map<std::string, std::string> env;  // values env.get may return (already filtered or not)
  std::filesystem::path extra_ca_file;     // tests only: additional trusted CA (PEM)
};

/// Counters the dispatcher keeps for RunResult::usage. Atomic: http replies arrive on the I/O thread.
struct BusCounters {
  std::atomic<uint64_t> host_calls{0};
  std::atomic<uint64_t> http_bytes_in{0};
  std::atomic<uint64_t> http_bytes_out{0};
};

class Capabilities;  // the lazily created capability objects (dispatcher.cpp)

class Dispatcher {
 public:
  Dispatcher(InvocationContext context, CompletionSink& sink);
  ~Dispatcher();  // cancels pending asynchronous requests and waits until none can complete
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  /// Routes `request` to its capability. Synchronous capabilities (log, fs, store, env) return their
  /// reply. Asynchronous ones (http) return std::nullopt and later call sink.complete(request_id, reply)
  /// exactly once, unless cancel_all() ran first. Counts the call in counters().host_calls.
  std::optional<Reply> dispatch(uint64_t request_id, Request request);

  /// Cancels every asynchronous request still pending; none completes after this returns.
  void cancel_all();

  /// Log lines accepted so far (escaped, truncated, within the run's budget), moved out.
  std::vector<LogEntry> take_logs();

  [[nodiscard]] const BusCounters& counters() const { return counters_; }
  [[nodiscard]] const InvocationContext& context() const { return context_; }

 private:
  InvocationContext context_;
  CompletionSink& sink_;
  BusCounters counters_;
  std::unique_ptr<Capabilities> caps_;
};

}  // namespace skillbox::bus
