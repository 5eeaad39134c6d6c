// runner/in_process_runner.cpp — InProcessRunner: each invocation on a pool thread with a known stack,
// watched by the calling thread.
//
// On the pool thread the runner reads the skill's sources (runner/skill_reader.h), composes the
// invocation's capabilities behind a HostEndpoint whose asynchronous replies go to a ReplyInbox, and
// runs the engine with the three; afterwards the HostEndpoint reports its counters and logs.
//
// The calling thread is the watchdog of its invocation: it waits for the result until the deadline,
// then raises the invocation's DeadlineFlag, which makes the allocator refuse every further allocation
// (stopping native loops that allocate but never reach the interrupt handler). If the JS thread still
// has not finished kAbandonGrace later (a native loop that neither allocates nor polls, see
// docs/limits.md), run() returns `timeout` without it; the thread finishes on its own, then frees its
// runtime and returns to the pool. Everything the abandoned thread uses is owned by its Job.
//
// An abandoned run keeps a core busy and its heap allocated until its native call returns, so the
// runner counts them (abandoned_runs()) and, at HostOptions::max_abandoned_runs, refuses to start more
// runs until one finishes: a skill that is abandoned on every call cannot pile up stray threads.
//
// Cancellation (CancelToken) is the deadline brought forward by the caller: the token's callback raises
// the StopToken and the DeadlineFlag (marked as a cancellation, so the engine records `cancelled`) and
// wakes the watchdog, which then waits kAbandonGrace as it does after a deadline.
//
// Live output: a LiveRun per invocation (runner/live_run.h) passes log lines and events to the
// embedder's Observer from the JS thread and keeps a copy of every line, so a run that is abandoned
// still returns the lines it wrote. The watchdog closes it before run() returns: no callback after.
//
// Nothing happens after a limit: every invocation has a bus::StopToken (its deadline, raised by the
// engine's Limiter at the first limit and by the watchdog), which the HostEndpoint checks before it
// dispatches a request and the capabilities check between the steps of a long operation.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "base/mutex.h"
#include "bus/memory_budget.h"
#include "bus/stop_token.h"
#include "compat/bundle_flavor.h"
#include "engine/reply_inbox.h"
#include "engine/session.h"
#include "runner/host_endpoint.h"
#include "runner/invocation_setup.h"
#include "runner/js_thread_pool.h"
#include "runner/live_run.h"
#include "runner/skill_reader.h"
#include "runner/source_cache.h"
#include "runner/testing_hooks.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

/// How long after the deadline the caller still waits for the JS thread to stop by itself.
constexpr std::chrono::milliseconds kAbandonGrace{1000};

/// Abandoned runs still executing, shared by a runner and its jobs (a job may outlive the runner).
using AbandonedCount = std::shared_ptr<std::atomic<size_t>>;

struct Job {
  Job(const Invocation& inv, engine::Clock::time_point deadline, uint64_t memory_bytes, AbandonedCount count)
      : invocation(inv),
        live(inv.observer),
        stop_token(deadline),
        memory(memory_bytes),
        abandoned_count(std::move(count)) {
    invocation.observer = {};  // only `live` calls the observer, and never after run() returned
  }
  Invocation invocation;  // a copy: an abandoned job outlives the caller's invocation
  runner::LiveRun live;
  engine::ReplyInbox inbox;  // outlives the invocation's endpoint, which completes into it
  engine::DeadlineFlag deadline_flag;
  bus::StopToken stop_token;  // read by the invocation's HostEndpoint and capabilities
  bus::MemoryBudget memory;   // limits.memory_mb: the engine heap and every host buffer of the run
  base::Mutex mutex;
  std::condition_variable cv;
  bool done SKILLBOX_GUARDED_BY(mutex) = false;
  bool abandoned SKILLBOX_GUARDED_BY(mutex) = false;         // the watchdog gave up waiting
  bool cancel_requested SKILLBOX_GUARDED_BY(mutex) = false;  // set by the CancelToken's callback
  bool committing SKILLBOX_GUARDED_BY(mutex) = false;        // the JS thread is storing the bundle database
  AbandonedCount abandoned_count;
  RunResult result SKILLBOX_GUARDED_BY(mutex);
};

// Testing hook (runner/testing_hooks.h): added to every invocation's SessionParams.
struct ExtraApiHook {
  std::mutex mutex;
  std::function<void(JSContext*)> install;  // guarded by mutex
};

ExtraApiHook& extra_api_hook() {
  static ExtraApiHook hook;
  return hook;
}

std::function<void(JSContext*)> extra_api() {
  ExtraApiHook& hook = extra_api_hook();
  std::lock_guard<std::mutex> lock(hook.mutex);
  return hook.install;
}

RunResult internal_result(std::string message) {
  RunResult r;
  r.outcome = Outcome::internal;
  r.error = ErrorInfo{"InternalError", std::move(message), "", ""};
  return r;
}

RunResult cancelled_result(std::string message) {
  RunResult r;
  r.outcome = Outcome::cancelled;
  r.error = ErrorInfo{"Cancelled", std::move(message), "", ""};
  return r;
}

/// The engine's answer as the public result; the host's part (logs, events, host counters) is added
/// by HostEndpoint::report.
RunResult to_run_result(engine::SessionResult s) {
  RunResult r;
  r.outcome = s.outcome;
  r.value_json = std::move(s.value_json);
  r.error = std::move(s.error);
  r.usage.wall_ms = s.usage.wall_ms;
  r.usage.cpu_ms = s.usage.cpu_ms;
  r.usage.steps = s.usage.steps;
  r.usage.heap_peak_bytes = s.usage.heap_peak_bytes;
  r.usage.timers_dropped = s.usage.timers_dropped;
  r.usage.unhandled_rejections = s.usage.unhandled_rejections;
  return r;
}

/// Runs one invocation of `skill` on the calling (pool) thread: sources from disk (or from the
/// runner's cache, revalidated by stat: runner/source_cache.h), capabilities composed, engine.
RunResult run_on_js_thread(engine::SessionParams params, const Skill& skill,
                           runner::InvocationContext context, runner::SourceCache& cache,
                           runner::LiveRun& live, engine::ReplyInbox& inbox,
                           const std::function<bool()>& begin_commit) {
  auto sources = cache.read(skill.dir(), skill.manifest().entry, params.limits);
  if (!sources) {
    RunResult r;
    r.outcome = Outcome::invalid;
    r.error = ErrorInfo{"InvalidSkill", sources.error().message, "", ""};
    return r;
  }
  params.sources = std::move(*sources);
  live.event(RunEvent::Kind::started, params.call.export_name);
  // The sources stay in memory for the whole run (modules are compiled from them on import).
  uint64_t source_bytes = 0;
  for (const auto& [name, text] : params.sources.files) source_bytes += name.size() + text.size();
  bus::HostBytes sources_held(params.memory_budget);
  (void)sources_held.charge(source_bytes);  // within the limit: read_skill_sources capped them at it
  runner::HostEndpoint endpoint(std::move(context), inbox, *params.stop_token, params.memory_budget);
  endpoint.require_owner(skill.dir());
  endpoint.observe(live);
  RunResult r = to_run_result(engine::run_session(std::move(params), endpoint, inbox));
  // The bundle's database (docs/openhuman.md "db"): stored only after ok or error, and only if the
  // watchdog has not given up on this run (an abandoned run's caller was told `timeout`).
  const Outcome keep_if = begin_commit() ? r.outcome : Outcome::timeout;
  if (Result<void> stored = endpoint.finish_db(keep_if); !stored) {
    const std::string ended(to_string(r.outcome));
    r.outcome = Outcome::internal;
    r.value_json.clear();
    r.error = ErrorInfo{
        "DbStoreFailed",
        "the run ended " + ended + " but its database could not be stored: " + stored.error().message, "",
        ""};
  }
  endpoint.report(r);
  return r;
}

/// Why `invocation` is not started at all, if it is not: too many abandoned runs, cancelled before the
/// start, or refused by the tenant's rules (runner/invocation_setup.h).
std::optional<RunResult> refuse(const Invocation& invocation, const TenantContext& tenant, size_t stray,
                                size_t max_abandoned_runs) {
  const size_t cap = std::max<size_t>(1, max_abandoned_runs);
  if (stray >= cap) {
    RunResult r = internal_result(
        std::to_string(stray) + " abandoned run" + (stray == 1 ? " is" : "s are") +
        " still executing a native operation past its deadline (limit is " + std::to_string(cap) +
        ", HostOptions::max_abandoned_runs); no new run starts until one finishes. Raise the limit to "
        "accept more stray CPU use, or run skills in worker processes, which are killed at the deadline");
    r.error->name = "TooManyAbandonedRuns";
    return r;
  }
  if (invocation.cancel.cancelled())
    return cancelled_result("the run was cancelled by its caller before it started");
  return runner::refuse_before_start(invocation, tenant);
}

/// The engine's input for `job`, which runs `invocation` within `limits` from `start`.
engine::SessionParams session_params(const Invocation& invocation, const Limits& limits,
                                     engine::Clock::time_point start, Job& job) {
  engine::SessionParams params;
  params.call = engine::Call{invocation.skill.manifest().id, invocation.export_name, invocation.input_json};
  params.limits = limits;
  params.start = start;
  params.deadline = job.stop_token.deadline();
  params.deadline_flag = &job.deadline_flag;
  params.stop_token = &job.stop_token;
  params.memory_budget = &job.memory;
  params.install_extra_api = extra_api();
  if (invocation.skill.manifest().format == SkillFormat::openhuman) params.flavor = compat::bundle_flavor();
  params.fetch = invocation.skill.manifest().permissions.http.fetch;
  return params;
}

/// The JS thread's part: runs the job and hands its result to the watchdog.
void run_job(const std::shared_ptr<Job>& job, engine::SessionParams params, runner::InvocationContext context,
             runner::SourceCache& cache) {
  const auto begin_commit = [&job] {
    base::MutexLock lock(job->mutex);
    if (job->abandoned) return false;
    job->committing = true;
    return true;
  };
  RunResult r = run_on_js_thread(std::move(params), job->invocation.skill, std::move(context), cache,
                                 job->live, job->inbox, begin_commit);
  {
    base::MutexLock lock(job->mutex);
    job->result = std::move(r);
    job->done = true;
    if (job->abandoned) job->abandoned_count->fetch_sub(1, std::memory_order_acq_rel);
  }
  job->cv.notify_all();  // after the unlock, so the woken caller finds the mutex free
}

/// What the caller of an abandoned run learns: `timeout`, or `cancelled` when its caller had cancelled it,
/// with the lines written before it was cut off (the abandoned thread may add more, unseen).
RunResult abandoned_result(Job& job, bool cancelled, const Limits& limits, engine::Clock::time_point start) {
  RunResult r = cancelled
                    ? cancelled_result(
                          "the run was cancelled by its caller during a native operation that cannot be "
                          "interrupted; the run was abandoned")
                    : RunResult{};
  if (!cancelled) {
    r.outcome = Outcome::timeout;
    r.error =
        ErrorInfo{"TimeoutExceeded",
                  "the wall-clock deadline passed (limit is " + std::to_string(limits.timeout_ms) +
                      " ms) during a native operation that cannot be interrupted; the run was abandoned",
                  "", ""};
  }
  r.logs = job.live.take_logs();
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(engine::Clock::now() - start);
  r.usage.wall_ms = static_cast<uint64_t>(waited.count());
  return r;
}

/// The watchdog, on the caller's thread: waits for the job until its deadline or a cancel, then stops it
/// and waits kAbandonGrace more; a job still running then is abandoned (counted until it finishes).
RunResult watch(Job& job, const Limits& limits, engine::Clock::time_point start) {
  bool done = false;
  bool cancelled = false;
  {
    base::MutexLock lock(job.mutex);
    lock.wait_until(job.cv, job.stop_token.deadline(), [&] {
      job.mutex.assert_held();
      return job.done || job.cancel_requested;
    });
    done = job.done;
    cancelled = job.cancel_requested;
  }
  // Outside the lock: the observer may take its time, and the JS thread must be able to finish. A skill
  // that stopped so soon after the cancel that the wait woke to `done` is reported the same way.
  if (cancelled) {
    job.live.event(RunEvent::Kind::cancel_requested, "");
  } else if (!done) {
    job.stop_token.raise();     // the host serves no more requests of this invocation
    job.deadline_flag.raise();  // the allocator refuses, and the engine polls at its next tick
  }
  bool finished = false;
  RunResult r;
  {
    base::MutexLock lock(job.mutex);
    if (!done) {
      // A run storing its database is not abandoned: the write is bounded (the image is capped) and the
      // caller must learn whether it happened.
      if (lock.wait_for(job.cv, kAbandonGrace, [&] {
            job.mutex.assert_held();
            return job.done || job.committing;
          }))
        lock.wait(job.cv, [&] {
          job.mutex.assert_held();
          return job.done;
        });
      if (!job.done) {
        // Under the job's mutex, so the JS thread, which marks the job done under it, either finished
        // already (the predicate above saw it) or sees `abandoned` and takes it off the count.
        job.abandoned = true;
        job.abandoned_count->fetch_add(1, std::memory_order_acq_rel);
        cancelled = job.cancel_requested;
      }
    }
    finished = job.done;
    if (finished) r = std::move(job.result);
  }
  job.live.close();
  return finished ? r : abandoned_result(job, cancelled, limits, start);
}

}  // namespace

struct InProcessRunner::Impl {
  explicit Impl(HostOptions o)
      : options(std::move(o)),
        default_tenant(runner::make_default_tenant(options)),
        abandoned(std::make_shared<std::atomic<size_t>>(0)),
        pool(std::max<size_t>(2, std::thread::hardware_concurrency())) {}

  /// InProcessRunner::run for the tenant it runs as.
  RunResult run(const Invocation& invocation, const TenantContext& tenant,
                std::shared_ptr<runner::ContactedOrigins> contacted);

  HostOptions options;
  std::shared_ptr<const TenantContext> default_tenant;  // for invocations without a tenant
  AbandonedCount abandoned;
  std::shared_ptr<runner::SourceCache> sources = std::make_shared<runner::SourceCache>();  // jobs share it
  runner::JsThreadPool pool;
};

InProcessRunner::InProcessRunner(HostOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

InProcessRunner::~InProcessRunner() = default;

size_t InProcessRunner::abandoned_runs() const {
  return impl_->abandoned->load(std::memory_order_acquire);
}

RunResult InProcessRunner::Impl::run(const Invocation& invocation, const TenantContext& tenant,
                                     std::shared_ptr<runner::ContactedOrigins> contacted) {
  try {
    if (auto refused = refuse(invocation, tenant, abandoned->load(std::memory_order_acquire),
                              options.max_abandoned_runs))
      return *std::move(refused);
    const Limits limits = runner::effective_limits(invocation, tenant);
    const auto start = engine::Clock::now();
    const auto deadline = start + std::chrono::milliseconds(limits.timeout_ms);
    auto job = std::make_shared<Job>(invocation, deadline, limits.memory_bytes, abandoned);
    engine::SessionParams params = session_params(invocation, limits, start, *job);
    runner::InvocationContext context =
        runner::make_invocation_context(invocation, options, tenant, std::move(contacted));

    // The callback takes the job's mutex under the token's, never the other way round: the subscription
    // is dropped (which takes the token's) only after watch() has let go of the job's.
    CancelToken::Subscription cancel_sub = invocation.cancel.subscribe([j = job.get()] {
      j->stop_token.raise();
      j->deadline_flag.raise_cancel();
      j->inbox.wake();  // an event loop asleep until its next timer looks at its Limiter now
      {
        base::MutexLock lock(j->mutex);
        j->cancel_requested = true;
      }
      j->cv.notify_all();
    });
    const bool started =
        pool.submit([job, p = std::move(params), c = std::move(context), cache = sources]() mutable {
          run_job(job, std::move(p), std::move(c), *cache);
        });
    if (!started) {
      cancel_sub.reset();
      return internal_result("could not start a thread to run the skill");
    }
    return watch(*job, limits, start);
  } catch (const std::exception& e) {
    return internal_result(std::string("skillbox failed to run the skill: ") + e.what());
  }
}

RunResult InProcessRunner::run(const Invocation& invocation) {
  return runner::run_audited(invocation, *impl_->default_tenant,
                             [this](const Invocation& inv, const TenantContext& tenant,
                                    std::shared_ptr<runner::ContactedOrigins> contacted) {
                               return impl_->run(inv, tenant, std::move(contacted));
                             });
}

namespace runner::testing {

void set_extra_api(std::function<void(JSContext*)> install) {
  ExtraApiHook& hook = extra_api_hook();
  std::lock_guard<std::mutex> lock(hook.mutex);
  hook.install = std::move(install);
}

}  // namespace runner::testing

}  // namespace skillbox
