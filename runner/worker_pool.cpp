// runner/worker_pool.cpp — WorkerPool: spawn requests, the pool of waiting workers, exit statuses
// (worker_pool.h).
#include "runner/worker_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <system_error>
#include <utility>

#include "bus/worker_transport.h"

namespace skillbox::runner {
namespace {

/// How long acquire() waits for a worker to be forked before it gives up (the zygote is stuck).
constexpr std::chrono::seconds kSpawnWait{10};
/// How long a worker's exit status may take to arrive from the zygote.
constexpr std::chrono::milliseconds kExitStatusWait{2000};

}  // namespace

void Worker::kill() const {
  if (pidfd) (void)syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
}

bool Worker::exited() const {
  pollfd p{pidfd.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

std::filesystem::path find_worker(const HostOptions& options) {
  if (!options.worker_path.empty()) return options.worker_path;
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path beside = self.parent_path() / "skillbox-worker";
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
#ifdef SKILLBOX_WORKER_INSTALL_PATH
  return SKILLBOX_WORKER_INSTALL_PATH;
#else
  return "skillbox-worker";
#endif
}

WorkerPool::WorkerPool(std::filesystem::path worker_path, size_t pool_size)
    : worker_path_(std::move(worker_path)), pool_size_(pool_size) {}

WorkerPool::~WorkerPool() {
  base::MutexLock start_lock(start_mu_);
  stop_zygote();
}

void WorkerPool::on_spawned(const bus::ControlMessage& m, std::vector<base::UniqueFd>& fds) {
  mu_.assert_held();
  if (fds.size() != 2) return;
  Worker w;
  w.pid = static_cast<pid_t>(m.pid);
  w.socket = std::move(fds[0]);
  w.pidfd = std::move(fds[1]);
  const int flags = fcntl(w.socket.get(), F_GETFL);
  (void)fcntl(w.socket.get(), F_SETFL, flags | O_NONBLOCK);
  w.exit = std::make_shared<ExitRecord>();
  exits_[w.pid] = w.exit;
  auto it = slots_.find(m.token);
  if (it == slots_.end()) {  // nobody wants it any more
    w.kill();
    return;
  }
  if (it->second.for_pool) {
    slots_.erase(it);
    if (pool_inflight_ > 0) --pool_inflight_;
    if (pool_.size() < pool_size_)
      pool_.push_back(std::move(w));
    else
      w.kill();
    return;
  }
  it->second.done = true;
  it->second.worker = std::move(w);
}

// Every worker is forked with the ceilings' rlimits and lowers them to its invocation's
// (worker/worker_child.h). False when the request could not be sent.
bool WorkerPool::request_spawn(uint64_t token) {
  mu_.assert_held();
  bus::ControlMessage m;
  m.type = static_cast<uint32_t>(bus::ControlType::spawn);
  m.token = token;
  m.memory_bytes = Limits::kMaxMemoryBytes;
  m.timeout_ms = Limits::kMaxTimeoutMs;
  return control_ && bus::send_control(control_.get(), m);
}

// Keeps pool + in-flight at the pool size.
void WorkerPool::refill() {
  mu_.assert_held();
  while (zygote_alive_ && pool_.size() + pool_inflight_ < pool_size_) {
    const uint64_t token = next_token_++;
    SpawnSlot slot;
    slot.for_pool = true;
    slots_.emplace(token, std::move(slot));
    if (!request_spawn(token)) {
      slots_.erase(token);
      return;
    }
    ++pool_inflight_;
  }
}

Result<Worker> WorkerPool::acquire() {
  if (Result<void> started = ensure_zygote(); !started) return std::move(started.error());
  base::MutexLock lock(mu_);
  while (!pool_.empty()) {
    Worker w = std::move(pool_.front());
    pool_.pop_front();
    refill();
    if (!w.exited()) return w;
    // It died while waiting (killed from outside): not this invocation's crash.
  }
  const uint64_t token = next_token_++;
  slots_.emplace(token, SpawnSlot{});
  if (!request_spawn(token)) {
    slots_.erase(token);
    return Error{"process isolation: the zygote is not accepting requests"};
  }
  refill();
  const bool arrived = lock.wait_for(cv_, kSpawnWait, [&] {
    mu_.assert_held();
    return slots_.at(token).done;
  });
  SpawnSlot done = std::move(slots_.at(token));
  slots_.erase(token);
  if (!arrived) return Error{"process isolation: no worker was forked within 10 s"};
  if (!done.worker) return Error{"process isolation: " + done.error};
  return std::move(*done.worker);
}

std::optional<int> WorkerPool::exit_status(const Worker& w) {
  base::MutexLock lock(mu_);
  lock.wait_for(cv_, kExitStatusWait, [&] { return w.exit->known || w.exit->lost; });
  if (w.exit->known) return w.exit->status;
  return std::nullopt;
}

std::vector<int> WorkerPool::pooled_pids() const {
  base::MutexLock lock(mu_);
  std::vector<int> out;
  for (const Worker& w : pool_) out.push_back(w.pid);
  return out;
}

int WorkerPool::zygote_pid() const {
  base::MutexLock lock(mu_);
  return zygote_pid_;
}

}  // namespace skillbox::runner
