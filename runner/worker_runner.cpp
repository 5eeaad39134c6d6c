// runner/worker_runner.cpp — WorkerRunner: the supervisor side of process isolation.
//
// Pieces, one file each:
//   - runner/worker_pool.h: the zygote (started by exec, restarted after it died), its control socket
//     and reader thread, and the pool of forked, sandboxed workers, which serve invocations of any
//     limits and any tenant;
//   - runner/worker_supervision.h: one invocation in one worker, supervised on the calling thread
//     (frames in and out, the host's capabilities, the deadline, cancel, the worker's crimes);
//   - this file: run() — the tenant, the checks before anything starts, the sources, a worker, and a
//     thread for observed runs — and the audit record.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/errno_text.h"
#include "isolation/sandbox.h"
#include "runner/invocation_setup.h"
#include "runner/js_thread_pool.h"
#include "runner/source_cache.h"
#include "runner/worker_pool.h"
#include "runner/worker_supervision.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

using Clock = std::chrono::steady_clock;

RunResult failure(Outcome outcome, std::string name, std::string message) {
  RunResult r;
  r.outcome = outcome;
  r.error = ErrorInfo{std::move(name), std::move(message), "", ""};
  return r;
}

}  // namespace

struct WorkerRunner::Impl {
  explicit Impl(HostOptions o)
      : options(std::move(o)),
        default_tenant(runner::make_default_tenant(options)),
        pool(runner::find_worker(options), options.worker_pool_size) {}

  /// WorkerRunner::run for the tenant it runs as.
  RunResult run(const Invocation& invocation, const TenantContext& tenant,
                std::shared_ptr<runner::ContactedOrigins> contacted);
  /// supervise() on a thread of observer_threads, waited for here (Observer callbacks never run on the
  /// caller's thread, skillbox.h). supervise() returns by the deadline plus bounded waits, so nothing
  /// is ever abandoned.
  RunResult supervise_observed(runner::Worker& worker, runner::SupervisedRun run);

  HostOptions options;
  std::shared_ptr<const TenantContext> default_tenant;  // for invocations without a tenant
  // The skill's files as served to its last worker, revalidated by stat on every run
  // (runner/source_cache.h); they travel to the worker in its invocation frame, which walks the
  // module graph and asks for what it misses. Nothing here parses skill code.
  runner::SourceCache source_cache;
  runner::JsThreadPool observer_threads{2};
  runner::WorkerPool pool;  // last: its destructor stops the zygote before the rest goes
};

RunResult WorkerRunner::Impl::run(const Invocation& invocation, const TenantContext& tenant,
                                  std::shared_ptr<runner::ContactedOrigins> contacted) {
  try {
    const Limits limits = runner::effective_limits(invocation, tenant);
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::milliseconds(limits.timeout_ms);
    if (invocation.cancel.cancelled())
      return failure(Outcome::cancelled, "Cancelled",
                     "the run was cancelled by its caller before it started");
    if (auto refused = runner::refuse_before_start(invocation, tenant)) return *std::move(refused);
    const Skill& skill = invocation.skill;
    // The entry only (and what was served last time): the worker walks the graph (docs/isolation.md
    // "What the supervisor does").
    auto sources = source_cache.serve_entry(skill.dir(), skill.manifest().entry, limits);
    if (!sources) return failure(Outcome::invalid, "InvalidSkill", sources.error().message);
    Result<runner::Worker> worker = pool.acquire();
    if (!worker) return failure(Outcome::internal, "IsolationUnavailable", worker.error().message);
    runner::SupervisedRun supervised{
        invocation,          tenant, options, limits, start, deadline, std::move(*sources), &source_cache,
        std::move(contacted)};
    if (invocation.observer.empty()) return runner::supervise(*worker, pool, std::move(supervised));
    return supervise_observed(*worker, std::move(supervised));
  } catch (const std::exception& e) {
    return failure(Outcome::internal, "InternalError",
                   std::string("skillbox failed to run the skill: ") + e.what());
  }
}

RunResult WorkerRunner::Impl::supervise_observed(runner::Worker& worker, runner::SupervisedRun run) {
  std::mutex m;
  std::condition_variable done_cv;
  std::optional<RunResult> result;
  const bool started = observer_threads.submit([&] {
    RunResult r = runner::supervise(worker, pool, std::move(run));
    std::lock_guard<std::mutex> lock(m);
    result = std::move(r);
    done_cv.notify_all();
  });
  if (!started) {
    worker.kill();
    return failure(Outcome::internal, "InternalError", "could not start a thread to supervise the worker");
  }
  std::unique_lock<std::mutex> lock(m);
  done_cv.wait(lock, [&] { return result.has_value(); });
  return std::move(*result);
}

WorkerRunner::WorkerRunner(HostOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

WorkerRunner::~WorkerRunner() = default;

RunResult WorkerRunner::run(const Invocation& invocation) {
  return runner::run_audited(invocation, *impl_->default_tenant,
                             [this](const Invocation& inv, const TenantContext& tenant,
                                    std::shared_ptr<runner::ContactedOrigins> contacted) {
                               return impl_->run(inv, tenant, std::move(contacted));
                             });
}

Result<void> WorkerRunner::check_support(const HostOptions& options) {
  const std::filesystem::path path = runner::find_worker(options);
  if (access(path.c_str(), X_OK) != 0) {
    return Error{"process isolation: the worker executable " + path.string() + " is missing (" +
                 base::errno_text(errno) +
                 "); set HostOptions::worker_path (with CMake: $<TARGET_FILE:skillbox::worker>), or "
                 "choose in-process isolation explicitly (InProcessRunner; --isolation=inprocess)"};
  }
  isolation::Result<isolation::PreparedSandbox> prepared = isolation::prepare_sandbox();
  if (!prepared) return Error{isolation::describe(prepared.error())};
  return {};
}

std::vector<int> WorkerRunner::pooled_worker_pids() const {
  return impl_->pool.pooled_pids();
}

int WorkerRunner::zygote_pid() const {
  return impl_->pool.zygote_pid();
}

}  // namespace skillbox
