// isolation/seccomp.h — the worker's seccomp filter, compiled once, installed per child.
//
// libseccomp turns worker_syscall_policy() into a classic BPF program in the zygote (it allocates and
// takes tens of microseconds); each forked child then only hands the finished program to the kernel
// with seccomp(2), which allocates nothing in the child and costs a few microseconds.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

#include "isolation/seccomp_policy.h"
#include "isolation/status.h"

namespace skillbox::isolation {

/// Checks that the kernel can run the worker filter: seccomp filter mode (CONFIG_SECCOMP_FILTER) and
/// the SECCOMP_RET_KILL_PROCESS action (Linux 4.14+). Error (step seccomp, missing_feature) otherwise.
Status probe_seccomp();

/// A compiled seccomp filter for the native architecture.
class SeccompProgram {
 public:
  /// Compiles `policy` with libseccomp: default action and bad-architecture action
  /// SECCOMP_RET_KILL_PROCESS; `allow` rows become ALLOW (with their argument condition), `refuse`
  /// rows ERRNO(error); `kill` rows only have their names checked. A name libseccomp does not know is
  /// an error (a typo must not silently widen nothing or narrow something); a name it knows but the
  /// native architecture lacks (poll, open on aarch64) is skipped. Allocates: call in the zygote.
  /// Errors: step seccomp.
  static Result<SeccompProgram> compile(std::span<const SyscallRule> policy);

  /// Installs the filter on the calling process (SECCOMP_SET_MODE_FILTER with
  /// SECCOMP_FILTER_FLAG_TSYNC, so a stray thread is filtered too). Requires PR_SET_NO_NEW_PRIVS
  /// (or CAP_SYS_ADMIN). Irreversible. Never allocates. Error: step seccomp.
  [[nodiscard]] Status install() const;

  /// Number of BPF instructions (for diagnostics; the kernel caps a program at 4096).
  [[nodiscard]] std::size_t instruction_count() const { return instructions_.size(); }

 private:
  explicit SeccompProgram(std::vector<sock_filter> instructions) : instructions_(std::move(instructions)) {}
  std::vector<sock_filter> instructions_;
};

}  // namespace skillbox::isolation
