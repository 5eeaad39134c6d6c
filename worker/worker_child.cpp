#include "worker/worker_child.h"

#include <malloc.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "bundle_db/db_engine.h"
#include "bus/codec.h"
#include "bus/endpoint.h"
#include "bus/memory_budget.h"
#include "bus/stop_token.h"
#include "bus/worker_frames.h"
#include "bus/worker_transport.h"
#include "compat/bundle_flavor.h"
#include "engine/module_graph.h"
#include "engine/module_requests.h"
#include "engine/reply_inbox.h"
#include "engine/session.h"
#include "isolation/rlimits.h"
#include "isolation/sandbox.h"

namespace skillbox::worker {
namespace {

using bus::kWorkerExitBadFrame;
using bus::kWorkerExitOutOfMemory;
using bus::read_frame_blocking;
using bus::write_frames;

using Clock = std::chrono::steady_clock;

// The worker trusts its supervisor, but a frame it cannot use still ends it cleanly (no skill code
// runs on a half-understood invocation): exit without a result, the supervisor reports `crashed`.
[[noreturn]] void give_up() {
  _exit(kWorkerExitBadFrame);
}

/// The worker's bus::Endpoint: request frames out, reply frames in. A bundle's db statements are the
/// exception: they run here, on an in-memory copy of the skill's database that the supervisor sends
/// once (DbOpenRequest) and takes back in the result frame (docs/openhuman.md "db").
class WorkerEndpoint final : public bus::Endpoint {
 public:
  WorkerEndpoint(int fd, engine::ReplyInbox& inbox, Clock::time_point deadline)
      : fd_(fd), inbox_(inbox), deadline_(deadline) {}

  /// A bundle's database: its quota and the run's memory limit, the invocation's stop token and
  /// memory budget (both must outlive this object).
  void set_db(bundle_db::DbSettings settings, const bus::StopToken& stop, bus::MemoryBudget& budget) {
    db_settings_ = settings;
    stop_ = &stop;
    budget_ = &budget;
  }

  /// The database's bytes if the run changed them (nullopt: unchanged or never opened).
  std::optional<bus::Bytes> finish_db() { return db_ ? db_->finish() : std::nullopt; }

  void set_progress(uint64_t steps, uint64_t heap, uint64_t heap_peak) {
    progress_.steps = steps;
    progress_.heap_bytes = heap;
    progress_.heap_peak_bytes = heap_peak;
  }

  std::optional<bus::Reply> send(uint64_t request_id, bus::Request request) override {
    if (auto* db = std::get_if<bus::DbRequest>(&request)) return serve_db(request_id, *db);
    const bool async = std::holds_alternative<bus::HttpRequest>(request);
    const bus::Bytes progress = bus::encode_progress(progress_);
    // The engine's ids follow the ids of the SourcesRequests sent before it started (fetch_sources):
    // the ids on the wire keep increasing.
    const bus::Bytes frame = bus::encode_request(request_id + id_base_, request);
    const bus::Bytes* frames[] = {&progress, &frame};
    if (!write_frames(fd_, frames, Clock::time_point::max())) give_up();
    if (async) return std::nullopt;  // the reply arrives through the inbox pump
    // A synchronous request: wait for its reply, until the deadline at most (the supervisor answers
    // nothing after it); replies of asynchronous requests that arrive first go to the inbox. The
    // engine sees the deadline when this returns and ends the run as `timeout`, so the skill never
    // sees this error (engine::Session::call).
    for (;;) {
      if (!wait_readable(deadline_))
        return bus::ErrorReply{bus::ErrorCode::Timeout,
                               "the request did not finish before the invocation's deadline"};
      bus::ReplyFrame reply = read_reply();
      if (reply.id == request_id) return std::move(reply.reply);
      inbox_.complete(reply.id, std::move(reply.reply));
    }
  }

  void cancel_all() override {}  // the process ends with the invocation

  /// engine::FetchSources for the graph walk, before the engine starts: asks the supervisor for
  /// `names` and adds what it answers to `pool`. Its refusal (a cap) is the walk's error.
  Result<void> fetch_sources(const std::vector<std::string>& names, bus::SkillSources& pool) {
    const uint64_t id = ++id_base_;
    const bus::Bytes frame = bus::encode_request(id, bus::SourcesRequest{names});
    const bus::Bytes* frames[] = {&frame};
    if (!write_frames(fd_, frames, Clock::time_point::max())) give_up();
    if (!wait_readable(deadline_))
      return Error{"the invocation's deadline passed before the skill's sources were read"};
    bus::ReplyFrame reply = read_frame();
    if (reply.id != id) give_up();  // nothing else is pending before the engine starts
    if (auto* refused = std::get_if<bus::ErrorReply>(&reply.reply)) return Error{std::move(refused->message)};
    auto* got = std::get_if<bus::SourcesReply>(&reply.reply);
    if (got == nullptr) give_up();
    for (auto& [name, text] : got->files) pool.files.insert_or_assign(name, std::move(text));
    for (auto& [name, why] : got->refused) pool.refused.insert_or_assign(name, std::move(why));
    return {};
  }

  /// The inbox pump: delivers every reply that arrives until `until` (or what is there already).
  void pump(Clock::time_point until) {
    bool delivered = false;
    for (;;) {
      int timeout = 0;
      if (!delivered) {
        const auto now = Clock::now();
        if (until > now) {
          const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
          timeout = static_cast<int>(std::min<int64_t>(ms, 60'000));
        }
      }
      pollfd p{fd_, POLLIN, 0};
      const int n = ::poll(&p, 1, timeout);
      if (n < 0) continue;  // EINTR
      if (n == 0) {
        if (delivered || Clock::now() >= until) return;
        continue;
      }
      bus::ReplyFrame reply = read_reply();
      inbox_.complete(reply.id, std::move(reply.reply));
      delivered = true;
    }
  }

 private:
  /// Waits until the socket has bytes to read; false once `until` passed without any.
  bool wait_readable(Clock::time_point until) const {
    for (;;) {
      const auto now = Clock::now();
      if (now >= until) return false;
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
      pollfd p{fd_, POLLIN, 0};
      const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(ms, 60'000)));
      if (n > 0) return true;
    }
  }

  /// A db statement, run here. Nothing after a limit, as the host's endpoint would refuse it.
  bus::Reply serve_db(uint64_t request_id, const bus::DbRequest& r) {
    if (stop_ == nullptr || db_settings_.quota_bytes == 0)
      return bus::ErrorReply{bus::ErrorCode::PermissionDenied,
                             "db belongs to the OpenHuman bundle API; this skill is not a bundle"};
    if (stop_->stop_requested())
      return bus::ErrorReply{bus::ErrorCode::Timeout,
                             "the invocation is ending (a limit was reached or its deadline passed); the "
                             "host served nothing"};
    if (!db_) {
      // The same request id: the engine's ids stay increasing on the wire (this statement never
      // travels itself).
      std::optional<bus::Reply> opened = send(request_id, bus::DbOpenRequest{});
      if (!opened) give_up();
      if (auto* refused = std::get_if<bus::ErrorReply>(&*opened)) return std::move(*refused);
      auto* image = std::get_if<bus::BytesReply>(&*opened);
      if (image == nullptr) give_up();
      db_ = std::make_unique<bundle_db::DbEngine>(std::move(image->data), db_settings_, *stop_, budget_);
    }
    return db_->handle(r);
  }

  /// The next reply frame, its id as on the wire.
  bus::ReplyFrame read_frame() {
    Result<bus::Bytes, Error> bytes = read_frame_blocking(fd_, bus::kMaxFrameBytes);
    if (!bytes) give_up();
    Result<bus::ToWorker> frame = bus::decode_to_worker(*bytes);
    if (!frame || !std::holds_alternative<bus::ReplyFrame>(*frame)) give_up();
    return std::move(std::get<bus::ReplyFrame>(*frame));
  }

  /// The next reply to one of the engine's requests, its id the engine's.
  bus::ReplyFrame read_reply() {
    bus::ReplyFrame reply = read_frame();
    if (reply.id <= id_base_) give_up();
    reply.id -= id_base_;
    return reply;
  }

  int fd_;
  engine::ReplyInbox& inbox_;
  Clock::time_point deadline_;
  bus::ProgressFrame progress_;
  uint64_t id_base_ = 0;  // ids the SourcesRequests took before the engine started
  bundle_db::DbSettings db_settings_{0, 0};
  const bus::StopToken* stop_ = nullptr;
  bus::MemoryBudget* budget_ = nullptr;
  std::unique_ptr<bundle_db::DbEngine> db_;
};

// A pooled worker waits for its invocation, and every page its run then touches first is a page fault
// on the caller's path. The heap's first pages are faulted in while it waits instead: enough for a small
// run's frames, engine arena chunks and host strings, kept by malloc afterwards (the process is
// one-shot, so nothing is trimmed back). Measured against none: p50 about 10 us lower, throughput
// unchanged (docs/benchmarks.md, worker mode); more than this costs more CPU than it saves.
constexpr size_t kPrefaultHeapBytes = 96 * 1024;

void prefault_heap() {
  mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
  constexpr size_t kPiece = 16 * 1024;  // under malloc's mmap threshold: from the heap
  void* pieces[kPrefaultHeapBytes / kPiece] = {};
  for (void*& p : pieces) {
    p = std::malloc(kPiece);  // NOLINT(cppcoreguidelines-no-malloc): returned to malloc below
    if (p != nullptr) std::memset(p, 0, kPiece);
  }
  for (size_t i = std::size(pieces); i-- > 0;) std::free(pieces[i]);  // NOLINT(cppcoreguidelines-no-malloc)
}

/// The invocation's own rlimits, from the frame: the worker was forked with the host's ceilings.
/// soft = hard, and without CAP_SYS_RESOURCE they never go back up.
bool lower_rlimits(const bus::InvocationFrame& frame, const isolation::MemoryBaseline& baseline) {
  const isolation::RlimitPlan plan =
      isolation::plan_worker_rlimits({frame.memory_bytes, frame.timeout_ms}, baseline, bus::kWorkerSocketFd);
  return isolation::lower_invocation_rlimits(plan).ok();
}

/// Writes the result frame: 0, or kWorkerExitBadFrame when the socket refuses it.
int send_result(int fd, const bus::ResultFrame& result) {
  const bus::Bytes out = bus::encode_result(result);
  const bus::Bytes* frames[] = {&out};
  return write_frames(fd, frames, Clock::time_point::max()) ? 0 : kWorkerExitBadFrame;
}

/// The result of a run whose module graph could not be read: `invalid` (a cap, a refused file), or
/// `timeout` once the deadline has passed.
bus::ResultFrame graph_failure(const Error& error, Clock::time_point deadline) {
  bus::ResultFrame result;
  const bool late = Clock::now() >= deadline;
  result.outcome = late ? Outcome::timeout : Outcome::invalid;
  result.error = ErrorInfo{late ? "TimeoutExceeded" : "InvalidSkill", error.message, "", ""};
  return result;
}

/// The result of a finished session, with the bundle database's image when the supervisor would keep
/// it (ok or error: docs/openhuman.md "db").
bus::ResultFrame result_of(engine::SessionResult r, WorkerEndpoint& endpoint) {
  bus::ResultFrame result;
  result.outcome = r.outcome;
  result.value_json = std::move(r.value_json);
  result.error = std::move(r.error);
  result.cpu_ms = r.usage.cpu_ms;
  result.steps = r.usage.steps;
  result.heap_peak_bytes = r.usage.heap_peak_bytes;
  result.timers_dropped = r.usage.timers_dropped;
  result.unhandled_rejections = r.usage.unhandled_rejections;
  if (r.outcome == Outcome::ok || r.outcome == Outcome::error) result.db_image = endpoint.finish_db();
  return result;
}

int run_invocation(int fd, const isolation::MemoryBaseline& baseline,
                   const std::function<void(JSContext*)>& extra_api) {
  // The pristine runtimes inherited from the zygote (engine/pristine.h) are not prefaulted: copying
  // all their pages here cost about 115 more faults per invocation than the pages a run writes.
  prefault_heap();
  Result<bus::Bytes, Error> bytes = read_frame_blocking(fd, bus::kMaxFrameBytes);
  if (!bytes) return kWorkerExitBadFrame;
  Result<bus::ToWorker> decoded = bus::decode_to_worker(*bytes);
  if (!decoded || !std::holds_alternative<bus::InvocationFrame>(*decoded)) return kWorkerExitBadFrame;
  bus::InvocationFrame frame = std::move(std::get<bus::InvocationFrame>(*decoded));
  bytes->clear();
  bytes->shrink_to_fit();
  if (!lower_rlimits(frame, baseline))
    return isolation::kSandboxExitBase + static_cast<int>(isolation::Step::rlimits);

  // The skill folder is never opened here: the sources came in the frame.
  engine::SessionParams params;
  params.call =
      engine::Call{std::move(frame.skill_id), std::move(frame.export_name), std::move(frame.input_json)};
  params.limits.memory_bytes = frame.memory_bytes;
  params.limits.steps = frame.steps;
  params.limits.stack_bytes = frame.stack_bytes;
  params.limits.timeout_ms = frame.timeout_ms;
  params.start = Clock::now();
  // The supervisor's deadline, to the nanosecond (InvocationFrame::deadline_ns); never later than the
  // limit from now, whatever the frame says.
  params.deadline = std::min(Clock::time_point(std::chrono::nanoseconds(frame.deadline_ns)),
                             params.start + std::chrono::milliseconds(frame.timeout_ms));
  engine::DeadlineFlag deadline_flag;  // no watchdog thread here: the Limiter reads the clock
  bus::StopToken stop(params.deadline);
  params.deadline_flag = &deadline_flag;
  params.stop_token = &stop;
  params.install_extra_api = extra_api;
  params.leave_runtime_to_process_exit = true;  // the process exits once the result is written
  if (frame.format == SkillFormat::openhuman) params.flavor = compat::bundle_flavor();
  params.fetch = frame.fetch;
  // The same rule as in-process: heap plus the host buffers this process holds (replies waiting in
  // the inbox) within limits.memory_mb; the address-space rlimit is the wall behind it.
  bus::MemoryBudget budget(frame.memory_bytes);
  params.memory_budget = &budget;

  engine::ReplyInbox inbox;
  WorkerEndpoint endpoint(fd, inbox, params.deadline);

  // The entry's module graph is walked here, behind the sandbox: parsing skill code is the engine's
  // business and never the supervisor's (docs/isolation.md "What the supervisor does"). The frame
  // holds the entry and whatever the supervisor had cached; the rest is asked for, file by file of
  // the graph, and read by the supervisor under the caps.
  {
    engine::ModuleRequestParser parser(params.limits);
    Result<bus::SkillSources> graph = engine::walk_module_graph(
        std::move(frame.sources), parser,
        [&endpoint](const std::vector<std::string>& names, bus::SkillSources& pool) {
          return endpoint.fetch_sources(names, pool);
        });
    if (!graph) return send_result(fd, graph_failure(graph.error(), params.deadline));
    params.sources = std::move(*graph);
  }
  if (frame.format == SkillFormat::openhuman && frame.db_quota_bytes > 0)
    endpoint.set_db(bundle_db::DbSettings{frame.db_quota_bytes, frame.memory_bytes}, stop, budget);
  inbox.set_pump([&endpoint](Clock::time_point until) { endpoint.pump(until); });
  params.report_progress = [&endpoint](uint64_t steps, uint64_t heap, uint64_t heap_peak) {
    endpoint.set_progress(steps, heap, heap_peak);
  };

  return send_result(fd, result_of(engine::run_session(std::move(params), endpoint, inbox), endpoint));
}

}  // namespace

int run_worker_child(int socket_fd, const isolation::MemoryBaseline& baseline,
                     const std::function<void(JSContext*)>& extra_api) {
  try {
    return run_invocation(socket_fd, baseline, extra_api);
  } catch (const std::bad_alloc&) {
    return kWorkerExitOutOfMemory;
  } catch (...) {
    return kWorkerExitBadFrame;
  }
}

}  // namespace skillbox::worker
