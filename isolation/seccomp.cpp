#include "isolation/seccomp.h"

#include <linux/futex.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "base/sanitizer.h"
#include "base/unique_fd.h"

namespace skillbox::isolation {
namespace {

Error seccomp_error(int err, const char* what, bool missing = false) {
  return Error{Step::seccomp, err, what, missing};
}

struct ContextDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Context = std::unique_ptr<void, ContextDeleter>;

// Advice values glibc malloc and the kernel's own defaults use. Everything else (MADV_HWPOISON,
// MADV_SOFT_OFFLINE: memory-failure injection, allowed to a root worker; MADV_PAGEOUT, ...) kills.
constexpr uint64_t kMallocAdvice[] = {MADV_NORMAL,   MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
                                      MADV_DONTNEED, MADV_FREE,   MADV_HUGEPAGE,   MADV_NOHUGEPAGE};
// Sanitizer builds only, on top (docs/isolation.md "Sanitizer builds"): the sanitizer's allocator also
// keeps its shadow memory out of core dumps. Only core dumps change; RLIMIT_CORE is 0 in a worker anyway.
constexpr uint64_t kSanitizerAdvice[] = {MADV_DONTDUMP, MADV_DODUMP};
// futex commands a single-threaded glibc process issues; the low 7 bits of op are the command, the
// rest are FUTEX_PRIVATE_FLAG / FUTEX_CLOCK_REALTIME.
// op is an int: the mask keeps the low 32 bits only, which is all the kernel reads.
constexpr uint64_t kFutexCommandMask = static_cast<uint32_t>(FUTEX_CMD_MASK);
constexpr uint64_t kFutexCommands[] = {FUTEX_WAIT, FUTEX_WAKE, FUTEX_WAIT_BITSET, FUTEX_WAKE_BITSET};

// Adds one rule per accepted value of `arg` (masked by `mask`): libseccomp ORs rules of one call.
int add_value_rules(void* ctx, uint32_t action, int nr, unsigned arg, uint64_t mask,
                    std::span<const uint64_t> values) {
  for (const uint64_t value : values) {
    scmp_arg_cmp cmp{};
    cmp.arg = arg;
    cmp.op = SCMP_CMP_MASKED_EQ;
    cmp.datum_a = mask;
    cmp.datum_b = value;
    if (const int rc = seccomp_rule_add_array(ctx, action, nr, 1, &cmp); rc < 0) return rc;
  }
  return 0;
}

// libseccomp returns -errno.
int add_rule(void* ctx, uint32_t action, int nr, const SyscallRule& rule) {
  scmp_arg_cmp cmp{};
  switch (rule.condition) {
    case ArgCondition::none:
      return seccomp_rule_add_array(ctx, action, nr, 0, nullptr);
    case ArgCondition::prot_without_exec:
      // (prot & PROT_EXEC) == 0; the mask also ignores the register's upper half.
      cmp.arg = 2;
      cmp.op = SCMP_CMP_MASKED_EQ;
      cmp.datum_a = PROT_EXEC;
      cmp.datum_b = 0;
      return seccomp_rule_add_array(ctx, action, nr, 1, &cmp);
    case ArgCondition::no_destination_address:
      cmp.arg = 4;
      cmp.op = SCMP_CMP_EQ;
      cmp.datum_a = 0;
      return seccomp_rule_add_array(ctx, action, nr, 1, &cmp);
    case ArgCondition::malloc_advice:
      if (const int rc = add_value_rules(ctx, action, nr, 2, 0xffffffffULL, kMallocAdvice); rc < 0) return rc;
      if constexpr (base::kSanitizerBuild)
        return add_value_rules(ctx, action, nr, 2, 0xffffffffULL, kSanitizerAdvice);
      return 0;
    case ArgCondition::futex_wait_wake:
      return add_value_rules(ctx, action, nr, 1, kFutexCommandMask, kFutexCommands);
    case ArgCondition::own_process:
      // The whole register: a pid with garbage in its upper half is not 0 here and falls to the
      // default action (kill), though the kernel would read its lower half only.
      cmp.arg = 0;
      cmp.op = SCMP_CMP_EQ;
      cmp.datum_a = 0;
      return seccomp_rule_add_array(ctx, action, nr, 1, &cmp);
  }
  return -EINVAL;
}

}  // namespace

Status probe_seccomp() {
  // PR_GET_SECCOMP fails with EINVAL on a kernel built without CONFIG_SECCOMP.
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
    return Status(seccomp_error(errno, "the kernel has no seccomp (CONFIG_SECCOMP)", true));
  }
  const uint32_t kill_process = SECCOMP_RET_KILL_PROCESS;
  if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0U, &kill_process) != 0) {
    return Status(seccomp_error(
        errno, "the kernel lacks seccomp filters with SECCOMP_RET_KILL_PROCESS (Linux 4.14+)", true));
  }
  return Status();
}

Result<SeccompProgram> SeccompProgram::compile(std::span<const SyscallRule> policy) {
  const Context ctx(seccomp_init(SCMP_ACT_KILL_PROCESS));
  if (!ctx) return seccomp_error(ENOMEM, "seccomp_init");
  // Syscalls of another ABI (i386 int 0x80, x32) bypass a native-only table: kill them too.
  if (const int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0) {
    return seccomp_error(-rc, "seccomp_attr_set(ACT_BADARCH)");
  }
  // A binary tree of syscall numbers instead of a linear chain. Attaching a filter makes the kernel
  // emulate it for every syscall number to build its allow-cache (Linux 5.11+), so the path length
  // is paid ~450 times per worker at install; measured here, 62 instructions cost 172 us to attach as
  // a chain. Evaluation of each later call gets shorter as well.
  if (const int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0) {
    return seccomp_error(-rc, "seccomp_attr_set(CTL_OPTIMIZE)");
  }
  for (const SyscallRule& rule : policy) {
    const int nr = seccomp_syscall_resolve_name(rule.name);
    if (nr == __NR_SCMP_ERROR)
      return seccomp_error(EINVAL, "policy names a system call libseccomp does not know");
    if (nr < 0) continue;  // not on this architecture
    int rc = 0;
    switch (rule.action) {
      case SyscallAction::allow:
        rc = add_rule(ctx.get(), SCMP_ACT_ALLOW, nr, rule);
        break;
      case SyscallAction::refuse:
        rc = add_rule(ctx.get(), SCMP_ACT_ERRNO(static_cast<uint32_t>(rule.error)), nr, rule);
        break;
      case SyscallAction::kill:
        break;  // the default action; libseccomp refuses a rule equal to it
    }
    if (rc < 0) return seccomp_error(-rc, "seccomp_rule_add");
  }
  // libseccomp 2.5 exports only to a descriptor (seccomp_export_bpf_mem is 2.6+).
  const base::UniqueFd memfd(static_cast<int>(syscall(SYS_memfd_create, "skillbox-seccomp", MFD_CLOEXEC)));
  if (memfd.get() < 0) return seccomp_error(errno, "memfd_create for the BPF export");
  if (const int rc = seccomp_export_bpf(ctx.get(), memfd.get()); rc < 0)
    return seccomp_error(-rc, "seccomp_export_bpf");
  const off_t size = lseek(memfd.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) {
    return seccomp_error(EINVAL, "seccomp_export_bpf produced no whole program");
  }
  std::vector<sock_filter> instructions(static_cast<std::size_t>(size) / sizeof(sock_filter));
  const std::size_t bytes = instructions.size() * sizeof(sock_filter);
  if (pread(memfd.get(), instructions.data(), bytes, 0) != static_cast<ssize_t>(bytes)) {
    return seccomp_error(errno, "reading back the BPF export");
  }
  if (instructions.size() > BPF_MAXINSNS)
    return seccomp_error(E2BIG, "seccomp program longer than BPF_MAXINSNS");
  return SeccompProgram(std::move(instructions));
}

Status SeccompProgram::install() const {
  sock_fprog program{};
  program.len = static_cast<unsigned short>(instructions_.size());
  program.filter = const_cast<sock_filter*>(instructions_.data());  // the kernel only reads it
  const long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
  // With TSYNC a positive result is the id of a thread that could not be synchronised.
  if (rc != 0) return Status(seccomp_error(rc < 0 ? errno : ESRCH, "seccomp(SECCOMP_SET_MODE_FILTER)"));
  return Status();
}

}  // namespace skillbox::isolation
