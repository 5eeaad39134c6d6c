// runner/worker_supervision.h — one invocation in one worker, supervised from the host side.
//
// On the thread that calls supervise(): sends the invocation frame, answers each request frame with a
// HostEndpoint (the same capabilities and policy as in-process), relays asynchronous replies (http,
// completed on the capability's I/O thread) through an eventfd, and kills the worker through its pidfd
// at the deadline, at a cancel, or at the first frame it must not send.
//
// Every frame from a worker is hostile: decode failures, a length above the limit, a request id that
// does not increase, anything after the result, a closed socket without a result — each ends that
// worker (SIGKILL) with outcome `crashed` and a message naming the violation. Nothing a worker sends
// can throw out of supervise() or reach another invocation. After a limit (the StopToken) no request
// is served and no reply relayed: no skill code may see anything once its invocation must stop.
#pragma once

#include <chrono>

#include "bus/worker_frames.h"
#include "runner/worker_pool.h"
#include "skillbox/skillbox.h"

namespace skillbox::runner {

/// What supervise() needs to know about the invocation.
struct SupervisedRun {
  const Invocation& invocation;
  const TenantContext& tenant;  // whose state the requests reach
  const HostOptions& options;   // the runner's (extra_ca_file)
  Limits limits;                // effective limits (runner/invocation_setup.h)
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point deadline;
  bus::SkillSources sources;  // read on the host side; they travel in the invocation frame
};

/// Runs `run` in worker `w` (from `pool`, which reports its exit status) to its end and returns the
/// result. Returns by the deadline plus bounded waits (kKillGrace, the exit-status wait); the worker is
/// killed by then. Never throws for anything the worker does.
[[nodiscard]] RunResult supervise(Worker& w, WorkerPool& pool, SupervisedRun run);

}  // namespace skillbox::runner
