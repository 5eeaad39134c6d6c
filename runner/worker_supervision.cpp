// runner/worker_supervision.cpp — supervise(): one invocation in one worker (worker_supervision.h).
//
// Who owns what, all on the supervising thread unless said otherwise: the Supervision object owns the
// worker's socket reads (FrameReader), the HostEndpoint and its capabilities, the memory budget and the
// live run. The RelaySink is written by the http I/O thread (complete) and by the cancel callback
// (wake); `cancel_requested_` is the only other state another thread touches.
#include "runner/worker_supervision.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>

#include "base/errno_text.h"
#include "base/sanitizer.h"
#include "bus/codec.h"
#include "bus/memory_budget.h"
#include "bus/stop_token.h"
#include "bus/worker_transport.h"
#include "engine/skill_files.h"
#include "isolation/sandbox.h"
#include "runner/host_endpoint.h"
#include "runner/invocation_setup.h"
#include "runner/live_run.h"
#include "runner/relay_sink.h"
#include "runner/skill_reader.h"

namespace skillbox::runner {
namespace {

using Clock = std::chrono::steady_clock;

/// How long after the deadline a worker may still send the timeout result its own engine noticed
/// before it is killed. Short: a worker stuck in a native call is killed this late at most. Longer in
/// an instrumented build, whose worker (a ThreadSanitizer process above all) can take more than 20 ms
/// to notice its deadline and write the result: killed first, its result's usage would be lost.
constexpr std::chrono::milliseconds kKillGrace{base::kSanitizerBuild ? 200 : 20};

/// The largest frame a worker may send for an invocation with `memory_bytes` of heap. Everything a
/// frame carries (a request's body, a log line, the result) was a value in the worker's heap, and a
/// string of n UTF-16 units is at most 3n bytes of UTF-8: twice the heap plus room for the envelope
/// covers every honest frame. A larger one comes from a worker that was taken over, and refusing it
/// before it is buffered keeps the supervisor's memory within a multiple of the run's limit (one
/// 250 MiB log frame at memory_mb 16 once took the supervisor to 1 GB).
size_t max_frame_from_worker(uint64_t memory_bytes) {
  constexpr uint64_t kEnvelopeBytes = 1024 * 1024;
  return static_cast<size_t>(std::min<uint64_t>(bus::kMaxFrameBytes, 2 * memory_bytes + kEnvelopeBytes));
}

RunResult failure(Outcome outcome, std::string name, std::string message) {
  RunResult r;
  r.outcome = outcome;
  r.error = ErrorInfo{std::move(name), std::move(message), "", ""};
  return r;
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

/// What the worker has told the supervisor so far.
struct WorkerState {
  uint64_t last_id = 0;
  std::string last_request;
  bus::ProgressFrame progress;
  std::optional<bus::ResultFrame> result;
  std::set<uint64_t> pending_async;
  std::string violation;  // set: the worker broke the protocol and is killed
};

std::string post_mortem_text(const WorkerState& s) {
  std::string text = "last reported: " + std::to_string(s.progress.steps) + " steps, heap peak " +
                     std::to_string(s.progress.heap_peak_bytes) + " bytes";
  text += s.last_request.empty() ? ", no host request" : ", last host request " + s.last_request;
  return text;
}

/// Writes the invocation frame. First thing of a supervision: the worker wakes up and decodes it while
/// the host side is set up (a pooled worker is asleep until it arrives; waking it takes tens of
/// microseconds). A failed write is reported once that is done, like any other end of the run.
Result<void> send_invocation(const Worker& w, SupervisedRun& run) {
  bus::InvocationFrame frame;
  const Manifest& manifest = run.invocation.skill.manifest();
  frame.sources = run.sources.pool;
  frame.format = manifest.format;
  frame.skill_id = manifest.id;
  frame.memory_bytes = run.limits.memory_bytes;
  frame.steps = run.limits.steps;
  frame.stack_bytes = run.limits.stack_bytes;
  frame.timeout_ms = run.limits.timeout_ms;
  frame.deadline_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(run.deadline.time_since_epoch()).count());
  frame.export_name = run.invocation.export_name;
  frame.input_json = run.invocation.input_json;
  frame.fetch = manifest.permissions.http.fetch;
  if (frame.format == SkillFormat::openhuman) frame.db_quota_bytes = manifest.permissions.db.quota_bytes;
  const bus::Bytes bytes = bus::encode_invocation(frame);
  const bus::Bytes* frames[] = {&bytes};
  return bus::write_frames(w.socket.get(), frames, run.deadline);
}

uint64_t size_of(const bus::SkillSources& sources) {
  uint64_t bytes = 0;
  for (const auto& [name, text] : sources.files) bytes += name.size() + text.size();
  return bytes;
}

class Supervision {
 public:
  Supervision(Worker& w, WorkerPool& pool, SupervisedRun run)
      : w_(w),
        pool_(pool),
        run_(std::move(run)),
        source_bytes_(size_of(run_.sources.pool)),
        sent_(send_invocation(w, run_)),
        stop_(run_.deadline),
        budget_(run_.limits.memory_bytes),
        sources_held_(&budget_),
        live_(run_.invocation.observer),
        endpoint_(make_invocation_context(run_.invocation, run_.options, run_.tenant, run_.contacted), sink_,
                  stop_, &budget_),
        frames_in_(max_frame_from_worker(run_.limits.memory_bytes)) {
    // limits.memory_mb covers the worker's heap (as it last reported it) plus the host buffers held
    // here for it, as in-process (bus/memory_budget.h); the worker's own rlimit is the wall behind it.
    (void)sources_held_.charge(source_bytes_);  // within the limit: the source cache capped them
    // Log lines and host-call events reach the observer from this thread as the worker's request frames
    // are served (HostEndpoint::observe); close() in finish() keeps them from running after run().
    endpoint_.require_owner(run_.invocation.skill.dir());
    endpoint_.observe(live_);
    endpoint_.serve_db_in_worker();
    // Cancellation from another thread: the token first, so that a request being served right now (a
    // wait for the workspace lock or the store's write lock) ends at once; then a flag and a wake-up of
    // the poll, where the worker is killed.
    cancel_sub_ = run_.invocation.cancel.subscribe([this] {
      stop_.raise();
      cancel_requested_.store(true, std::memory_order_release);
      sink_.wake();
    });
  }

  RunResult run() {
    if (!sink_.valid()) {
      w_.kill();
      return finish(
          failure(Outcome::internal, "InternalError", "eventfd failed: " + base::errno_text(errno)));
    }
    live_.event(RunEvent::Kind::started, run_.invocation.export_name);
    if (!sent_) return not_taken();
    for (;;) {
      if (cancel_requested_.load(std::memory_order_acquire)) return cancelled();
      relay_replies();
      drain_frames();
      if (!state_.violation.empty()) return violation(state_.violation);
      if (state_.result) return from_result();
      if (closed_) return after_close();
      if (Clock::now() >= run_.deadline + kKillGrace) return killed_at_deadline();
      wait_for_worker();
    }
  }

 private:
  // ---- ends of the run ------------------------------------------------------------------------------

  RunResult finish(RunResult r) {
    keep_sources();
    stop_.raise();
    endpoint_.cancel_all();
    live_.close();
    // The worker's own counters; the endpoint adds the host's (host calls, http bytes, logs, events).
    const Usage worker = r.usage;
    endpoint_.report(r);
    r.usage.steps = worker.steps;
    r.usage.heap_peak_bytes = worker.heap_peak_bytes;
    r.usage.cpu_ms = worker.cpu_ms;
    r.usage.timers_dropped = worker.timers_dropped;
    r.usage.unhandled_rejections = worker.unhandled_rejections;
    r.usage.wall_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - run_.start).count());
    return r;
  }

  void post_mortem(RunResult& r, std::optional<int> status) const {
    CrashInfo c;
    c.steps = state_.progress.steps;
    c.heap_peak_bytes = state_.progress.heap_peak_bytes;
    c.last_request = state_.last_request;
    if (status && WIFSIGNALED(*status)) {
      c.signal = signal_name(WTERMSIG(*status));
      c.core_dumped = WCOREDUMP(*status);
    } else if (status && WIFEXITED(*status)) {
      c.exit_code = WEXITSTATUS(*status);
    }
    r.usage.steps = c.steps;
    r.usage.heap_peak_bytes = c.heap_peak_bytes;
    r.crash = std::move(c);
  }

  RunResult crashed(std::string message, std::optional<int> status) {
    RunResult r = failure(Outcome::crashed, "WorkerCrashed", std::move(message));
    post_mortem(r, status);
    return finish(std::move(r));
  }

  RunResult violation(const std::string& what) {
    w_.kill();
    const std::optional<int> status = pool_.exit_status(w_);
    return crashed("the worker process broke the frame protocol and was killed: " + what + " (" +
                       post_mortem_text(state_) + ")",
                   status);
  }

  RunResult not_taken() {
    w_.kill();
    if (Clock::now() >= run_.deadline) {
      return finish(failure(Outcome::timeout, "TimeoutExceeded",
                            "the wall-clock deadline passed (limit is " +
                                std::to_string(run_.limits.timeout_ms) +
                                " ms) before the worker took its invocation"));
    }
    return crashed("the worker process ended before it took its invocation: " + sent_.error().message,
                   pool_.exit_status(w_));
  }

  RunResult cancelled() {
    w_.kill();
    live_.event(RunEvent::Kind::cancel_requested, "");
    return finish(failure(Outcome::cancelled, "Cancelled",
                          "the run was cancelled by its caller; the worker process was killed (" +
                              post_mortem_text(state_) + ")"));
  }

  RunResult killed_at_deadline() {
    w_.kill();
    RunResult r =
        failure(Outcome::timeout, "TimeoutExceeded",
                "the wall-clock deadline passed (limit is " + std::to_string(run_.limits.timeout_ms) +
                    " ms); the worker process was killed (" + post_mortem_text(state_) + ")");
    post_mortem(r, std::nullopt);
    r.crash->signal = "SIGKILL";
    return finish(std::move(r));
  }

  // The worker's result frame, checked: only the supervisor may say a worker crashed, a code must be
  // one of the host's, and the value follows RunResult::value_json's contract whatever the worker says.
  RunResult from_result() {
    // Anything after the result is ignored: the worker is done and is killed now, so it cannot go on
    // using CPU, whatever it does after its last frame.
    w_.kill();
    bus::ResultFrame& got = *state_.result;
    RunResult r;
    r.outcome = got.outcome;
    r.value_json = std::move(got.value_json);
    r.error = std::move(got.error);
    r.usage.cpu_ms = got.cpu_ms;
    r.usage.steps = got.steps;
    r.usage.heap_peak_bytes = got.heap_peak_bytes;
    r.usage.timers_dropped = got.timers_dropped;
    r.usage.unhandled_rejections = got.unhandled_rejections;
    if (r.outcome == Outcome::crashed) return violation("a result frame with outcome crashed");
    if (r.outcome == Outcome::ok && r.error) r.error.reset();
    // A code comes from the host's own error table (Session::describe); a worker that claims another
    // one is not believed, though the rest of its description is the skill's text anyway.
    if (r.error && !r.error->code.empty() && !bus::is_error_errno(r.error->code)) r.error->code.clear();
    // A value with ok, and with error only for a bundle (a failing tool's ToolResult,
    // docs/openhuman.md "The lifecycle").
    const bool bundle = run_.invocation.skill.manifest().format == SkillFormat::openhuman;
    if (r.outcome != Outcome::ok && !(r.outcome == Outcome::error && bundle)) r.value_json.clear();
    // The bundle's database: stored only after ok or error, then its lease is released.
    if (Result<void> stored = endpoint_.finish_db(r.outcome, std::move(got.db_image)); !stored)
      r = failure(Outcome::internal, "DbStoreFailed",
                  "the run ended " + std::string(to_string(r.outcome)) +
                      " but its database could not be stored: " + stored.error().message);
    return finish(std::move(r));
  }

  // The socket closed without a result: how the process ended says what happened.
  RunResult after_close() {
    if (frames_in_.pending_bytes() > 0)
      return violation("the socket closed in the middle of a frame (" +
                       std::to_string(frames_in_.pending_bytes()) + " bytes of it arrived)");
    const std::optional<int> status = pool_.exit_status(w_);
    if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == bus::kWorkerExitOutOfMemory) {
      RunResult r =
          failure(Outcome::memory_limit, "MemoryLimitExceeded",
                  "the worker process ran out of memory outside the engine's heap (its address-space "
                  "limit derives from limits.memory_mb = " +
                      std::to_string(run_.limits.memory_bytes / (1024 * 1024)) + ")");
      post_mortem(r, status);
      return finish(std::move(r));
    }
    return crashed(how_it_ended(status) + " (" + post_mortem_text(state_) + ")", status);
  }

  static std::string how_it_ended(std::optional<int> status) {
    if (!status)
      return "the worker process ended without a result (its exit status is unknown: the zygote died)";
    if (WIFSIGNALED(*status)) {
      std::string how = "the worker process was killed by " + signal_name(WTERMSIG(*status));
      if (WTERMSIG(*status) == SIGSYS) how += " (a system call its seccomp filter forbids)";
      if (WTERMSIG(*status) == SIGXCPU || WTERMSIG(*status) == SIGKILL)
        how += " (its CPU-time rlimit, or killed from outside)";
      return how;
    }
    if (WIFEXITED(*status)) {
      const int code = WEXITSTATUS(*status);
      std::string how = "the worker process exited with status " + std::to_string(code) + " without a result";
      if (code >= isolation::kSandboxExitBase &&
          code <= isolation::kSandboxExitBase + static_cast<int>(isolation::kLastStep))
        how += std::string(" (sandbox step ") +
               isolation::step_name(static_cast<isolation::Step>(code - isolation::kSandboxExitBase)) +
               " failed)";
      return how;
    }
    return "the worker process ended without a result";
  }

  // ---- frames ---------------------------------------------------------------------------------------

  void send_reply(uint64_t id, const bus::Reply& reply) {
    const bus::Bytes bytes = bus::encode_reply(id, reply);
    const bus::Bytes* frames[] = {&bytes};
    // A worker that does not read its replies is killed at the deadline like any late worker.
    (void)bus::write_frames(w_.socket.get(), frames, run_.deadline + kKillGrace);
  }

  // Asynchronous replies first: their requests were sent before anything still unread. Once the
  // invocation must stop (a limit, the deadline) nothing reaches the worker any more: a reply finished
  // at the deadline (an http transfer cut off by it: `Timeout`) would otherwise settle a promise and run
  // the skill's `catch` after its limit. The worker's engine ends the run itself (its deadline is this
  // one, InvocationFrame::deadline_ns) or is killed kKillGrace later.
  void relay_replies() {
    for (auto& [id, reply] : sink_.take()) {
      if (state_.pending_async.erase(id) != 0 && !stop_.stop_requested()) send_reply(id, reply);
    }
  }

  // Every frame already buffered, until the result or a violation.
  void drain_frames() {
    bus::Bytes frame;
    while (!state_.result && state_.violation.empty() && frames_in_.next(frame)) {
      Result<bus::FromWorker> decoded = bus::decode_from_worker(frame);
      if (!decoded) {
        state_.violation = decoded.error().message;
        return;
      }
      if (auto* req = std::get_if<bus::RequestFrame>(&*decoded)) {
        serve(*req);
      } else if (auto* progress = std::get_if<bus::ProgressFrame>(&*decoded)) {
        state_.progress = *progress;
        budget_.set_engine_bytes(progress->heap_bytes);
      } else {
        state_.result = std::move(std::get<bus::ResultFrame>(*decoded));
      }
    }
  }

  void serve(bus::RequestFrame& req) {
    if (req.id <= state_.last_id) {
      state_.violation = "request id " + std::to_string(req.id) + " after id " +
                         std::to_string(state_.last_id) + " (ids must increase)";
      return;
    }
    state_.last_id = req.id;
    state_.last_request = std::string(bus::request_type_name(req.request));
    // After a limit no request is served and none is answered (see relay_replies); a worker waiting for
    // the answer of a synchronous one ends at its deadline.
    if (stop_.stop_requested()) return;
    if (auto* sources = std::get_if<bus::SourcesRequest>(&req.request)) {
      std::optional<bus::Reply> reply = serve_sources(*sources);
      if (reply && !stop_.stop_requested()) send_reply(req.id, *reply);
      return;
    }
    const bool async = std::holds_alternative<bus::HttpRequest>(req.request);
    std::optional<bus::Reply> reply;
    try {
      reply = endpoint_.send(req.id, std::move(req.request));
    } catch (const std::exception& e) {
      reply = bus::ErrorReply{bus::ErrorCode::IoError,
                              std::string("the host failed to handle the request: ") + e.what()};
    }
    if (reply) {
      // A request served while the deadline passed (a long statement, a lock wait cut off by it) is not
      // answered either: its reply is the limit's, and no skill code may see it.
      if (!stop_.stop_requested()) send_reply(req.id, *reply);
    } else if (async) {
      state_.pending_async.insert(req.id);
    } else if (!stop_.stop_requested()) {
      send_reply(req.id, bus::ErrorReply{bus::ErrorCode::IoError,
                                         "internal error: a synchronous request got no reply"});
    }
  }

  // ---- the skill's sources --------------------------------------------------------------------------

  // Why `name`, asked for by the worker, is not a name an honest walk asks for; empty if it is.
  std::string bad_source_name(const std::string& name) const {
    if (name.find('\0') != std::string::npos) return "a name with a NUL byte";
    if (name.size() > 4096) return "a name of " + std::to_string(name.size()) + " bytes";
    auto normal = engine::normalize_relative(name);
    if (!normal || *normal != name)
      return engine::quote_source_name(name) + ", which is not a relative name in normal form";
    if (!engine::is_module_source_name(name))
      return engine::quote_source_name(name) + ", which is not a module source name (.js, .mjs, .cjs)";
    if (sources_asked_.count(name) != 0) return engine::quote_source_name(name) + " again";
    return {};
  }

  // A SourcesRequest: the worker's graph walk asks for files it does not have. The names are hostile;
  // the reads are the in-process reader's, under caps counted over the whole invocation. No reply
  // after a violation (the worker is killed).
  std::optional<bus::Reply> serve_sources(bus::SourcesRequest& req) {
    if (!sources_failed_.empty()) return bus::ErrorReply{bus::ErrorCode::InvalidArgument, sources_failed_};
    if (sources_asked_.empty()) {
      sources_asked_.insert(run_.sources.pool.entry);
      for (const auto& [name, text] : run_.sources.pool.files) sources_asked_.insert(name);
      for (const auto& [name, why] : run_.sources.pool.refused) sources_asked_.insert(name);
    }
    for (const std::string& name : req.names) {
      if (std::string bad = bad_source_name(name); !bad.empty()) {
        state_.violation = "a SourcesRequest for " + bad;
        return std::nullopt;
      }
      sources_asked_.insert(name);
    }
    if (!source_reader_) {
      Result<SourceReader> reader =
          SourceReader::open(run_.invocation.skill.dir(), run_.limits, &system_openat2, &run_.sources.stamps);
      if (!reader) {
        sources_failed_ = reader.error().message;
        return bus::ErrorReply{bus::ErrorCode::InvalidArgument, sources_failed_};
      }
      source_reader_.emplace(std::move(*reader));
      source_reader_->count(run_.sources.pool);
    }
    bus::SkillSources read;
    if (Result<void> fetched = source_reader_->fetch(req.names, read); !fetched) {
      sources_failed_ = fetched.error().message;
      return bus::ErrorReply{bus::ErrorCode::InvalidArgument, sources_failed_};
    }
    (void)sources_held_.charge(size_of(read));  // within the limit: the reader's caps bound them
    bus::SourcesReply reply{read.files, read.refused};
    for (auto& [name, text] : read.files) run_.sources.pool.files.insert_or_assign(name, std::move(text));
    for (auto& [name, why] : read.refused) run_.sources.pool.refused.insert_or_assign(name, std::move(why));
    return reply;
  }

  // What was served goes back to the cache for the skill's next invocation, unless a cap was hit or
  // the worker broke the protocol.
  void keep_sources() {
    if (run_.source_cache == nullptr || !sources_failed_.empty() || !state_.violation.empty()) return;
    run_.source_cache->keep_served(run_.invocation.skill.dir(), run_.invocation.skill.manifest().entry,
                                   run_.limits, std::move(run_.sources));
    run_.source_cache = nullptr;
  }

  // Waits for the worker's socket, a relayed reply, the worker's exit or the deadline.
  void wait_for_worker() {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(run_.deadline + kKillGrace - Clock::now())
            .count() +
        1;
    pollfd fds[3] = {{w_.socket.get(), POLLIN, 0}, {sink_.fd(), POLLIN, 0}, {w_.pidfd.get(), POLLIN, 0}};
    const int n = ::poll(fds, 3, static_cast<int>(std::clamp<int64_t>(left, 0, 60'000)));
    if (n < 0) return;  // EINTR
    const bool exited = (fds[2].revents & POLLIN) != 0;
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0 && !exited) return;
    const bus::FrameReader::Status s = frames_in_.fill(w_.socket.get());
    if (s == bus::FrameReader::Status::error) state_.violation = frames_in_.error();
    if (s == bus::FrameReader::Status::eof) closed_ = true;
    // The process ended: whatever it wrote is buffered now (the socket still holds it).
    if (exited && s == bus::FrameReader::Status::progress && (fds[0].revents & POLLIN) == 0) closed_ = true;
  }

  Worker& w_;
  WorkerPool& pool_;
  SupervisedRun run_;  // its sources grow with what the worker is served
  const uint64_t source_bytes_;
  // Members in the order they must be built: the invocation frame is on its way before the host side
  // is set up; the cancel subscription is declared last so that it is gone before what it touches.
  Result<void> sent_;  // the invocation frame's write
  RelaySink sink_;
  bus::StopToken stop_;
  bus::MemoryBudget budget_;
  bus::HostBytes sources_held_;
  LiveRun live_;
  HostEndpoint endpoint_;
  WorkerState state_;
  bus::FrameReader frames_in_;
  bool closed_ = false;
  std::set<std::string> sources_asked_;        // the entry, the preloaded names, every name asked for
  std::optional<SourceReader> source_reader_;  // opened at the first SourcesRequest
  std::string sources_failed_;                 // set: a cap was exceeded; every later request is refused
  std::atomic<bool> cancel_requested_{false};
  CancelToken::Subscription cancel_sub_;
};

}  // namespace

RunResult supervise(Worker& w, WorkerPool& pool, SupervisedRun run) {
  Supervision supervision(w, pool, std::move(run));
  return supervision.run();
}

}  // namespace skillbox::runner
