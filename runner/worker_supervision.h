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
//
// The supervisor never parses skill code. A SourcesRequest (bus/messages.h) is served here, before
// any capability: each name is checked as hostile input (normal form, a module source name, never
// asked before; else the worker is killed as a protocol violation) and read by a SourceReader
// (runner/skill_reader.h) with the in-process reader's rules and caps, counted over the invocation.
#pragma once

#include <chrono>

#include "bus/worker_frames.h"
#include "runner/host_endpoint.h"
#include "runner/source_cache.h"
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
  // The entry (and what the skill's last invocation was served, from the cache), read on the host
  // side without parsing; it travels in the invocation frame. The worker walks the module graph and
  // asks for the rest with SourcesRequests, which supervise() serves with a SourceReader under the
  // caps; what was served goes back to `source_cache` at the end (nullptr: not kept).
  SourceCache::Served sources;
  SourceCache* source_cache = nullptr;
  // Where the http capabilities record the origins they contact (may be null).
  std::shared_ptr<ContactedOrigins> contacted = nullptr;
};

/// Runs `run` in worker `w` (from `pool`, which reports its exit status) to its end and returns the
/// result. Returns by the deadline plus bounded waits (kKillGrace, the exit-status wait); the worker is
/// killed by then. Never throws for anything the worker does.
[[nodiscard]] RunResult supervise(Worker& w, WorkerPool& pool, SupervisedRun run);

}  // namespace skillbox::runner
