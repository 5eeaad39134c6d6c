#include "worker/zygote.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "base/sanitizer.h"
#include "base/unique_fd.h"
#include "bundle_db/db_engine.h"
#include "bus/worker_transport.h"
#include "engine/pristine.h"
#include "engine/session.h"
#include "isolation/fd_hygiene.h"
#include "isolation/rlimits.h"
#include "isolation/sandbox.h"
#include "skillbox/policy.h"
#include "worker/worker_child.h"

namespace skillbox::worker {
namespace {

// Address space of each pristine realm the zygote keeps: the image (~100 KB) and the heap of a typical
// run; a worker that needs more takes malloc'd chunks past it. Kept small because every worker's
// RLIMIT_AS baseline includes it.
constexpr size_t kZygoteRegionBytes = 8ull * 1024 * 1024;

using bus::ControlMessage;
using bus::ControlType;
using bus::kWorkerExitBadFrame;
using bus::kWorkerSocketFd;
using bus::recv_control;
using bus::send_control;

void set_text(ControlMessage& m, const std::string& text) {
  std::snprintf(m.text, sizeof(m.text), "%s", text.c_str());
}

// The engine needs Limits::stack_bytes plus kNativeStackReserve of real stack (engine/session.h).
// The main thread's stack grows on demand up to RLIMIT_STACK as it is when the stack grows, so
// raising the soft limit here (never above the hard one) is enough; children inherit it.
void raise_stack_limit() {
  constexpr rlim_t kWanted = Limits::kMaxStackBytes + engine::kNativeStackReserve + 4ull * 1024 * 1024;
  rlimit r{};
  if (getrlimit(RLIMIT_STACK, &r) != 0) return;
  if (r.rlim_cur != RLIM_INFINITY && r.rlim_cur < kWanted) {
    r.rlim_cur = r.rlim_max == RLIM_INFINITY ? kWanted : std::min<rlim_t>(kWanted, r.rlim_max);
    (void)setrlimit(RLIMIT_STACK, &r);
  }
}

class Zygote {
 public:
  Zygote(int control, isolation::PreparedSandbox prepared, const std::function<void(JSContext*)>& extra_api)
      : control_(control), prepared_(std::move(prepared)), extra_api_(extra_api) {}

  int run() {
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &chld, nullptr) != 0) return 1;
    base::UniqueFd sfd(signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sfd) return 1;
    for (;;) {
      pollfd fds[2] = {{control_, POLLIN, 0}, {sfd.get(), POLLIN, 0}};
      if (poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if ((fds[1].revents & POLLIN) != 0) {
        signalfd_siginfo info{};
        while (read(sfd.get(), &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        }
        reap(WNOHANG);
      }
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        ControlMessage m;
        std::vector<base::UniqueFd> fds_in;
        const int got = recv_control(control_, m, fds_in);
        if (got <= 0) break;  // the supervisor is gone (or spoke nonsense): end everything
        if (m.type == static_cast<uint32_t>(ControlType::spawn)) spawn(m);
      }
    }
    // Kill and reap every worker: none outlives its zygote (they also have PDEATHSIG).
    for (pid_t pid : children_) kill(pid, SIGKILL);
    while (!children_.empty()) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, 0);
      if (pid < 0 && errno == EINTR) continue;
      if (pid < 0) break;
      children_.erase(pid);
    }
    return 0;
  }

 private:
  void reap(int flags) {
    for (;;) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, flags);
      if (pid <= 0) return;
      children_.erase(pid);
      ControlMessage m;
      m.type = static_cast<uint32_t>(ControlType::exited);
      m.pid = pid;
      m.status = status;
      (void)send_control(control_, m);
    }
  }

  void fail(uint64_t token, int err, const std::string& what) {
    ControlMessage m;
    m.type = static_cast<uint32_t>(ControlType::spawn_failed);
    m.token = token;
    m.status = err;
    set_text(m, what + ": " + std::strerror(err));
    (void)send_control(control_, m);
  }

  void spawn(const ControlMessage& request) {
    // Measured before every fork: RLIMIT_AS/DATA count what the zygote has mapped by then. The request's
    // limits are the host's ceilings for a pooled worker; the child lowers them to its invocation's.
    isolation::Result<isolation::MemoryBaseline> baseline = isolation::measure_memory_baseline();
    if (!baseline) return fail(request.token, baseline.error().sys_errno, "reading /proc/self/status");
    const isolation::RlimitPlan plan = isolation::plan_worker_rlimits(
        {request.memory_bytes, request.timeout_ms}, baseline.value(), kWorkerSocketFd);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
      return fail(request.token, errno, "socketpair");
    base::UniqueFd mine(sv[0]);
    base::UniqueFd theirs(sv[1]);
    const pid_t zygote = getpid();
    const pid_t pid = fork();
    if (pid < 0) return fail(request.token, errno, "fork");
    if (pid == 0) child(theirs.get(), zygote, plan, baseline.value());
    // No reap can happen before this (the zygote reaps only in its loop), so the pid is still ours.
    base::UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    children_.insert(pid);
    if (!pidfd) {
      const int err = errno;
      kill(pid, SIGKILL);
      return fail(request.token, err, "pidfd_open");
    }
    theirs.reset();
    ControlMessage m;
    m.type = static_cast<uint32_t>(ControlType::spawned);
    m.token = request.token;
    m.pid = pid;
    const int pass[] = {mine.get(), pidfd.get()};
    if (!send_control(control_, m, pass)) kill(pid, SIGKILL);
  }

  [[noreturn]] void child(int socket, pid_t zygote, const isolation::RlimitPlan& plan,
                          const isolation::MemoryBaseline& baseline) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // Dies with the zygote; the check closes the race of a zygote that died before the prctl.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != zygote) _exit(kWorkerExitBadFrame);
    if (socket != kWorkerSocketFd && dup2(socket, kWorkerSocketFd) < 0) _exit(kWorkerExitBadFrame);
    // Sanitizer builds keep stderr, so that a report from inside the worker reaches the test's
    // output (and, with halt_on_error, ends the worker as `crashed`) instead of a closed descriptor.
    const int diagnostics = base::kSanitizerBuild ? STDERR_FILENO : -1;
    if (isolation::Status s = isolation::sandbox_self(prepared_, kWorkerSocketFd, plan, diagnostics); !s)
      _exit(isolation::kSandboxExitBase + static_cast<int>(s.error().step));
    _exit(run_worker_child(kWorkerSocketFd, baseline, extra_api_));
  }

  int control_;
  isolation::PreparedSandbox prepared_;
  const std::function<void(JSContext*)>& extra_api_;
  std::set<pid_t> children_;
};

}  // namespace

int zygote_main(int control_fd, const std::function<void(JSContext*)>& extra_api) {
  signal(SIGPIPE, SIG_IGN);
  const int keep[] = {0, 1, 2, control_fd};
  if (!isolation::close_fds_except(keep)) return 1;
  raise_stack_limit();
  // SQLite is set up once here, before any fork: every worker inherits it ready, and seeds random()
  // from getrandom(2) through the bundle database's private VFS (the sandbox opens no /dev/urandom).
  bundle_db::DbEngine::prefer_private_vfs();

  // The pristine runtimes (engine/pristine.h), one per variant, built once here: every worker inherits
  // them through fork and runs on its copy-on-write pages, building nothing. A zygote that cannot make
  // one still works; its workers build their runtime.
  (void)engine::thread_realm(false, kZygoteRegionBytes);
  (void)engine::thread_realm(true, kZygoteRegionBytes);

  isolation::Result<isolation::PreparedSandbox> prepared = isolation::prepare_sandbox();
  ControlMessage hello;
  hello.type = static_cast<uint32_t>(ControlType::hello);
  if (!prepared) {
    hello.status = prepared.error().missing_feature ? 2 : 1;
    set_text(hello, isolation::describe(prepared.error()));
    (void)send_control(control_fd, hello);
    return 1;
  }
  hello.value = static_cast<uint64_t>(prepared.value().landlock_abi);
  if (!send_control(control_fd, hello)) return 1;
  Zygote zygote(control_fd, std::move(prepared.value()), extra_api);
  return zygote.run();
}

}  // namespace skillbox::worker
