// The worker wall (docs/security.md "Worker wall"): after sandbox_self, each forbidden call is
// refused or kills the child; the live child shows seccomp filter mode, no-new-privs, its own session
// and no descriptor but its socket; what a QuickJS worker needs still works.
#include "isolation/sandbox.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <quickjs.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/sanitizer.h"
#include "isolation/child_process.h"
#include "isolation/fd_hygiene.h"
#include "isolation/landlock.h"

namespace skillbox::isolation::testing {
namespace {

// Sandboxes the child; on failure reports the step and exits kSandboxExitBase + step.
int sandbox_or_report(int sock) {
  if (const Status status = sandbox_self(prepared_sandbox(), sock, test_rlimits(sock)); !status) {
    send_text(sock,
              std::string("sandbox failed: ") + step_name(status.error().step) + " " + status.error().what);
    return kSandboxExitBase + static_cast<int>(status.error().step);
  }
  return 0;
}

// --- forbidden calls --------------------------------------------------------------------------

// A probe returns the call's result; the child reports "returned R errno E" if it survives.
struct ForbiddenCall {
  const char* name;
  long (*probe)(int sock);
  int refused_errno;  // 0: the filter must kill the worker with SIGSYS
};

void* thread_body(void*) {
  return nullptr;
}

const ForbiddenCall kForbidden[] = {
    {"open_etc_passwd", [](int) -> long { return open("/etc/passwd", O_RDONLY); }, EACCES},
    {"openat_etc_passwd", [](int) -> long { return openat(AT_FDCWD, "/etc/passwd", O_RDONLY); }, EACCES},
    {"raw_open_syscall", [](int) -> long { return syscall(SYS_open, "/etc/passwd", O_RDONLY); }, EACCES},
    {"openat_create_tmp",
     [](int) -> long { return openat(AT_FDCWD, "/tmp/skillbox-wall", O_CREAT | O_WRONLY, 0600); }, EACCES},
    {"stat_etc_passwd",
     [](int) -> long {
       struct stat st {};
       return stat("/etc/passwd", &st);
     },
     EACCES},
    {"ioctl_on_socket", [](int sock) -> long { return ioctl(sock, FIONREAD, nullptr); }, ENOTTY},
    {"clone3", [](int) -> long { return syscall(SYS_clone3, nullptr, 0); }, ENOSYS},
    {"openat2", [](int) -> long { return syscall(SYS_openat2, AT_FDCWD, "/etc/passwd", nullptr, 0); }, 0},
    {"socket_inet", [](int) -> long { return socket(AF_INET, SOCK_STREAM, 0); }, 0},
    {"socket_unix", [](int) -> long { return socket(AF_UNIX, SOCK_STREAM, 0); }, 0},
    {"connect",
     [](int sock) -> long {
       sockaddr_un addr{};
       addr.sun_family = AF_UNIX;
       std::strcpy(addr.sun_path, "/run/skillbox-host.sock");
       return connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
     },
     0},
    {"sendto_with_address",
     [](int sock) -> long {
       sockaddr_un addr{};
       addr.sun_family = AF_UNIX;
       return sendto(sock, "x", 1, 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
     },
     0},
    {"execve",
     [](int) -> long {
       char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
       return execve("/bin/true", argv, nullptr);
     },
     0},
    {"fork", [](int) -> long { return fork(); }, 0},
    {"vfork_syscall", [](int) -> long { return syscall(SYS_vfork); }, 0},
    {"pthread_create",
     [](int) -> long {
       pthread_t thread;
       return pthread_create(&thread, nullptr, thread_body, nullptr);
     },
     0},
    {"ptrace_traceme", [](int) -> long { return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); }, 0},
    {"ptrace_attach_init", [](int) -> long { return ptrace(PTRACE_ATTACH, 1, nullptr, nullptr); }, 0},
    {"io_uring_setup", [](int) -> long { return syscall(SYS_io_uring_setup, 4, nullptr); }, 0},
    {"memfd_create", [](int) -> long { return syscall(SYS_memfd_create, "x", 0U); }, 0},
    {"mmap_exec",
     [](int) -> long {
       void* p = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
       return p == MAP_FAILED ? -1 : 0;
     },
     0},
    {"mprotect_exec",
     [](int) -> long {
       void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
       if (p == MAP_FAILED) return -2;
       return mprotect(p, 4096, PROT_READ | PROT_EXEC);
     },
     0},
    {"madvise_hwpoison",
     [](int) -> long {
       void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
       if (p == MAP_FAILED) return -2;
       return madvise(p, 4096, MADV_HWPOISON);
     },
     0},
    {"futex_lock_pi",
     [](int) -> long {
       static int word = 0;
       return syscall(SYS_futex, &word, FUTEX_LOCK_PI_PRIVATE, 0, nullptr, nullptr, 0);
     },
     0},
    {"kill_init", [](int) -> long { return kill(1, 0); }, 0},
    // glibc's setrlimit is prlimit64(0, ...), which the filter lets through so that a pooled worker can
    // lower its limits to its invocation's; raising a hard limit needs CAP_SYS_RESOURCE, which the
    // worker no longer has, so the kernel refuses.
    {"raise_rlimit",
     [](int) -> long {
       const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
       return setrlimit(RLIMIT_AS, &unlimited);
     },
     EPERM},
    {"raw_setrlimit",
     [](int) -> long {
       const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
       return syscall(SYS_setrlimit, RLIMIT_AS, &unlimited);
     },
     0},
    {"prlimit_other_process",
     [](int) -> long {
       rlimit old{};
       return syscall(SYS_prlimit64, getppid(), RLIMIT_AS, nullptr, &old);
     },
     0},
    {"unshare_user_ns", [](int) -> long { return unshare(CLONE_NEWUSER); }, 0},
    {"prctl", [](int) -> long { return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); }, 0},
    {"personality", [](int) -> long { return personality(0xffffffffUL); }, 0},
    {"bpf", [](int) -> long { return syscall(SYS_bpf, 0, nullptr, 0); }, 0},
    {"userfaultfd", [](int) -> long { return syscall(SYS_userfaultfd, 0); }, 0},
    {"abort",
     [](int) -> long {
       std::abort();
       return 0;
     },
     0},
#if defined(__x86_64__)
    // i386 ABI from a 64-bit process: a native-only table would not see it.
    {"int80_getpid",
     [](int) -> long {
       long result = 20;  // __NR_getpid on i386
       asm volatile("int $0x80" : "+a"(result) : : "memory");
       return result;
     },
     0},
#endif
};

#if defined(__x86_64__)
// Whether this kernel runs i386 system calls at all: built without IA32 emulation (or booted with
// ia32_emulation=0) it answers `int 0x80` with SIGSEGV before any seccomp filter sees the call, and
// there is no i386 entry for the filter to guard. Probed in an unsandboxed child.
bool kernel_has_ia32_entry() {
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL);  // not a sanitizer's handler, which would report and exit normally
    long result = 20;          // __NR_getpid on i386
    asm volatile("int $0x80" : "+a"(result) : : "memory");
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status);
}
#endif

class IsolationWall : public ::testing::TestWithParam<ForbiddenCall> {};

TEST_P(IsolationWall, ForbiddenCallIsRefusedOrKills) {
  const ForbiddenCall call = GetParam();
#if defined(__x86_64__)
  if (std::string_view(call.name) == "int80_getpid" && !kernel_has_ia32_entry())
    GTEST_SKIP() << "this kernel has no i386 system-call entry (int 0x80 is SIGSEGV outside any sandbox)";
#endif
  const ChildOutcome outcome = run_in_child([&](int sock) {
    if (const int failed = sandbox_or_report(sock); failed != 0) return failed;
    errno = 0;
    const long result = call.probe(sock);
    const int err = errno;
    char line[64];
    // Fits in 64 bytes (a long and an int in decimal); the length is not needed.
    (void)std::snprintf(line, sizeof line, "returned %ld errno %d", result, err);
    send_text(sock, line);
    return 0;
  });
  ASSERT_FALSE(outcome.timed_out) << outcome.output;
  if (call.refused_errno == 0) {
    EXPECT_FALSE(outcome.exited) << call.name << " survived: " << outcome.output;
    EXPECT_EQ(outcome.signal, SIGSYS)
        << call.name << " ended by " << signal_name(outcome.signal) << ": " << outcome.output;
  } else {
    ASSERT_TRUE(outcome.exited) << call.name << " killed by " << signal_name(outcome.signal);
    EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
    EXPECT_EQ(outcome.output, "returned -1 errno " + std::to_string(call.refused_errno)) << call.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Calls, IsolationWall, ::testing::ValuesIn(kForbidden),
                         [](const ::testing::TestParamInfo<ForbiddenCall>& call_info) {
                           return call_info.param.name;
                         });

// --- the live worker, seen from the supervisor's side -------------------------------------------

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(IsolationSandbox, LiveWorkerShowsFilterNoNewPrivsOwnSessionAndOnlyItsSocket) {
  int child_socket = -1;  // as the child reports it
  std::string status;
  std::vector<int> fds;
  std::string stat_line;
  pid_t child_pid = 0;
  const ChildOutcome outcome = run_in_child(
      [&](int sock) {
        if (const int failed = sandbox_or_report(sock); failed != 0) return failed;
        const char ready[2] = {'R', static_cast<char>(sock)};
        if (write(sock, ready, 2) != 2) return 1;
        char go = 0;
        return read(sock, &go, 1) == 1 && go == 'G' ? 0 : 1;
      },
      [&](pid_t pid, int parent_fd) {
        child_pid = pid;
        char ready[2] = {};
        if (read(parent_fd, ready, 2) != 2 || ready[0] != 'R') return;
        child_socket = ready[1];
        status = read_file("/proc/" + std::to_string(pid) + "/status");
        stat_line = read_file("/proc/" + std::to_string(pid) + "/stat");
        Result<std::vector<int>> listed = list_open_fds(pid);
        if (listed) fds = listed.value();
        (void)write(parent_fd, "G", 1);
      });
  ASSERT_TRUE(outcome.exited) << signal_name(outcome.signal) << " " << outcome.output;
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_NE(status.find("Seccomp:\t2\n"), std::string::npos) << status;
  EXPECT_NE(status.find("NoNewPrivs:\t1\n"), std::string::npos) << status;
  EXPECT_EQ(fds, std::vector<int>{child_socket}) << "the worker must hold its socket and nothing else";
  // /proc/PID/stat: "pid (comm) state ppid pgrp session ..."; comm has no ')' here.
  const std::string after_comm = stat_line.substr(stat_line.rfind(')') + 2);
  std::istringstream fields(after_comm);
  std::string state;
  long ppid = 0, pgrp = 0, session = 0;
  fields >> state >> ppid >> pgrp >> session;
  EXPECT_EQ(session, child_pid) << "setsid: the worker leads its own session";
  EXPECT_EQ(pgrp, child_pid);
}

TEST(IsolationSandbox, KeptDescriptorIsTheSocket) {
  // Compare the kept descriptor's inode with the socket the parent created.
  std::string target;
  std::string expected;
  run_in_child(
      [&](int sock) {
        if (const int failed = sandbox_or_report(sock); failed != 0) return failed;
        send_text(sock, "R");
        char go = 0;
        return read(sock, &go, 1) == 1 ? 0 : 1;
      },
      [&](pid_t pid, int parent_fd) {
        char ready = 0;
        if (read(parent_fd, &ready, 1) != 1) return;
        Result<std::vector<int>> listed = list_open_fds(pid);
        if (listed && listed.value().size() == 1) {
          char buffer[128] = {};
          const std::string path =
              "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(listed.value()[0]);
          if (readlink(path.c_str(), buffer, sizeof buffer - 1) > 0) target = buffer;
        }
        (void)write(parent_fd, "G", 1);
      });
  EXPECT_EQ(target.rfind("socket:[", 0), 0u) << target;
}

// --- what a worker needs still works -----------------------------------------------------------

TEST(IsolationSandbox, AllowedOperationsStillWork) {
  const ChildOutcome outcome = run_in_child([](int sock) {
    if (const int failed = sandbox_or_report(sock); failed != 0) return failed;
    std::string report;
    // malloc of a few MiB through brk and mmap, touched so the pages are real.
    std::vector<char*> blocks;
    for (size_t size : {size_t{64}, size_t{4096}, size_t{1} << 20, size_t{8} << 20}) {
      char* block = static_cast<char*>(std::malloc(size));
      if (block == nullptr) return 10;
      std::memset(block, 0x5a, size);
      blocks.push_back(block);
    }
    char* grown = static_cast<char*>(std::realloc(blocks.back(), size_t{16} << 20));
    if (grown == nullptr) return 11;
    grown[(size_t{16} << 20) - 1] = 1;
    blocks.back() = grown;
    for (char* block : blocks) std::free(block);
    report += "malloc ";
    void* pages = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED || madvise(pages, 1 << 20, MADV_DONTNEED) != 0 || munmap(pages, 1 << 20) != 0)
      return 18;
    static int futex_word = 0;
    if (syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0) < 0) return 19;
    report += "madvise futex ";
    timespec ts{};
    for (clockid_t clock :
         {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID}) {
      if (clock_gettime(clock, &ts) != 0) return 12;
    }
    report += "clock ";
    unsigned char random[64];
    if (getrandom(random, sizeof random, 0) != static_cast<ssize_t>(sizeof random)) return 13;
    report += "getrandom ";
    const timespec nap{0, 1000000};
    if (nanosleep(&nap, nullptr) != 0) return 14;
    report += "sleep ";
    // Date's local time: glibc's tz probe is refused and falls back instead of dying.
    const time_t now = time(nullptr);
    tm local{};
    if (localtime_r(&now, &local) == nullptr) return 15;
    report += "localtime ";
    pollfd p{sock, POLLOUT, 0};
    if (poll(&p, 1, 0) != 1) return 16;
    report += "poll ";
    if (send(sock, "send ", 5, 0) != 5) return 17;
    send_text(sock, report + "write");
    // The whole glibc exit path (atexit, stdio flush, exit_group) is what this probe checks; the
    // child has a single thread, so exit() racing another thread's exit is not possible here. Not in
    // an ASan build: LeakSanitizer's exit-time check stops the world with ptrace, which the filter
    // forbids (workers end with _exit and are never leak-checked; the host processes are).
    if constexpr (base::kAddressSanitizer) _exit(0);
    std::exit(0);  // NOLINT(concurrency-mt-unsafe): the call under test, in a one-thread child
  });
  ASSERT_TRUE(outcome.exited) << "killed by " << signal_name(outcome.signal) << " after: " << outcome.output;
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  EXPECT_EQ(outcome.output, "send malloc madvise futex clock getrandom sleep localtime poll write");
}

// QuickJS itself runs under the filter: runtime creation, GC, sorting, typed arrays, regexps,
// BigInt, JSON, Date (local time included) and Math.random.
TEST(IsolationSandbox, QuickJsRunsUnderTheFilter) {
  const ChildOutcome outcome = run_in_child([](int sock) {
    if (const int failed = sandbox_or_report(sock); failed != 0) return failed;
    JSRuntime* rt = JS_NewRuntime();
    if (rt == nullptr) return 20;
    JSContext* ctx = JS_NewContext(rt);
    if (ctx == nullptr) return 21;
    const char* const script = R"(
      const a = [];
      for (let i = 0; i < 20000; i++) a.push({ i, s: 'x' + i });
      a.sort((x, y) => y.i - x.i);
      const f = new Float64Array(10000).map(Math.random).sort();
      const d = new Date(0);
      JSON.stringify({ first: a[0].i, floats: f.length, local: typeof d.getTimezoneOffset(),
                       text: d.toString().length > 10, re: /a+b/.test('aaab'), big: String(2n ** 70n),
                       round: JSON.parse(JSON.stringify(a.slice(0, 3))).length, now: Date.now() > 0 })
    )";
    JSValue value = JS_Eval(ctx, script, std::strlen(script), "<wall>", JS_EVAL_TYPE_GLOBAL);
    const char* text = JS_ToCString(ctx, JS_IsException(value) ? JS_GetException(ctx) : value);
    send_text(sock, text != nullptr ? text : "(null)");
    JS_FreeCString(ctx, text);
    JS_FreeValue(ctx, value);
    JS_RunGC(rt);
    JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
    return 0;
  });
  ASSERT_TRUE(outcome.exited) << "killed by " << signal_name(outcome.signal) << " after: " << outcome.output;
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(
      outcome.output,
      R"({"first":19999,"floats":10000,"local":"number","text":true,"re":true,"big":"1180591620717411303424",)"
      R"("round":3,"now":true})");
}

TEST(IsolationSandbox, PreparedFilterIsSmall) {
  const PreparedSandbox& prepared = prepared_sandbox();
  EXPECT_GE(prepared.landlock_abi, 1);
  EXPECT_GT(prepared.seccomp.instruction_count(), 10u);
  EXPECT_LT(prepared.seccomp.instruction_count(), 512u);
}

TEST(IsolationSandbox, FailedStepIsNamed) {
  // A socket number that is not open still sandboxes (nothing to keep); an invalid one fails at
  // the first step, before anything irreversible, and says which step.
  const ChildOutcome outcome = run_in_child([](int sock) {
    const Status status = sandbox_self(prepared_sandbox(), -1, test_rlimits(sock));
    return status.ok() ? 0 : kSandboxExitBase + static_cast<int>(status.error().step);
  });
  ASSERT_TRUE(outcome.exited);
  EXPECT_EQ(outcome.exit_code, kSandboxExitBase + static_cast<int>(Step::close_fds));
}

// Cost of one fork + sandbox_self + exit + reap, and of each step inside the child, for the report
// (not an assertion: timings on a shared machine are not a test). Run with
// --gtest_also_run_disabled_tests --gtest_filter='*SandboxCost*'.
TEST(IsolationSandbox, DISABLED_SandboxCost) {
  const PreparedSandbox& prepared = prepared_sandbox();
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  const RlimitPlan plan = test_rlimits(fds[1]);
  constexpr int kRounds = 300;
  for (const bool sandbox : {false, true}) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; ++i) {
      const pid_t pid = fork();
      if (pid == 0) _exit(sandbox && !sandbox_self(prepared, fds[1], plan).ok() ? 1 : 0);
      int status = 0;
      waitpid(pid, &status, 0);
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
    std::printf("fork+%s+exit+wait: %.1f us per child (%d rounds)\n", sandbox ? "sandbox_self" : "nothing",
                static_cast<double>(us.count()) / kRounds, kRounds);
  }
  // Inside the child: nanoseconds of each step, summed over the rounds.
  constexpr int kSteps = 6;
  long long total[kSteps] = {};
  for (int i = 0; i < kRounds; ++i) {
    const ChildOutcome outcome = run_in_child([&](int sock) {
      long long ns[kSteps] = {};
      timespec a{}, b{};
      auto lap = [&](int step) {
        clock_gettime(CLOCK_MONOTONIC, &b);
        ns[step] = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
        a = b;
      };
      const RlimitPlan child_plan = plan_worker_rlimits({64ull << 20, 5000}, {1ull << 40, 1ull << 40}, sock);
      const int keep[] = {sock};
      clock_gettime(CLOCK_MONOTONIC, &a);
      if (!close_fds_except(keep).ok()) return 1;
      lap(0);
      if (setsid() < 0) return 2;
      lap(1);
      if (!apply_rlimits(child_plan).ok()) return 3;
      lap(2);
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 4;
      lap(3);
      if (!landlock_restrict_self_no_rights(prepared.landlock_abi).ok()) return 5;
      lap(4);
      if (!prepared.seccomp.install().ok()) return 6;
      lap(5);
      return write(sock, ns, sizeof ns) == static_cast<ssize_t>(sizeof ns) ? 0 : 7;
    });
    ASSERT_EQ(outcome.output.size(), sizeof total) << outcome.exit_code;
    long long ns[kSteps];
    std::memcpy(ns, outcome.output.data(), sizeof ns);
    for (int s = 0; s < kSteps; ++s) total[s] += ns[s];
  }
  const char* const names[kSteps] = {"close_fds", "setsid", "rlimits", "no_new_privs", "landlock", "seccomp"};
  for (int s = 0; s < kSteps; ++s) {
    std::printf("  %-12s %7.1f us\n", names[s], static_cast<double>(total[s]) / kRounds / 1000.0);
  }
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace skillbox::isolation::testing
