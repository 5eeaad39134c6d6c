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
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "engine/reply_inbox.h"
#include "engine/session.h"
#include "runner/host_endpoint.h"
#include "runner/js_thread_pool.h"
#include "runner/skill_reader.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

/// How long after the deadline the caller still waits for the JS thread to stop by itself.
constexpr std::chrono::milliseconds kAbandonGrace{1000};

struct Job {
  explicit Job(const Invocation& inv) : invocation(inv) {}
  Invocation invocation;  // a copy: an abandoned job outlives the caller's invocation
  engine::DeadlineFlag deadline_flag;
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  RunResult result;
};

// Limits are validated by the manifest parser; this guards the ceilings the engine's safety rests on
// (the JS stack must fit the pool thread's stack) against a Skill built in code with other values.
Limits clamp_to_host_ceilings(Limits l) {
  l.memory_bytes = std::clamp(l.memory_bytes, Limits::kMinMemoryBytes, Limits::kMaxMemoryBytes);
  l.steps = std::min(l.steps, Limits::kMaxSteps);
  l.stack_bytes = std::clamp(l.stack_bytes, Limits::kMinStackBytes, Limits::kMaxStackBytes);
  l.timeout_ms = std::min(l.timeout_ms, Limits::kMaxTimeoutMs);
  return l;
}

RunResult internal_result(std::string message) {
  RunResult r;
  r.outcome = Outcome::internal;
  r.error = ErrorInfo{"InternalError", std::move(message), "", ""};
  return r;
}

/// Runs one invocation on the calling (pool) thread: sources from disk, capabilities composed, engine.
RunResult run_on_js_thread(engine::SessionParams params, runner::InvocationContext context) {
  const Skill& skill = params.invocation->skill;
  auto sources = runner::read_skill_sources(skill.dir(), skill.manifest().entry, params.limits.memory_bytes);
  if (!sources) {
    RunResult r;
    r.outcome = Outcome::invalid;
    r.error = ErrorInfo{"InvalidSkill", sources.error().message, "", ""};
    return r;
  }
  params.sources = std::move(*sources);
  engine::ReplyInbox inbox;  // outlives the endpoint, which completes into it
  runner::HostEndpoint endpoint(std::move(context), inbox);
  RunResult r = engine::run_session(std::move(params), endpoint, inbox);
  endpoint.report(r);
  return r;
}

}  // namespace

struct InProcessRunner::Impl {
  explicit Impl(HostOptions o)
      : options(std::move(o)),
        data_dir(resolve_data_dir(options)),
        pool(std::max<size_t>(2, std::thread::hardware_concurrency())) {}

  runner::InvocationContext invocation_context(const Skill& skill) const {
    runner::InvocationContext c;
    c.skill_id = skill.manifest().id;
    c.policy = skill.manifest().permissions;
    c.data_dir = data_dir;
    c.extra_ca_file = options.extra_ca_file;
    // Only the names the manifest grants are looked up: the rest of the environment never reaches
    // the invocation.
    for (const std::string& name : c.policy.env) {
      if (options.env) {
        auto it = options.env->find(name);
        if (it != options.env->end()) c.env.emplace(name, it->second);
      } else if (const char* v = std::getenv(name.c_str())) {  // NOLINT(concurrency-mt-unsafe): read-only use
        c.env.emplace(name, v);
      }
    }
    return c;
  }

  HostOptions options;
  std::filesystem::path data_dir;
  runner::JsThreadPool pool;
};

InProcessRunner::InProcessRunner(HostOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

InProcessRunner::~InProcessRunner() = default;

RunResult InProcessRunner::run(const Invocation& invocation) {
  try {
    auto job = std::make_shared<Job>(invocation);
    const Limits limits =
        clamp_to_host_ceilings(invocation.overrides.apply(invocation.skill.manifest().limits));
    const auto start = engine::Clock::now();
    const auto deadline = start + std::chrono::milliseconds(limits.timeout_ms);

    engine::SessionParams params;
    params.invocation = &job->invocation;
    params.limits = limits;
    params.start = start;
    params.deadline = deadline;
    params.deadline_flag = &job->deadline_flag;
    runner::InvocationContext context = impl_->invocation_context(invocation.skill);

    const bool started = impl_->pool.submit([job, p = std::move(params), c = std::move(context)]() mutable {
      RunResult r = run_on_js_thread(std::move(p), std::move(c));
      std::lock_guard<std::mutex> lock(job->mutex);
      job->result = std::move(r);
      job->done = true;
      job->cv.notify_all();
    });
    if (!started) return internal_result("could not start a thread to run the skill");

    std::unique_lock<std::mutex> lock(job->mutex);
    if (!job->cv.wait_until(lock, deadline, [&] { return job->done; })) {
      job->deadline_flag.raise();  // the allocator refuses, and the engine polls at its next tick
      if (!job->cv.wait_for(lock, kAbandonGrace, [&] { return job->done; })) {
        RunResult r;
        r.outcome = Outcome::timeout;
        r.error =
            ErrorInfo{"TimeoutExceeded",
                      "the wall-clock deadline passed (limit is " + std::to_string(limits.timeout_ms) +
                          " ms) during a native operation that cannot be interrupted; the run was abandoned "
                          "and its logs are lost",
                      "", ""};
        r.usage.wall_ms = limits.timeout_ms + static_cast<uint64_t>(kAbandonGrace.count());
        return r;
      }
    }
    return std::move(job->result);
  } catch (const std::exception& e) {
    return internal_result(std::string("skillbox failed to run the skill: ") + e.what());
  }
}

}  // namespace skillbox
