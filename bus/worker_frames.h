// bus/worker_frames.h — the frames between a supervisor and one worker process, beside the request
// and reply frames of bus/codec.h.
//
// One invocation per worker process (docs/isolation.md "Zygote protocol and frames"):
//
//   supervisor -> worker   InvocationFrame             exactly once, first
//   worker -> supervisor   RequestFrame (codec.h)      every host call; ids strictly increasing
//   supervisor -> worker   ReplyFrame (codec.h)        one per request, synchronous ones at once
//   worker -> supervisor   ProgressFrame               steps and heap peak, before each request
//   worker -> supervisor   ResultFrame                 exactly once, last; then the worker exits
//
// Log lines travel as LogRequests (they are host calls like any other), so the supervisor sees each
// one as it happens and can hand it to an observer before it answers.
//
// Same envelope and the same rules as codec.h: [version, kind, id, tag, body], MessagePack, arrays
// only, every field type- and range-checked on decode, never throws. The kinds are 2 (invocation),
// 3 (progress) and 4 (result); their tag is always 0 and their id 0. Each direction has one decoder
// that accepts exactly the kinds that direction may carry: a worker sending an invocation or a
// reply frame is refused by decode_from_worker like any other malformed frame.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "bus/codec.h"
#include "bus/messages.h"
#include "bus/skill_sources.h"
#include "skillbox/skillbox.h"

namespace skillbox::bus {

/// What a worker needs to run one invocation. Sources travel in memory (the worker opens no file);
/// limits are the effective ones (manifest lowered by the host). The bindings need no policy fact:
/// every permission is checked by the supervisor's capabilities when the request arrives. The format
/// picks the API the engine installs (an OpenHuman bundle's, compat/), which shows the skill its id.
struct InvocationFrame {
  SkillSources sources;
  SkillFormat format = SkillFormat::skillbox;
  std::string skill_id;
  uint64_t memory_bytes = 0;
  uint64_t steps = 0;
  uint64_t stack_bytes = 0;
  uint64_t timeout_ms = 0;  // the limit, for messages
  // The invocation's deadline on CLOCK_MONOTONIC (std::chrono::steady_clock), in nanoseconds since
  // that clock's epoch. The clock is the machine's, so the worker's deadline is the supervisor's very
  // instant: a reply the supervisor finished at its deadline cannot reach skill code in a worker that
  // still thinks it has time (a relative "time left" would put the worker's deadline later by the
  // time the frame took). The worker never takes more than `timeout_ms` from when it read the frame.
  uint64_t deadline_ns = 0;
  std::string export_name;
  std::string input_json;
  // An OpenHuman bundle's permissions.db.quota_bytes: the worker serves the bundle's db calls itself,
  // on an in-memory copy of its database that it asks for with a DbOpenRequest (0: not a bundle).
  uint64_t db_quota_bytes = 0;
  // permissions.http.fetch: the worker puts the WHATWG fetch globals on the skill's global object.
  bool fetch = false;

  bool operator==(const InvocationFrame&) const = default;
};

/// What the worker last knew about itself, for the post-mortem of a worker that is killed.
struct ProgressFrame {
  uint64_t steps = 0;
  uint64_t heap_bytes = 0;  // the heap in use now: the supervisor counts it in the memory budget
  uint64_t heap_peak_bytes = 0;

  bool operator==(const ProgressFrame&) const = default;
};

/// The engine's part of a RunResult. Logs and the host-side counters (host_calls, http bytes) are
/// the supervisor's own and never taken from the worker.
struct ResultFrame {
  Outcome outcome = Outcome::internal;
  std::string value_json;
  std::optional<ErrorInfo> error;
  uint64_t cpu_ms = 0;
  uint64_t steps = 0;
  uint64_t heap_peak_bytes = 0;
  uint64_t timers_dropped = 0;
  uint64_t unhandled_rejections = 0;
  // The bundle's database after the run, only when the run changed it and ended ok or error (the
  // supervisor stores it only then, and only if it sent one: docs/openhuman.md "db"). At most the
  // run's memory limit.
  std::optional<Bytes> db_image;
};

using FromWorker = std::variant<RequestFrame, ProgressFrame, ResultFrame>;
using ToWorker = std::variant<InvocationFrame, ReplyFrame>;

/// The type name of `request` as messages show it ("FsReadFileRequest").
[[nodiscard]] std::string_view request_type_name(const Request& request);

/// Encoders; deterministic; throw only std::bad_alloc.
[[nodiscard]] Bytes encode_invocation(const InvocationFrame& frame);
[[nodiscard]] Bytes encode_progress(const ProgressFrame& frame);
[[nodiscard]] Bytes encode_result(const ResultFrame& frame);

/// Decodes one frame a worker sent: a request, progress or result frame. Everything else — any other
/// kind, a malformed or truncated frame, a value out of range (an outcome beyond `internal`) — is an
/// Error naming what was wrong. Never throws.
[[nodiscard]] Result<FromWorker> decode_from_worker(std::span<const uint8_t> frame) noexcept;

/// Decodes one frame the supervisor sent: an invocation or a reply frame. In an invocation frame
/// the file names must be unique (a repeated name is an Error). Never throws.
[[nodiscard]] Result<ToWorker> decode_to_worker(std::span<const uint8_t> frame) noexcept;

}  // namespace skillbox::bus
