// runner/worker_pool.h — the supervisor's link to the zygote, and the pool of workers it forks.
//
// One exec'd zygote (worker/zygote.h) per WorkerRunner, started on first use by exec of the worker
// executable, never by a bare fork of the threaded host; its control socket; the thread that reads it
// (spawned workers, their exit statuses, the zygote's death); and the pool: forked, sandboxed workers
// waiting for an invocation, any invocation. Each is forked with the rlimits of the host's ceilings
// (Limits::kMaxMemoryBytes, kMaxTimeoutMs) and lowers them to its invocation's once it has read it
// (worker/worker_child.h), so invocations with different limits and tenants share one pool and mixed
// traffic never empties it. A zygote that died is restarted on the next acquire(); the workers it had
// die with it and whoever waits for one learns it at once.
//
// Files: zygote_link.cpp (the zygote's process, its control socket and reader thread), worker_pool.cpp
// (spawn requests, the pool, exit statuses).
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/unique_fd.h"
#include "bus/worker_transport.h"
#include "skillbox/result.h"
#include "skillbox/skillbox.h"

namespace skillbox::runner {

/// The exit status of one worker, filled in by the control reader when the zygote reaps it.
struct ExitRecord {
  bool known = false;  // status is valid
  bool lost = false;   // the zygote died first: the status will never come
  int status = 0;
};

/// A forked, sandboxed worker the supervisor holds: its socket and a pidfd (the pid cannot be reused
/// while the zygote has not reaped it, and the zygote reports the reaping in ExitRecord).
struct Worker {
  pid_t pid = -1;
  base::UniqueFd socket;
  base::UniqueFd pidfd;
  std::shared_ptr<ExitRecord> exit;

  /// SIGKILL through the pidfd (never a recycled pid). Any thread; idempotent.
  void kill() const;
  /// True once the process has exited (its pidfd polls readable).
  [[nodiscard]] bool exited() const;
};

/// The worker executable HostOptions::worker_path names, else `skillbox-worker` beside the running
/// executable, else the installed one (skillbox.h, HostOptions::worker_path).
[[nodiscard]] std::filesystem::path find_worker(const HostOptions& options);

class WorkerPool {
 public:
  /// Starts nothing: the zygote starts on the first acquire(). `pool_size` workers wait forked once it
  /// runs (0: each worker is forked on demand).
  WorkerPool(std::filesystem::path worker_path, size_t pool_size);
  /// Stops the zygote, which kills and reaps every worker. No acquire() may be in progress.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// A sandboxed worker ready for any invocation: from the pool, else forked now (waiting at most
  /// kSpawnWait). The error says why process isolation cannot run (the kernel lacks a feature, the
  /// executable is missing, the zygote is stuck). Thread-safe.
  [[nodiscard]] Result<Worker> acquire() SKILLBOX_EXCLUDES(mu_, start_mu_);
  /// Waits (at most kExitStatusWait) for the zygote's report of how `w` ended; nullopt when it does not
  /// come (the zygote died first). Thread-safe.
  [[nodiscard]] std::optional<int> exit_status(const Worker& w) SKILLBOX_EXCLUDES(mu_);

  [[nodiscard]] std::vector<int> pooled_pids() const SKILLBOX_EXCLUDES(mu_);
  [[nodiscard]] int zygote_pid() const SKILLBOX_EXCLUDES(mu_);

 private:
  /// A spawn request in flight.
  struct SpawnSlot {
    bool for_pool = false;
    bool done = false;
    std::optional<Worker> worker;
    std::string error;
  };

  // zygote_link.cpp
  Result<void> ensure_zygote() SKILLBOX_EXCLUDES(mu_, start_mu_);
  Result<void> start_zygote() SKILLBOX_REQUIRES(start_mu_);
  Result<void> await_hello(base::UniqueFd& control, pid_t pid) SKILLBOX_REQUIRES(start_mu_);
  void stop_zygote() SKILLBOX_REQUIRES(start_mu_);
  void read_control(int fd, pid_t pid);  // the reader thread's body
  void on_control(const bus::ControlMessage& m, std::vector<base::UniqueFd>& fds) SKILLBOX_REQUIRES(mu_);
  void on_zygote_gone() SKILLBOX_REQUIRES(mu_);
  // worker_pool.cpp
  void on_spawned(const bus::ControlMessage& m, std::vector<base::UniqueFd>& fds) SKILLBOX_REQUIRES(mu_);
  bool request_spawn(uint64_t token) SKILLBOX_REQUIRES(mu_);
  void refill() SKILLBOX_REQUIRES(mu_);

  static constexpr int kZygoteControlFd = 3;

  const std::filesystem::path worker_path_;
  const size_t pool_size_;
  // Lock order: start_mu_ before mu_, never the other way.
  base::Mutex start_mu_;  // serializes starting and stopping the zygote
  mutable base::Mutex mu_;
  std::condition_variable cv_;  // with mu_: a spawn slot done, an exit status known, the zygote gone
  bool zygote_alive_ SKILLBOX_GUARDED_BY(mu_) = false;
  pid_t zygote_pid_ SKILLBOX_GUARDED_BY(mu_) = -1;
  std::optional<std::string> unsupported_
      SKILLBOX_GUARDED_BY(mu_);  // the kernel lacks what the sandbox needs
  base::UniqueFd control_ SKILLBOX_GUARDED_BY(mu_);
  std::thread reader_ SKILLBOX_GUARDED_BY(mu_);
  std::map<uint64_t, SpawnSlot> slots_ SKILLBOX_GUARDED_BY(mu_);
  std::map<pid_t, std::shared_ptr<ExitRecord>> exits_ SKILLBOX_GUARDED_BY(mu_);  // live workers of the zygote
  std::deque<Worker> pool_ SKILLBOX_GUARDED_BY(mu_);
  size_t pool_inflight_ SKILLBOX_GUARDED_BY(mu_) = 0;
  uint64_t next_token_ SKILLBOX_GUARDED_BY(mu_) = 1;
};

}  // namespace skillbox::runner
