#include "isolation/seccomp_policy.h"

#include <array>
#include <cerrno>
#include <cstddef>

#include "base/sanitizer.h"

namespace skillbox::isolation {
namespace {

constexpr SyscallAction A = SyscallAction::allow;
constexpr SyscallAction R = SyscallAction::refuse;
constexpr SyscallAction K = SyscallAction::kill;
constexpr ArgCondition none = ArgCondition::none;
constexpr ArgCondition no_exec = ArgCondition::prot_without_exec;
constexpr ArgCondition no_addr = ArgCondition::no_destination_address;
constexpr ArgCondition advice = ArgCondition::malloc_advice;
constexpr ArgCondition wait_wake = ArgCondition::futex_wait_wake;
constexpr ArgCondition own = ArgCondition::own_process;

// clang-format off
constexpr SyscallRule kWorkerPolicy[] = {
  // --- frame transport on the one socket the worker holds ---
  {"read",            A, none,    0, "frames in from the socket"},
  {"write",           A, none,    0, "frames out to the socket"},
  {"readv",           A, none,    0, "frames in, scattered"},
  {"writev",          A, none,    0, "frames out, gathered (header + payload)"},
  {"recvmsg",         A, none,    0, "frames in on the socket"},
  {"recvfrom",        A, none,    0, "recv(2) is recvfrom with no address"},
  {"sendmsg",         A, none,    0, "frames out on the socket"},
  {"sendto",          A, no_addr, 0, "send(2) is sendto with dest_addr NULL; an address would name a new peer"},
  {"poll",            A, none,    0, "wait for a frame with the next timer as timeout"},
  {"ppoll",           A, none,    0, "poll on arches without poll(2)"},
  {"close",           A, none,    0, "closing a descriptor it holds opens nothing"},
  // --- memory: glibc malloc and QuickJS ---
  {"brk",             A, none,    0, "malloc's main arena"},
  {"mmap",            A, no_exec, 0, "large allocations; never executable: native code injection"},
  {"mprotect",        A, no_exec, 0, "malloc heap growth; never executable: shellcode after a heap bug"},
  {"munmap",          A, none,    0, "free of large allocations"},
  {"mremap",          A, none,    0, "realloc of large allocations (cannot add PROT_EXEC)"},
  {"madvise",         A, advice,  0, "malloc returning pages; not MADV_HWPOISON and friends (root could poison shared page-cache pages)"},
  {"futex",           A, wait_wake, 0, "glibc and libstdc++ locks and once-guards; no PI/requeue ops (CVE-2014-3153 towelroot)"},
  // --- time, randomness, identity ---
  {"clock_gettime",   A, none,    0, "Date.now, deadlines, CPU time (vDSO fallback)"},
  {"clock_getres",    A, none,    0, "clock resolution (vDSO fallback)"},
  {"gettimeofday",    A, none,    0, "QuickJS Date (vDSO fallback)"},
  {"time",            A, none,    0, "time(2) (vDSO fallback)"},
  {"clock_nanosleep", A, none,    0, "sleeping until a timer is due"},
  {"nanosleep",       A, none,    0, "sleeping until a timer is due"},
  {"getrandom",       A, none,    0, "crypto.getRandomValues, randomUUID"},
  {"getpid",          A, none,    0, "glibc raise() and abort(); reveals nothing outside the process"},
  {"gettid",          A, none,    0, "glibc raise() and abort()"},
  {"sched_yield",     A, none,    0, "glibc spin-then-wait paths"},
  // --- signals and exit, on the process itself ---
  {"rt_sigreturn",    A, none,    0, "return from a signal the kernel delivered"},
  {"restart_syscall", A, none,    0, "kernel-internal restart of an interrupted sleep"},
  {"rt_sigprocmask",  A, none,    0, "glibc raise()/abort() block signals; changes only its own mask"},
  {"exit",            A, none,    0, "thread exit"},
  {"exit_group",      A, none,    0, "process exit after the result frame"},
  // --- refused with an errno: benign libc paths probe files and must survive ---
  {"open",            R, none,   EACCES, "libc file probes (tz data for Date's local time, locales, gconv) fall back; same answer as Landlock"},
  {"openat",          R, none,   EACCES, "as open: glibc's open() is openat"},
  {"stat",            R, none,   EACCES, "file-existence probes: Landlock does not cover stat"},
  {"lstat",           R, none,   EACCES, "file-existence probes: Landlock does not cover stat"},
  {"fstat",           R, none,   EACCES, "stdio sizes its buffer with fstat and falls back when refused"},
  {"newfstatat",      R, none,   EACCES, "glibc's stat/fstat; file-existence probes Landlock does not cover"},
  {"statx",           R, none,   EACCES, "file-existence probes: Landlock does not cover statx"},
  {"ioctl",           R, none,   ENOTTY, "stdio's isatty() survives; no device or socket ioctl ever runs"},
  {"clone3",          R, none,   ENOSYS, "glibc falls back to clone, which kills: one clear refusal point"},
  // --- killed: each answers an attack ---
  {"creat",           K, none,   0, "creating files: nothing benign uses the creat syscall"},
  {"openat2",         K, none,   0, "opening files: no libc path uses openat2"},
  {"open_by_handle_at", K, none, 0, "opening by file handle bypasses paths (the 'shocker' container escape)"},
  {"socket",          K, none,   0, "new network or unix sockets: exfiltration, reaching host services"},
  {"socketpair",      K, none,   0, "new sockets"},
  {"connect",         K, none,   0, "reaching a host service or the network"},
  {"bind",            K, none,   0, "listening for connections"},
  {"listen",          K, none,   0, "listening for connections"},
  {"accept",          K, none,   0, "accepting connections"},
  {"accept4",         K, none,   0, "accepting connections"},
  {"execve",          K, none,   0, "running a native program: out of the engine entirely"},
  {"execveat",        K, none,   0, "running a native program"},
  {"fork",            K, none,   0, "new processes: escaping the deadline kill, fork bombs"},
  {"vfork",           K, none,   0, "new processes"},
  {"clone",           K, none,   0, "new processes and threads: the worker is single-threaded (glibc fork() is clone)"},
  {"ptrace",          K, none,   0, "debugging another process: reading the supervisor's memory and secrets"},
  {"process_vm_readv",  K, none, 0, "reading another process's memory"},
  {"process_vm_writev", K, none, 0, "writing another process's memory"},
  {"pidfd_open",      K, none,   0, "handles on other processes"},
  {"pidfd_getfd",     K, none,   0, "stealing another process's descriptors"},
  {"kill",            K, none,   0, "signalling the supervisor or other same-uid processes"},
  {"tkill",           K, none,   0, "signalling other threads/processes"},
  {"tgkill",          K, none,   0, "signalling other processes (so glibc abort() also ends in SIGSYS)"},
  {"rt_sigqueueinfo", K, none,   0, "signalling other processes"},
  {"rt_tgsigqueueinfo", K, none, 0, "signalling other processes"},
  {"rt_sigaction",    K, none,   0, "installing handlers: a SIGSEGV handler could hide a crash"},
  {"io_uring_setup",  K, none,   0, "io_uring runs calls seccomp never sees, and is a rich kernel attack surface"},
  {"io_uring_enter",  K, none,   0, "io_uring"},
  {"io_uring_register", K, none, 0, "io_uring"},
  {"userfaultfd",     K, none,   0, "stalling the kernel mid-copy: the classic race-widening exploit primitive"},
  {"memfd_create",    K, none,   0, "anonymous files: staging executable code, fd-based tricks"},
  {"bpf",             K, none,   0, "eBPF programs: kernel attack surface"},
  {"perf_event_open", K, none,   0, "perf events: side channels and kernel attack surface"},
  {"unshare",         K, none,   0, "new namespaces: user-namespace kernel attack surface"},
  {"setns",           K, none,   0, "entering other namespaces"},
  {"mount",           K, none,   0, "changing the file-system view"},
  {"umount2",         K, none,   0, "changing the file-system view"},
  {"pivot_root",      K, none,   0, "changing the root"},
  {"chroot",          K, none,   0, "changing the root"},
  {"fsopen",          K, none,   0, "new mount API"},
  {"fsmount",         K, none,   0, "new mount API"},
  {"move_mount",      K, none,   0, "new mount API"},
  {"open_tree",       K, none,   0, "new mount API"},
  {"personality",     K, none,   0, "READ_IMPLIES_EXEC would make every readable mapping executable"},
  {"kexec_load",      K, none,   0, "replacing the kernel"},
  {"kexec_file_load", K, none,   0, "replacing the kernel"},
  {"keyctl",          K, none,   0, "kernel keyrings: other secrets of the same user"},
  {"add_key",         K, none,   0, "kernel keyrings"},
  {"request_key",     K, none,   0, "kernel keyrings"},
  {"prctl",           K, none,   0, "process attributes (dumpable, PR_SET_MM, a second filter): none needed after setup"},
  {"seccomp",         K, none,   0, "filter games; nothing after setup needs it"},
  {"setrlimit",       K, none,   0, "glibc sets limits with prlimit64; nothing needs the old call"},
  // A pooled worker is forked with the host's ceilings and lowers RLIMIT_AS/DATA/CPU to its invocation's
  // once it has read it (worker/worker_child.cpp). Safe to allow: pid 0 only (another process's limits
  // stay out of reach), and the worker has no CAP_SYS_RESOURCE after sandbox_self's privilege drop, so
  // the kernel lets a hard limit only go down (EPERM otherwise); soft = hard, so nothing can be raised.
  {"prlimit64",       A, own,    0, "lowering its own limits to its invocation's; a hard limit only goes down without CAP_SYS_RESOURCE"},
  {"pkey_mprotect",   K, none,   0, "executable memory through the other mprotect"},
  {"modify_ldt",      K, none,   0, "x86 segment tricks with a history of kernel bugs"},
};
// What a sanitizer runtime needs on top, allowed only in sanitizer builds (the `asan`/`tsan` presets).
// AddressSanitizer and UBSan test whether memory is readable by writing it into a pipe
// (IsAccessibleMemoryRange, e.g. for UBSan's vtable checks); without it the worker is killed by SIGSYS
// on its first such check.
constexpr SyscallRule kSanitizerRows[] = {
  {"pipe2",           A, none,    0, "sanitizer builds only: the sanitizer runtime's readability probe"},
  {"sigaltstack",     A, none,    0, "sanitizer builds only: the runtime's stack for its fault handler"},
  {"rseq",            A, none,    0, "sanitizer builds only: TSan's background thread, started in every forked child, registers with rseq"},
  {"set_robust_list", A, none,    0, "sanitizer builds only: glibc's start of that background thread"},
};
// clang-format on

template <size_t A, size_t B>
constexpr std::array<SyscallRule, A + B> concat(const SyscallRule (&a)[A], const SyscallRule (&b)[B]) {
  std::array<SyscallRule, A + B> out{};
  for (size_t i = 0; i < A; ++i) out[i] = a[i];
  for (size_t i = 0; i < B; ++i) out[A + i] = b[i];
  return out;
}
constexpr auto kSanitizedPolicy = concat(kWorkerPolicy, kSanitizerRows);

}  // namespace

std::span<const SyscallRule> worker_syscall_policy() {
  if constexpr (base::kSanitizerBuild) return kSanitizedPolicy;
  return kWorkerPolicy;
}

std::span<const SyscallRule> sanitizer_syscall_rows() {
  if constexpr (base::kSanitizerBuild) return kSanitizerRows;
  return {};
}

const char* action_name(SyscallAction action) {
  switch (action) {
    case SyscallAction::allow:
      return "allow";
    case SyscallAction::refuse:
      return "refuse";
    case SyscallAction::kill:
      return "kill";
  }
  return "unknown";
}

const char* condition_text(ArgCondition condition) {
  switch (condition) {
    case ArgCondition::none:
      return "";
    case ArgCondition::prot_without_exec:
      return " (no PROT_EXEC)";
    case ArgCondition::no_destination_address:
      return " (dest_addr NULL)";
    case ArgCondition::malloc_advice:
      return " (malloc's advice only)";
    case ArgCondition::futex_wait_wake:
      return " (wait/wake only)";
    case ArgCondition::own_process:
      return " (pid 0 only)";
  }
  return "";
}

}  // namespace skillbox::isolation
