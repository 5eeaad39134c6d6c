// runner/zygote_link.cpp — WorkerPool's link to its zygote: starting the process, its hello, the
// control reader thread, and cleaning up after the zygote's death (worker_pool.h).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/errno_text.h"
#include "bus/worker_transport.h"
#include "runner/worker_pool.h"

extern char** environ;

namespace skillbox::runner {
namespace {

using base::UniqueFd;
using bus::ControlMessage;
using bus::ControlType;

/// How long the zygote may take to report that it is ready.
constexpr std::chrono::seconds kZygoteHelloWait{10};

void reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

/// The zygote's environment. The host's (API keys, tokens) must not be in the zygote's memory, which
/// every worker inherits: only the sanitizers' settings pass. LD_BIND_NOW makes the dynamic linker bind
/// every symbol of every library in the zygote, once (the executable's own -z now covers only its own
/// relocations): a worker would otherwise bind each library call it makes first, a fifth of its page
/// faults.
std::vector<std::string> zygote_environment() {
  std::vector<std::string> env_text = {"LD_BIND_NOW=1"};
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view v(*e);
    if (v.starts_with("ASAN_OPTIONS=") || v.starts_with("UBSAN_OPTIONS=") || v.starts_with("LSAN_OPTIONS="))
      env_text.emplace_back(v);
  }
  return env_text;
}

/// posix_spawn of `path --zygote FD` with `theirs` as fd FD, default signal dispositions and an empty
/// mask (the host may ignore SIGCHLD or block signals; the zygote needs them as a fresh process has
/// them). Returns the pid, or the errno of the failure as a negative number.
pid_t spawn_zygote(const std::string& path, int theirs, int control_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, theirs, control_fd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all;
  sigset_t none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<std::string> env_text = zygote_environment();
  std::vector<char*> envp;
  for (std::string& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string path_arg = path;
  std::string flag = "--zygote";
  std::string fd_text = std::to_string(control_fd);
  char* argv[] = {path_arg.data(), flag.data(), fd_text.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, path.c_str(), &actions, &attr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc != 0 ? -rc : pid;
}

}  // namespace

Result<void> WorkerPool::ensure_zygote() {
  {
    base::MutexLock lock(mu_);
    if (zygote_alive_) return {};
    if (unsupported_) return Error{*unsupported_};
  }
  base::MutexLock start_lock(start_mu_);
  {
    base::MutexLock lock(mu_);
    if (zygote_alive_) return {};
    if (unsupported_) return Error{*unsupported_};
  }
  stop_zygote();  // joins the reader of a zygote that died, reaps it
  return start_zygote();
}

Result<void> WorkerPool::start_zygote() {
  start_mu_.assert_held();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return Error{"process isolation: socketpair failed: " + base::errno_text(errno)};
  UniqueFd ours(sv[0]);
  UniqueFd theirs(sv[1]);
  if (theirs.get() == kZygoteControlFd) {
    // dup2 onto itself would keep O_CLOEXEC and the zygote would lose its socket at exec.
    theirs.reset(fcntl(theirs.get(), F_DUPFD_CLOEXEC, 10));
    if (!theirs) return Error{"process isolation: fcntl failed: " + base::errno_text(errno)};
  }
  const std::string path = worker_path_.string();
  const pid_t pid = spawn_zygote(path, theirs.get(), kZygoteControlFd);
  theirs.reset();
  if (pid < 0) {
    return Error{"process isolation: cannot start the worker executable " + path + ": " +
                 base::errno_text(-pid) +
                 " (set HostOptions::worker_path, or choose in-process isolation explicitly with "
                 "--isolation=inprocess)"};
  }
  if (Result<void> hello = await_hello(ours, pid); !hello) return hello;
  base::MutexLock lock(mu_);
  zygote_pid_ = pid;
  control_ = std::move(ours);
  zygote_alive_ = true;
  reader_ = std::thread([this, fd = control_.get(), pid] { read_control(fd, pid); });
  return {};
}

Result<void> WorkerPool::await_hello(UniqueFd& control, pid_t pid) {
  start_mu_.assert_held();
  ControlMessage hello;
  std::vector<UniqueFd> fds;
  pollfd p{control.get(), POLLIN, 0};
  const int ready = ::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kZygoteHelloWait).count()));
  const int got = ready > 0 ? bus::recv_control(control.get(), hello, fds) : -1;
  if (got > 0 && hello.type == static_cast<uint32_t>(ControlType::hello) && hello.status == 0) return {};
  std::string why = got > 0 && hello.text[0] != '\0'
                        ? std::string(hello.text)
                        : "process isolation: the worker executable " + worker_path_.string() +
                              " did not start as a zygote (set HostOptions::worker_path, or choose "
                              "in-process isolation explicitly with --isolation=inprocess)";
  ::kill(pid, SIGKILL);
  reap(pid);
  if (got > 0 && hello.status == 2) {
    base::MutexLock lock(mu_);
    unsupported_ = why;  // the kernel will not grow the feature: fail closed at once from now on
  }
  return Error{std::move(why)};
}

void WorkerPool::stop_zygote() {
  start_mu_.assert_held();
  std::thread old;
  {
    base::MutexLock lock(mu_);
    if (control_) ::shutdown(control_.get(), SHUT_RDWR);  // the zygote sees EOF, kills and reaps all
    old = std::move(reader_);
  }
  if (old.joinable()) old.join();
  base::MutexLock lock(mu_);
  control_.reset();
}

void WorkerPool::read_control(int fd, pid_t pid) {
  for (;;) {
    ControlMessage m;
    std::vector<UniqueFd> fds;
    if (bus::recv_control(fd, m, fds) <= 0) break;
    base::MutexLock lock(mu_);
    on_control(m, fds);
    cv_.notify_all();
  }
  {
    base::MutexLock lock(mu_);
    on_zygote_gone();
    cv_.notify_all();
  }
  reap(pid);
}

void WorkerPool::on_control(const ControlMessage& m, std::vector<UniqueFd>& fds) {
  mu_.assert_held();
  switch (static_cast<ControlType>(m.type)) {
    case ControlType::spawned:
      on_spawned(m, fds);
      break;
    case ControlType::spawn_failed:
      if (auto it = slots_.find(m.token); it != slots_.end()) {
        it->second.done = true;
        it->second.error = "the zygote could not fork a worker: " + std::string(m.text);
        if (it->second.for_pool) {
          slots_.erase(it);
          if (pool_inflight_ > 0) --pool_inflight_;
        }
      }
      break;
    case ControlType::exited:
      if (auto it = exits_.find(static_cast<pid_t>(m.pid)); it != exits_.end()) {
        it->second->known = true;
        it->second->status = static_cast<int>(m.status);
        exits_.erase(it);
      }
      break;
    default:
      break;
  }
}

// The zygote is gone: its workers die with it (PDEATHSIG); whoever waits for one learns it now.
void WorkerPool::on_zygote_gone() {
  mu_.assert_held();
  zygote_alive_ = false;
  zygote_pid_ = -1;
  for (auto& [worker_pid, record] : exits_) record->lost = true;
  exits_.clear();
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (it->second.for_pool) {
      it = slots_.erase(it);
      continue;
    }
    it->second.done = true;
    it->second.error = "the zygote died before it forked the worker";
    ++it;
  }
  pool_inflight_ = 0;
  for (Worker& w : pool_) w.kill();
  pool_.clear();
}

}  // namespace skillbox::runner
