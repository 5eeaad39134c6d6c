// isolation/seccomp_policy.h — the worker's system-call policy, as one table.
//
// An allowlist: any call not in the table with action `allow` kills the whole worker
// (SECCOMP_RET_KILL_PROCESS), and so does a call from another ABI (i386 `int 0x80`, x32). The table
// also lists, with action `kill`, the calls whose denial answers a named attack, so the reason
// sits beside the call; those rows change nothing in the filter (kill is the default). `refuse` rows
// answer ERRNO without running the call: only where a benign libc or engine path can reach the call
// and must survive the refusal. docs/isolation.md mirrors this table row for row (a test checks it).
#pragma once

#include <cstdint>
#include <span>

namespace skillbox::isolation {

/// What the filter does with one system call.
enum class SyscallAction : uint8_t {
  allow,   // run it (subject to `condition`; when the condition fails, the default kill applies)
  refuse,  // return -1 with errno = `error`; the kernel never executes the call
  kill,    // SECCOMP_RET_KILL_PROCESS (the default action; listed for its reason)
};

/// An argument check on an allowed call. Pointer arguments cannot be inspected by seccomp, so only
/// register-valued arguments appear here.
enum class ArgCondition : uint8_t {
  none,
  prot_without_exec,       // arg 2 (prot) has no PROT_EXEC: mmap, mprotect
  no_destination_address,  // arg 4 (dest_addr) is NULL: sendto on the already-connected socket
  malloc_advice,           // arg 2 (advice) is one glibc malloc uses: madvise
  futex_wait_wake,         // arg 1 (op) is WAIT/WAKE(_BITSET), any flags: futex
  own_process,             // arg 0 (pid) is 0, the calling process: prlimit64
};

/// One row of the policy.
struct SyscallRule {
  const char* name;  // as libseccomp and the man pages spell it; calls absent on an arch are skipped
  SyscallAction action;
  ArgCondition condition;
  int error;           // errno for `refuse`, else 0
  const char* reason;  // why this call is allowed, or which attack its denial answers
};

/// The worker's policy, in table order. Static storage; never empty.
[[nodiscard]] std::span<const SyscallRule> worker_syscall_policy();

/// The rows worker_syscall_policy() has only because this is a sanitizer build (the sanitizer runtime's
/// own system calls, docs/isolation.md "Sanitizer builds"); empty in every other build.
[[nodiscard]] std::span<const SyscallRule> sanitizer_syscall_rows();

/// "allow", "refuse" or "kill".
[[nodiscard]] const char* action_name(SyscallAction action);

/// How docs/isolation.md writes `condition` after the action: "" for none, else " (no PROT_EXEC)" etc.
[[nodiscard]] const char* condition_text(ArgCondition condition);

}  // namespace skillbox::isolation
