// isolation/status.h — typed results of the worker sandbox steps.
//
// Every isolation call reports failure as an Error naming the step that failed, the errno of the
// refusing system call and a static description, so a worker can report "landlock: the kernel has no
// Landlock" without formatting anything in the child. The child-side calls (sandbox_self and the
// pieces it runs) never allocate: an Error holds only a string literal. Status and Result are the one
// result type of skillbox (skillbox/result.h) with this Error; the shape (step + errno + what) is what
// callers depend on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "skillbox/result.h"

namespace skillbox::isolation {

/// The steps of sandbox_self(), plus the preparation done once in the zygote. They run in this
/// order except drop_privileges, which runs right after new_session (see sandbox.h for why). The
/// values are stable: a worker may exit with kSandboxExitBase + value to tell its supervisor which
/// step failed.
enum class Step : uint8_t {
  close_fds = 0,
  new_session = 1,
  rlimits = 2,
  no_new_privs = 3,
  landlock = 4,
  seccomp = 5,
  drop_privileges = 6,
};
/// The largest Step value.
inline constexpr Step kLastStep = Step::drop_privileges;

/// Lower-case name of `step` as used in messages and docs/isolation.md ("close_fds", "landlock", ...).
[[nodiscard]] const char* step_name(Step step);

/// Why a step failed. `sys_errno` is the errno of the call that refused (0 when the failure is a
/// check of ours, not a refusal). `what` is a string literal: the call or the missing feature.
/// `missing_feature` marks a kernel that lacks what process isolation needs (no seccomp, no Landlock):
/// the caller must fail closed and say how to choose in-process isolation explicitly.
struct Error {
  Step step = Step::close_fds;
  int sys_errno = 0;
  const char* what = "";
  bool missing_feature = false;
};

/// One-line, human-readable message for `error`: the step, what failed, strerror(sys_errno), and for a
/// missing feature how to opt into in-process isolation (`--isolation=inprocess`). Allocates: call it
/// in the parent or the zygote, not in a sandboxed child.
[[nodiscard]] std::string describe(const Error& error);

/// Success, or the Error of the first step that failed. Never allocates: Error is trivially copyable
/// and skillbox::Result<void, E> holds it in a std::optional.
using Status = skillbox::Result<void, Error>;

/// A value of type T, or the Error that prevented computing it.
template <class T>
using Result = skillbox::Result<T, Error>;

}  // namespace skillbox::isolation
