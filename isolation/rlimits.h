// isolation/rlimits.h — the kernel's resource ceilings for one worker process.
//
// These back up the engine's own limits (JS_SetMemoryLimit, the step budget, the supervisor's
// deadline kill) against native code that never passes through the engine's allocator or interrupt
// handler: a QuickJS memory-safety bug turned into arbitrary code still cannot take more memory, CPU
// or disk than these allow. Each limit is set as soft = hard, so the worker cannot raise it again: it
// has no CAP_SYS_RESOURCE (sandbox_self drops every capability first), and seccomp allows prlimit64
// only on the calling process.
//
// A pooled worker serves any invocation: it is forked with the rlimits of the host's ceilings
// (Limits::kMaxMemoryBytes, kMaxTimeoutMs) and lowers RLIMIT_AS, RLIMIT_DATA and RLIMIT_CPU to its
// invocation's with lower_invocation_rlimits() right after it reads the invocation, before any skill
// code runs.
#pragma once

#include <sys/resource.h>

#include <cstdint>

#include "isolation/status.h"

namespace skillbox::isolation {

/// The invocation's budgets that the rlimits derive from (skillbox::Limits fields of the same name).
struct WorkerLimits {
  uint64_t memory_bytes = 0;  // QuickJS heap limit
  uint64_t deadline_ms = 0;   // wall-clock deadline of the invocation
};

/// Address space and private writable memory the worker already has when it is forked (the zygote's
/// mapped binary and libraries, its heap). The memory rlimits are measured on top of these, since
/// RLIMIT_AS and RLIMIT_DATA count what is already mapped.
struct MemoryBaseline {
  uint64_t address_space_bytes = 0;  // VmSize
  uint64_t data_bytes = 0;           // VmData
};

/// Memory a worker may use beyond its QuickJS heap limit before the kernel refuses, in bytes. It
/// covers what the heap limit does not count, so that JS_SetMemoryLimit trips first and the outcome
/// is a clean `memory_limit` rather than a failed native allocation:
///   - the main thread's stack, up to 8 MiB (RLIMIT_STACK's usual default; counts in RLIMIT_AS only);
///   - frame buffers: a reply frame is held as wire bytes and as its decoded value while it becomes
///     a JS value, 2 × 10 MiB for the default http response / workspace file caps;
///   - glibc malloc's chunk headers, fragmentation and top-of-heap slack around the QuickJS heap, and
///     libc/libstdc++ state created after the fork (stdio buffers, locale, tz data): ~16 MiB measured
///     generously;
///   - the rest is headroom, rounded up to a power of two.
/// Raised manifest caps (bigger frames) need a bigger margin: see docs/isolation.md.
inline constexpr uint64_t kWorkerMemoryMarginBytes = 64ull * 1024 * 1024;

/// CPU seconds granted beyond the deadline (rounded up to whole seconds). RLIMIT_CPU is only a
/// backstop for a supervisor that failed to kill at the deadline; one second of slack keeps it from
/// ever firing before the supervisor's own, better-reported timeout.
inline constexpr uint64_t kCpuGraceSeconds = 1;

/// The limits to apply, all as soft = hard. Plain values so a test can check the arithmetic.
struct RlimitPlan {
  rlim_t address_space_bytes = 0;  // RLIMIT_AS
  rlim_t data_bytes = 0;           // RLIMIT_DATA
  rlim_t cpu_seconds = 0;          // RLIMIT_CPU (SIGKILL when reached, since soft = hard)
  rlim_t open_files = 0;           // RLIMIT_NOFILE
  rlim_t file_size_bytes = 0;      // RLIMIT_FSIZE
  rlim_t processes = 0;            // RLIMIT_NPROC
  rlim_t core_bytes = 0;           // RLIMIT_CORE
};

/// Reads VmSize and VmData of the calling process from /proc/self/status. Call it in the zygote right
/// before forking (it needs /proc; a sandboxed child cannot read it). Error (step rlimits) when the
/// file cannot be read or lacks the fields.
Result<MemoryBaseline> measure_memory_baseline();

/// The rlimits of a worker with `limits`, forked from a process with `baseline`, whose highest kept
/// descriptor is `highest_kept_fd`:
///   - RLIMIT_AS   = baseline VmSize + memory + margin: every mapping, including shared anonymous
///                   memory that RLIMIT_DATA does not count;
///   - RLIMIT_DATA = baseline VmData + memory + margin: private writable memory, what malloc grows;
///   - RLIMIT_CPU  = ceil(deadline / 1 s) + kCpuGraceSeconds;
///   - RLIMIT_NOFILE = highest_kept_fd + 2: the worker opens nothing (seccomp), but Landlock's ruleset
///                   descriptor needs one free slot while sandbox_self runs; it also caps descriptors
///                   a peer could pass with SCM_RIGHTS;
///   - RLIMIT_FSIZE 0 (no file growth: SIGXFSZ), RLIMIT_NPROC 0 (no new process; ignored for root and
///     CAP_SYS_RESOURCE/CAP_SYS_ADMIN, which is why seccomp also denies fork/clone), RLIMIT_CORE 0
///     (a crashing worker writes no core file of its memory to disk).
/// Sums saturate instead of wrapping. Pure function.
[[nodiscard]] RlimitPlan plan_worker_rlimits(const WorkerLimits& limits, const MemoryBaseline& baseline,
                                             int highest_kept_fd);

/// Applies `plan` to the calling process, each as soft = hard = min(planned, current hard limit): it
/// only ever lowers, so it works unprivileged. Never allocates. Error (step rlimits) names the
/// resource whose setrlimit failed.
Status apply_rlimits(const RlimitPlan& plan);

/// The part of `plan` that depends on the invocation: RLIMIT_AS, RLIMIT_DATA and RLIMIT_CPU, each as
/// soft = hard = min(planned, current hard limit), like apply_rlimits. For a worker that was forked with
/// larger ones (the ceilings) and has read its invocation; seccomp allows it (prlimit64 with pid 0).
/// Never allocates. Error (step rlimits) names the resource whose setrlimit failed.
Status lower_invocation_rlimits(const RlimitPlan& plan);

}  // namespace skillbox::isolation
