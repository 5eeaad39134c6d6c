// bus/endpoint.h — the seam between the engine and the host: where typed requests go.
//
// The engine sends every host call of an invocation as a bus::Request to one Endpoint and receives
// replies either at once (synchronous capabilities) or later through a CompletionSink. What stands
// behind an Endpoint is not the engine's business: in-process it is runner::HostEndpoint (the
// invocation's capabilities in the same process); in worker mode the worker's Endpoint writes request
// frames to its socket (bus/codec.h) and the supervisor answers them with a runner::HostEndpoint of
// its own, so the same capabilities and the same policy serve both modes.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "bus/messages.h"

namespace skillbox::bus {

/// Receives the replies of asynchronous requests (http). complete() may be called from any thread,
/// also concurrently with the engine's own thread; it must not call back into the Endpoint.
class CompletionSink {
 public:
  virtual ~CompletionSink() = default;
  /// Delivers the one reply of request `request_id`. Never called after Endpoint::cancel_all()
  /// returned.
  virtual void complete(uint64_t request_id, Reply reply) = 0;
};

/// Usage counters of the side that serves an invocation's requests (RunResult::usage). Atomic: http
/// replies are counted on the I/O thread while the JS thread sends more requests.
struct BusCounters {
  std::atomic<uint64_t> host_calls{0};      // requests received, of every type
  std::atomic<uint64_t> http_bytes_in{0};   // decoded response body bytes accepted
  std::atomic<uint64_t> http_bytes_out{0};  // request body bytes sent (once per redirect hop)
};

/// Where the requests of one invocation go. One Endpoint serves one invocation; it is driven by one
/// thread (the engine's), except that replies of asynchronous requests arrive on the CompletionSink
/// the Endpoint was built with, from whatever thread the reply is ready on.
class Endpoint {
 public:
  virtual ~Endpoint() = default;

  /// Sends `request` with id `request_id` (unique within the invocation, chosen by the engine).
  /// Returns the reply when it is known at once: every synchronous request (log, fs, store, env), and
  /// an asynchronous one refused before it started (policy). Otherwise returns std::nullopt and the
  /// reply is delivered later through the CompletionSink, exactly once, unless cancel_all() ran
  /// first. A request type the Endpoint cannot route is answered with ErrorReply{IoError} saying so,
  /// never handed to some other capability. Never throws for a refusal; throws only on host failure
  /// (std::bad_alloc, a capability's unexpected exception), which the engine reports as IoError.
  virtual std::optional<Reply> send(uint64_t request_id, Request request) = 0;

  /// Cancels every request still outstanding. When it returns no CompletionSink::complete() call is
  /// running or will ever be made for this Endpoint, and later asynchronous requests are refused.
  /// Idempotent. Must not be called from inside CompletionSink::complete().
  virtual void cancel_all() = 0;
};

}  // namespace skillbox::bus
