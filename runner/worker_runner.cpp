// runner/worker_runner.cpp — WorkerRunner: the supervisor side of process isolation.
//
// Pieces:
//   - ZygoteLink: one exec'd zygote (worker/zygote.h), its control socket and the thread that reads
//     it (spawned workers, their exit statuses, the zygote's death). Restarted on the next run after
//     it died; the workers it had are killed and their invocations reported `crashed`.
//   - the pool: forked, sandboxed workers waiting for an invocation, any invocation: each is forked
//     with the rlimits of the host's ceilings (Limits::kMaxMemoryBytes, kMaxTimeoutMs) and lowers
//     them to its invocation's once it has read it (worker/worker_child.h), so invocations with
//     different limits share one pool and mixed traffic never empties it.
//   - run(): on the caller's thread, which supervises its worker: sends the invocation frame, answers
//     each request frame with a HostEndpoint (the same capabilities and policy as in-process), relays
//     asynchronous replies (http, completed on the capability's I/O thread) through an eventfd, and
//     kills the worker through its pidfd at the deadline or at the first frame it must not send.
//
// Every frame from a worker is hostile: decode failures, a length above the limit, a request id that
// does not increase, anything after the result, a closed socket without a result — each ends that
// worker (SIGKILL) with outcome `crashed` and a message naming the violation. Nothing a worker sends
// can throw out of run() or reach another invocation.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "base/errno_text.h"
#include "base/mutex.h"
#include "base/unique_fd.h"
#include "bus/codec.h"
#include "bus/memory_budget.h"
#include "bus/stop_token.h"
#include "bus/worker_frames.h"
#include "bus/worker_transport.h"
#include "isolation/sandbox.h"
#include "runner/host_endpoint.h"
#include "runner/invocation_setup.h"
#include "runner/js_thread_pool.h"
#include "runner/live_run.h"
#include "runner/skill_reader.h"
#include "runner/source_cache.h"
#include "skillbox/skillbox.h"

extern char** environ;

namespace skillbox {
namespace {

using Clock = std::chrono::steady_clock;
using base::UniqueFd;
using bus::ControlMessage;
using bus::ControlType;
using bus::recv_control;
using bus::send_control;

/// How long after the deadline a worker may still send the timeout result its own engine noticed
/// before it is killed. Short: a worker stuck in a native call is killed this late at most.
constexpr std::chrono::milliseconds kKillGrace{20};
/// How long the zygote may take to report that it is ready, and a worker's exit status to arrive.
constexpr std::chrono::seconds kZygoteHelloWait{10};
constexpr std::chrono::milliseconds kExitStatusWait{2000};
/// How long run() waits for a worker to be forked before it gives up (the zygote is stuck).
constexpr std::chrono::seconds kSpawnWait{10};

/// The largest frame a worker may send for an invocation with `memory_bytes` of heap. Everything a
/// frame carries (a request's body, a log line, the result) was a value in the worker's heap, and a
/// string of n UTF-16 units is at most 3n bytes of UTF-8: twice the heap plus room for the envelope
/// covers every honest frame. A larger one comes from a worker that was taken over, and refusing it
/// before it is buffered keeps the supervisor's memory within a multiple of the run's limit (one
/// 250 MiB log frame at memory_mb 16 once took the supervisor to 1 GB).
size_t max_frame_from_worker(uint64_t memory_bytes) {
  constexpr uint64_t kEnvelopeBytes = 1024 * 1024;
  return static_cast<size_t>(std::min<uint64_t>(bus::kMaxFrameBytes, 2 * memory_bytes + kEnvelopeBytes));
}

RunResult failure(Outcome outcome, std::string name, std::string message) {
  RunResult r;
  r.outcome = outcome;
  r.error = ErrorInfo{std::move(name), std::move(message), "", ""};
  return r;
}

RunResult isolation_unavailable(const std::string& why) {
  return failure(Outcome::internal, "IsolationUnavailable", why);
}

bool pidfd_kill(int pidfd) {
  return syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) == 0;
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
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

/// The exit status of one worker, filled in by the control reader when the zygote reaps it.
struct ExitRecord {
  bool known = false;  // status is valid
  bool lost = false;   // the zygote died first: the status will never come
  int status = 0;
};

/// A forked, sandboxed worker the supervisor holds.
struct Worker {
  pid_t pid = -1;
  UniqueFd socket;
  UniqueFd pidfd;
  std::shared_ptr<ExitRecord> exit;

  void kill() const {
    if (pidfd) (void)pidfd_kill(pidfd.get());
  }
  /// True once the process has exited (its pidfd polls readable).
  [[nodiscard]] bool exited() const {
    pollfd p{pidfd.get(), POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }
};

/// A spawn request in flight.
struct SpawnSlot {
  bool for_pool = false;
  bool done = false;
  std::optional<Worker> worker;
  std::string error;
};

/// Replies of asynchronous requests, completed on the http I/O thread, waiting for the supervising
/// thread; the eventfd wakes its poll.
class RelaySink final : public bus::CompletionSink {
 public:
  RelaySink() : wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  void complete(uint64_t request_id, bus::Reply reply) override {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      replies_.emplace_back(request_id, std::move(reply));
    } catch (const std::bad_alloc&) {
      return;  // the request stays pending until the deadline
    }
    const uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof(one));
  }
  std::deque<std::pair<uint64_t, bus::Reply>> take() {
    uint64_t count = 0;
    (void)!::read(wake_.get(), &count, sizeof(count));
    std::lock_guard<std::mutex> lock(mutex_);
    std::deque<std::pair<uint64_t, bus::Reply>> out;
    out.swap(replies_);
    return out;
  }
  /// Wakes the supervising thread without a reply (a cancellation). Any thread; only a write(2).
  void wake() const {
    const uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof(one));
  }
  [[nodiscard]] int fd() const { return wake_.get(); }
  [[nodiscard]] bool valid() const { return wake_.valid(); }

 private:
  UniqueFd wake_;
  std::mutex mutex_;
  std::deque<std::pair<uint64_t, bus::Reply>> replies_;
};

}  // namespace

struct WorkerRunner::Impl {
  explicit Impl(HostOptions o)
      : options(std::move(o)),
        default_tenant(runner::make_default_tenant(options)),
        worker_path(find_worker(options)) {}

  ~Impl() {
    base::MutexLock start_lock(start_mu);
    stop_zygote();
  }

  // ---- the zygote -------------------------------------------------------------------------------

  /// Starts the zygote if none is running. Empty on success, else why it cannot run.
  std::optional<std::string> ensure_zygote() {
    {
      base::MutexLock lock(mu);
      if (zygote_alive) return std::nullopt;
      if (unsupported) return unsupported;
    }
    base::MutexLock start_lock(start_mu);
    {
      base::MutexLock lock(mu);
      if (zygote_alive) return std::nullopt;
      if (unsupported) return unsupported;
    }
    stop_zygote();  // joins the reader of a zygote that died, reaps it
    return start_zygote();
  }

  std::optional<std::string> start_zygote() SKILLBOX_REQUIRES(start_mu) {
    start_mu.assert_held();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
      return "process isolation: socketpair failed: " + base::errno_text(errno);
    UniqueFd ours(sv[0]);
    UniqueFd theirs(sv[1]);
    if (theirs.get() == kZygoteControlFd) {
      // dup2 onto itself would keep O_CLOEXEC and the zygote would lose its socket at exec.
      theirs.reset(fcntl(theirs.get(), F_DUPFD_CLOEXEC, 10));
      if (!theirs) return "process isolation: fcntl failed: " + base::errno_text(errno);
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, theirs.get(), kZygoteControlFd);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // The host may ignore SIGCHLD or block signals; the zygote needs them as a fresh process has them.
    sigset_t all;
    sigset_t none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    // The host's environment (API keys, tokens) must not be in the zygote's memory, which every
    // worker inherits: only the sanitizers' settings pass. LD_BIND_NOW makes the dynamic linker bind
    // every symbol of every library in the zygote, once (the executable's own -z now covers only its
    // own relocations): a worker would otherwise bind each library call it makes first, a fifth of its
    // page faults.
    std::vector<std::string> env_text = {"LD_BIND_NOW=1"};
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const std::string_view v(*e);
      if (v.starts_with("ASAN_OPTIONS=") || v.starts_with("UBSAN_OPTIONS=") || v.starts_with("LSAN_OPTIONS="))
        env_text.emplace_back(v);
    }
    std::vector<char*> envp;
    for (std::string& s : env_text) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string path = worker_path.string();
    std::string flag = "--zygote";
    std::string fd_text = std::to_string(kZygoteControlFd);
    char* argv[] = {path.data(), flag.data(), fd_text.data(), nullptr};
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, path.c_str(), &actions, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    theirs.reset();
    if (rc != 0) {
      return "process isolation: cannot start the worker executable " + path + ": " + base::errno_text(rc) +
             " (set HostOptions::worker_path, or choose in-process isolation explicitly with "
             "--isolation=inprocess)";
    }
    // Hello: ready, or why not.
    ControlMessage hello;
    std::vector<UniqueFd> fds;
    pollfd p{ours.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kZygoteHelloWait).count()));
    const int got = ready > 0 ? recv_control(ours.get(), hello, fds) : -1;
    if (got <= 0 || hello.type != static_cast<uint32_t>(ControlType::hello) || hello.status != 0) {
      std::string why = got > 0 && hello.text[0] != '\0'
                            ? std::string(hello.text)
                            : "process isolation: the worker executable " + path +
                                  " did not start as a zygote (set HostOptions::worker_path, or choose "
                                  "in-process isolation explicitly with --isolation=inprocess)";
      ::kill(pid, SIGKILL);
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (got > 0 && hello.status == 2) {
        base::MutexLock lock(mu);
        unsupported = why;  // the kernel will not grow the feature: fail closed at once from now on
      }
      return why;
    }
    base::MutexLock lock(mu);
    zygote_pid = pid;
    control = std::move(ours);
    zygote_alive = true;
    landlock_abi = static_cast<int>(hello.value);
    reader = std::thread([this, fd = control.get(), pid] { read_control(fd, pid); });
    return std::nullopt;
  }

  // Stops a running zygote (the destructor) or cleans up after a dead one.
  void stop_zygote() SKILLBOX_REQUIRES(start_mu) {
    start_mu.assert_held();
    std::thread old;
    {
      base::MutexLock lock(mu);
      if (control) ::shutdown(control.get(), SHUT_RDWR);  // the zygote sees EOF, kills and reaps all
      old = std::move(reader);
    }
    if (old.joinable()) old.join();
    base::MutexLock lock(mu);
    control.reset();
  }

  // The reader thread of one zygote.
  void read_control(int fd, pid_t pid) {
    for (;;) {
      ControlMessage m;
      std::vector<UniqueFd> fds;
      const int got = recv_control(fd, m, fds);
      if (got <= 0) break;
      base::MutexLock lock(mu);
      switch (static_cast<ControlType>(m.type)) {
        case ControlType::spawned:
          on_spawned(m, fds);
          break;
        case ControlType::spawn_failed:
          if (auto it = slots.find(m.token); it != slots.end()) {
            it->second.done = true;
            it->second.error = "the zygote could not fork a worker: " + std::string(m.text);
            if (it->second.for_pool) {
              slots.erase(it);
              if (pool_inflight > 0) --pool_inflight;
            }
          }
          break;
        case ControlType::exited:
          if (auto it = exits.find(static_cast<pid_t>(m.pid)); it != exits.end()) {
            it->second->known = true;
            it->second->status = static_cast<int>(m.status);
            exits.erase(it);
          }
          break;
        default:
          break;
      }
      cv.notify_all();
    }
    // The zygote is gone: its workers die with it (PDEATHSIG); whoever waits for one learns it now.
    {
      base::MutexLock lock(mu);
      zygote_alive = false;
      zygote_pid = -1;
      for (auto& [worker_pid, record] : exits) record->lost = true;
      exits.clear();
      for (auto it = slots.begin(); it != slots.end();) {
        if (it->second.for_pool) {
          it = slots.erase(it);
          continue;
        }
        it->second.done = true;
        it->second.error = "the zygote died before it forked the worker";
        ++it;
      }
      pool_inflight = 0;
      for (Worker& w : pool) w.kill();
      pool.clear();
      cv.notify_all();
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }

  void on_spawned(const ControlMessage& m, std::vector<UniqueFd>& fds) SKILLBOX_REQUIRES(mu) {
    mu.assert_held();
    if (fds.size() != 2) return;
    Worker w;
    w.pid = static_cast<pid_t>(m.pid);
    w.socket = std::move(fds[0]);
    w.pidfd = std::move(fds[1]);
    const int flags = fcntl(w.socket.get(), F_GETFL);
    (void)fcntl(w.socket.get(), F_SETFL, flags | O_NONBLOCK);
    w.exit = std::make_shared<ExitRecord>();
    exits[w.pid] = w.exit;
    auto it = slots.find(m.token);
    if (it == slots.end()) {  // nobody wants it any more
      w.kill();
      return;
    }
    if (it->second.for_pool) {
      slots.erase(it);
      if (pool_inflight > 0) --pool_inflight;
      if (pool.size() < options.worker_pool_size)
        pool.push_back(std::move(w));
      else
        w.kill();
      return;
    }
    it->second.done = true;
    it->second.worker = std::move(w);
  }

  // Asks the zygote for a worker; false when the request could not be sent. Every worker is forked
  // with the ceilings' rlimits and lowers them to its invocation's (worker/worker_child.h).
  bool request_spawn(uint64_t token) SKILLBOX_REQUIRES(mu) {
    mu.assert_held();
    ControlMessage m;
    m.type = static_cast<uint32_t>(ControlType::spawn);
    m.token = token;
    m.memory_bytes = Limits::kMaxMemoryBytes;
    m.timeout_ms = Limits::kMaxTimeoutMs;
    return control && send_control(control.get(), m);
  }

  // Keeps pool + in-flight at the pool size.
  void refill_pool() SKILLBOX_REQUIRES(mu) {
    mu.assert_held();
    while (zygote_alive && pool.size() + pool_inflight < options.worker_pool_size) {
      const uint64_t token = next_token++;
      SpawnSlot slot;
      slot.for_pool = true;
      slots.emplace(token, std::move(slot));
      if (!request_spawn(token)) {
        slots.erase(token);
        return;
      }
      ++pool_inflight;
    }
  }

  /// A sandboxed worker, ready for any limits: from the pool, else forked now.
  Result<Worker, std::string> acquire() {
    if (auto why = ensure_zygote()) return *why;
    base::MutexLock lock(mu);
    while (!pool.empty()) {
      Worker w = std::move(pool.front());
      pool.pop_front();
      refill_pool();
      if (!w.exited()) return w;
      // It died while waiting (killed from outside): not this invocation's crash.
    }
    const uint64_t token = next_token++;
    slots.emplace(token, SpawnSlot{});
    if (!request_spawn(token)) {
      slots.erase(token);
      return std::string("process isolation: the zygote is not accepting requests");
    }
    refill_pool();
    const bool arrived = lock.wait_for(cv, kSpawnWait, [&] {
      mu.assert_held();
      return slots.at(token).done;
    });
    SpawnSlot done = std::move(slots.at(token));
    slots.erase(token);
    if (!arrived) return std::string("process isolation: no worker was forked within 10 s");
    if (!done.worker) return "process isolation: " + done.error;
    return std::move(*done.worker);
  }

  /// Waits (bounded) for the zygote's report of how `w` ended.
  std::optional<int> exit_status(const Worker& w) {
    base::MutexLock lock(mu);
    lock.wait_for(cv, kExitStatusWait, [&] { return w.exit->known || w.exit->lost; });
    if (w.exit->known) return w.exit->status;
    return std::nullopt;
  }

  RunResult supervise(Worker& w, const Invocation& invocation, const Limits& limits, Clock::time_point start,
                      Clock::time_point deadline, bus::SkillSources sources);

  HostOptions options;
  std::shared_ptr<const TenantContext> default_tenant;  // for invocations without a tenant
  // The skill's sources, read on the supervisor side and revalidated by stat on every run
  // (runner/source_cache.h), as in-process; they travel to the worker in its invocation frame.
  runner::SourceCache source_cache;
  std::filesystem::path worker_path;
  runner::JsThreadPool observer_threads{2};  // supervise observed runs (Observer: not the caller's thread)
  static constexpr int kZygoteControlFd = 3;

  // Lock order: start_mu before mu, never the other way.
  base::Mutex start_mu;  // serializes starting and stopping the zygote
  mutable base::Mutex mu;
  std::condition_variable cv;  // with mu: a spawn slot done, an exit status known, the zygote gone
  bool zygote_alive SKILLBOX_GUARDED_BY(mu) = false;
  pid_t zygote_pid SKILLBOX_GUARDED_BY(mu) = -1;
  int landlock_abi SKILLBOX_GUARDED_BY(mu) = 0;
  std::optional<std::string> unsupported SKILLBOX_GUARDED_BY(mu);  // the kernel lacks what the sandbox needs
  UniqueFd control SKILLBOX_GUARDED_BY(mu);
  std::thread reader SKILLBOX_GUARDED_BY(mu);
  std::map<uint64_t, SpawnSlot> slots SKILLBOX_GUARDED_BY(mu);
  std::map<pid_t, std::shared_ptr<ExitRecord>> exits SKILLBOX_GUARDED_BY(mu);  // live workers of the zygote
  std::deque<Worker> pool SKILLBOX_GUARDED_BY(mu);
  size_t pool_inflight SKILLBOX_GUARDED_BY(mu) = 0;
  uint64_t next_token SKILLBOX_GUARDED_BY(mu) = 1;
};

namespace {

struct WorkerState {
  uint64_t last_id = 0;
  std::string last_request;
  bus::ProgressFrame progress;
  std::optional<bus::ResultFrame> result;
  std::set<uint64_t> pending_async;
  std::string violation;  // set: the worker broke the protocol and is killed
};

std::string post_mortem_text(const WorkerState& s) {
  std::string text = "last reported: " + std::to_string(s.progress.steps) + " steps, heap peak " +
                     std::to_string(s.progress.heap_peak_bytes) + " bytes";
  text += s.last_request.empty() ? ", no host request" : ", last host request " + s.last_request;
  return text;
}

}  // namespace

RunResult WorkerRunner::Impl::supervise(Worker& w, const Invocation& invocation, const Limits& limits,
                                        Clock::time_point start, Clock::time_point deadline,
                                        bus::SkillSources sources) {
  uint64_t source_bytes = 0;
  for (const auto& [name, text] : sources.files) source_bytes += name.size() + text.size();
  // The invocation frame first: the worker wakes up and decodes it while the host side below is set
  // up (a pooled worker is asleep until it arrives; waking it takes tens of microseconds). A failed
  // write is handled once that is done, like any other end of the run.
  std::optional<Error> send_error;
  {
    bus::InvocationFrame frame;
    frame.sources = std::move(sources);
    frame.format = invocation.skill.manifest().format;
    frame.skill_id = invocation.skill.manifest().id;
    frame.memory_bytes = limits.memory_bytes;
    frame.steps = limits.steps;
    frame.stack_bytes = limits.stack_bytes;
    frame.timeout_ms = limits.timeout_ms;
    frame.deadline_ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count());
    frame.export_name = invocation.export_name;
    frame.input_json = invocation.input_json;
    if (frame.format == SkillFormat::openhuman)
      frame.db_quota_bytes = invocation.skill.manifest().permissions.db.quota_bytes;
    const bus::Bytes bytes = bus::encode_invocation(frame);
    const bus::Bytes* frames[] = {&bytes};
    if (Result<void, Error> sent = bus::write_frames(w.socket.get(), frames, deadline); !sent)
      send_error = sent.error();
  }
  RelaySink sink;
  if (!sink.valid()) {
    w.kill();
    return failure(Outcome::internal, "InternalError", "eventfd failed: " + base::errno_text(errno));
  }
  bus::StopToken stop(deadline);
  // limits.memory_mb covers the worker's heap (as it last reported it) plus the host buffers held here
  // for it, as in-process (bus/memory_budget.h); the worker's own rlimit is the wall behind its heap.
  bus::MemoryBudget budget(limits.memory_bytes);
  bus::HostBytes sources_held(&budget);
  (void)sources_held.charge(source_bytes);  // within the limit: read_skill_sources capped them at it
  // Log lines and host-call events reach the observer from this thread as the worker's request frames
  // are served (HostEndpoint::observe); close() in finish() keeps them from running after run().
  runner::LiveRun live(invocation.observer);
  const TenantContext& tenant = invocation.tenant ? *invocation.tenant : *default_tenant;
  runner::HostEndpoint endpoint(runner::make_invocation_context(invocation, options, tenant), sink, stop,
                                &budget);
  endpoint.require_owner(invocation.skill.dir());
  endpoint.observe(live);
  endpoint.serve_db_in_worker();
  WorkerState state;
  // Cancellation from another thread: a flag and a wake-up of the poll below; the worker is killed
  // there. Declared after what the callback touches, so it is unsubscribed before they go.
  std::atomic<bool> cancel_requested{false};
  CancelToken::Subscription cancel_sub = invocation.cancel.subscribe([&cancel_requested, &sink, &stop] {
    // The token first: a request the supervisor is serving right now (a wait for the workspace lock
    // or the store's write lock) ends at once instead of at the deadline.
    stop.raise();
    cancel_requested.store(true, std::memory_order_release);
    sink.wake();
  });

  const auto finish = [&](RunResult r) {
    stop.raise();
    endpoint.cancel_all();
    live.close();
    const uint64_t steps = r.usage.steps;
    const uint64_t peak = r.usage.heap_peak_bytes;
    const uint64_t cpu = r.usage.cpu_ms;
    const uint64_t dropped = r.usage.timers_dropped;
    const uint64_t unhandled = r.usage.unhandled_rejections;
    endpoint.report(r);
    r.usage.steps = steps;
    r.usage.heap_peak_bytes = peak;
    r.usage.cpu_ms = cpu;
    r.usage.timers_dropped = dropped;
    r.usage.unhandled_rejections = unhandled;
    r.usage.wall_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    return r;
  };
  const auto post_mortem = [&](RunResult& r, std::optional<int> status) {
    CrashInfo c;
    c.steps = state.progress.steps;
    c.heap_peak_bytes = state.progress.heap_peak_bytes;
    c.last_request = state.last_request;
    if (status && WIFSIGNALED(*status)) {
      c.signal = signal_name(WTERMSIG(*status));
      c.core_dumped = WCOREDUMP(*status);
    } else if (status && WIFEXITED(*status)) {
      c.exit_code = WEXITSTATUS(*status);
    }
    r.usage.steps = c.steps;
    r.usage.heap_peak_bytes = c.heap_peak_bytes;
    r.crash = std::move(c);
  };
  const auto crashed = [&](std::string message, std::optional<int> status) {
    RunResult r = failure(Outcome::crashed, "WorkerCrashed", std::move(message));
    post_mortem(r, status);
    return finish(std::move(r));
  };
  const auto violation = [&](const std::string& what) {
    w.kill();
    const std::optional<int> status = exit_status(w);
    return crashed("the worker process broke the frame protocol and was killed: " + what + " (" +
                       post_mortem_text(state) + ")",
                   status);
  };

  live.event(RunEvent::Kind::started, invocation.export_name);
  if (send_error) {
    w.kill();
    if (Clock::now() >= deadline) {
      RunResult r = failure(Outcome::timeout, "TimeoutExceeded",
                            "the wall-clock deadline passed (limit is " + std::to_string(limits.timeout_ms) +
                                " ms) before the worker took its invocation");
      return finish(std::move(r));
    }
    return crashed("the worker process ended before it took its invocation: " + send_error->message,
                   exit_status(w));
  }

  bus::FrameReader frames_in(max_frame_from_worker(limits.memory_bytes));
  bus::Bytes frame;
  bool closed = false;
  const auto send_reply = [&](uint64_t id, const bus::Reply& reply) {
    const bus::Bytes bytes = bus::encode_reply(id, reply);
    const bus::Bytes* frames[] = {&bytes};
    // A worker that does not read its replies is killed at the deadline like any late worker.
    (void)bus::write_frames(w.socket.get(), frames, deadline + kKillGrace);
  };

  for (;;) {
    if (cancel_requested.load(std::memory_order_acquire)) {
      w.kill();
      live.event(RunEvent::Kind::cancel_requested, "");
      RunResult r = failure(Outcome::cancelled, "Cancelled",
                            "the run was cancelled by its caller; the worker process was killed (" +
                                post_mortem_text(state) + ")");
      return finish(std::move(r));
    }
    // Relay asynchronous replies first: their requests were sent before anything still unread. Once
    // the invocation must stop (a limit, the deadline) nothing reaches the worker any more: a reply
    // finished at the deadline (an http transfer cut off by it: `Timeout`) would otherwise settle a
    // promise and run the skill's `catch` after its limit. The worker's engine ends the run itself
    // (its deadline is this one, InvocationFrame::deadline_ns) or is killed kKillGrace later.
    for (auto& [id, reply] : sink.take()) {
      if (state.pending_async.erase(id) != 0 && !stop.stop_requested()) send_reply(id, reply);
    }
    // Frames already buffered.
    while (!state.result && state.violation.empty() && frames_in.next(frame)) {
      Result<bus::FromWorker> decoded = bus::decode_from_worker(frame);
      if (!decoded) {
        state.violation = decoded.error().message;
        break;
      }
      if (auto* req = std::get_if<bus::RequestFrame>(&*decoded)) {
        if (req->id <= state.last_id) {
          state.violation = "request id " + std::to_string(req->id) + " after id " +
                            std::to_string(state.last_id) + " (ids must increase)";
          break;
        }
        state.last_id = req->id;
        state.last_request = std::string(bus::request_type_name(req->request));
        // After a limit no request is served and none is answered (see the relay above); a worker
        // waiting for the answer of a synchronous one ends at its deadline.
        if (stop.stop_requested()) continue;
        const bool async = std::holds_alternative<bus::HttpRequest>(req->request);
        std::optional<bus::Reply> reply;
        try {
          reply = endpoint.send(req->id, std::move(req->request));
        } catch (const std::exception& e) {
          reply = bus::ErrorReply{bus::ErrorCode::IoError,
                                  std::string("the host failed to handle the request: ") + e.what()};
        }
        if (reply) {
          // A request served while the deadline passed (a long statement, a lock wait cut off by
          // it) is not answered either: its reply is the limit's, and no skill code may see it.
          if (!stop.stop_requested()) send_reply(req->id, *reply);
        } else if (async) {
          state.pending_async.insert(req->id);
        } else if (!stop.stop_requested()) {
          send_reply(req->id, bus::ErrorReply{bus::ErrorCode::IoError,
                                              "internal error: a synchronous request got no reply"});
        }
      } else if (auto* progress = std::get_if<bus::ProgressFrame>(&*decoded)) {
        state.progress = *progress;
        budget.set_engine_bytes(progress->heap_bytes);
      } else {
        state.result = std::move(std::get<bus::ResultFrame>(*decoded));
      }
    }
    if (!state.violation.empty()) return violation(state.violation);
    if (state.result) {
      // Anything after the result is ignored: the worker is done and is killed now, so it cannot go
      // on using CPU, whatever it does after its last frame.
      w.kill();
      RunResult r;
      r.outcome = state.result->outcome;
      r.value_json = std::move(state.result->value_json);
      r.error = std::move(state.result->error);
      r.usage.cpu_ms = state.result->cpu_ms;
      r.usage.steps = state.result->steps;
      r.usage.heap_peak_bytes = state.result->heap_peak_bytes;
      r.usage.timers_dropped = state.result->timers_dropped;
      r.usage.unhandled_rejections = state.result->unhandled_rejections;
      if (r.outcome == Outcome::crashed) {
        // Only the supervisor may say a worker crashed.
        return violation("a result frame with outcome crashed");
      }
      if (r.outcome == Outcome::ok && r.error) r.error.reset();
      // A code comes from the host's own error table (Session::describe); a worker that claims
      // another one is not believed, though the rest of its description is the skill's text anyway.
      if (r.error && !r.error->code.empty() && !bus::is_error_errno(r.error->code)) r.error->code.clear();
      // The contract of RunResult::value_json, whatever the worker claims: a value with ok, and with
      // error only for a bundle (a failing tool's ToolResult, docs/openhuman.md "The lifecycle").
      const bool bundle = invocation.skill.manifest().format == SkillFormat::openhuman;
      if (r.outcome != Outcome::ok && !(r.outcome == Outcome::error && bundle)) r.value_json.clear();
      // The bundle's database: stored only after ok or error, then its lease is released.
      if (auto failed = endpoint.finish_db(r.outcome, std::move(state.result->db_image)))
        r = failure(Outcome::internal, "DbStoreFailed",
                    "the run ended " + std::string(to_string(r.outcome)) +
                        " but its database could not be stored: " + *failed);
      return finish(std::move(r));
    }
    if (closed) {
      if (frames_in.pending_bytes() > 0)
        return violation("the socket closed in the middle of a frame (" +
                         std::to_string(frames_in.pending_bytes()) + " bytes of it arrived)");
      const std::optional<int> status = exit_status(w);
      if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == bus::kWorkerExitOutOfMemory) {
        RunResult r =
            failure(Outcome::memory_limit, "MemoryLimitExceeded",
                    "the worker process ran out of memory outside the engine's heap (its address-space "
                    "limit derives from limits.memory_mb = " +
                        std::to_string(limits.memory_bytes / (1024 * 1024)) + ")");
        post_mortem(r, status);
        return finish(std::move(r));
      }
      std::string how = "the worker process ended without a result";
      if (status && WIFSIGNALED(*status)) {
        how = "the worker process was killed by " + signal_name(WTERMSIG(*status));
        if (WTERMSIG(*status) == SIGSYS) how += " (a system call its seccomp filter forbids)";
        if (WTERMSIG(*status) == SIGXCPU || WTERMSIG(*status) == SIGKILL)
          how += " (its CPU-time rlimit, or killed from outside)";
      } else if (status && WIFEXITED(*status)) {
        const int code = WEXITSTATUS(*status);
        how = "the worker process exited with status " + std::to_string(code) + " without a result";
        if (code >= isolation::kSandboxExitBase &&
            code <= isolation::kSandboxExitBase + static_cast<int>(isolation::kLastStep))
          how += std::string(" (sandbox step ") +
                 isolation::step_name(static_cast<isolation::Step>(code - isolation::kSandboxExitBase)) +
                 " failed)";
      } else if (!status) {
        how += " (its exit status is unknown: the zygote died)";
      }
      return crashed(how + " (" + post_mortem_text(state) + ")", status);
    }

    // Wait for the worker, a relayed reply or the deadline.
    const auto now = Clock::now();
    if (now >= deadline + kKillGrace) {
      w.kill();
      RunResult r = failure(Outcome::timeout, "TimeoutExceeded",
                            "the wall-clock deadline passed (limit is " + std::to_string(limits.timeout_ms) +
                                " ms); the worker process was killed (" + post_mortem_text(state) + ")");
      post_mortem(r, std::nullopt);
      r.crash->signal = "SIGKILL";
      return finish(std::move(r));
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline + kKillGrace - now).count() + 1;
    pollfd fds[3] = {{w.socket.get(), POLLIN, 0}, {sink.fd(), POLLIN, 0}, {w.pidfd.get(), POLLIN, 0}};
    const int n = ::poll(fds, 3, static_cast<int>(std::min<int64_t>(left, 60'000)));
    if (n < 0) continue;  // EINTR
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0 || (fds[2].revents & POLLIN) != 0) {
      const bus::FrameReader::Status s = frames_in.fill(w.socket.get());
      if (s == bus::FrameReader::Status::error) state.violation = frames_in.error();
      if (s == bus::FrameReader::Status::eof) closed = true;
      // The process ended: whatever it wrote is buffered now (the socket still holds it).
      if ((fds[2].revents & POLLIN) != 0 && s == bus::FrameReader::Status::progress &&
          (fds[0].revents & POLLIN) == 0)
        closed = true;
    }
  }
}

WorkerRunner::WorkerRunner(HostOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

WorkerRunner::~WorkerRunner() = default;

RunResult WorkerRunner::run(const Invocation& invocation) {
  try {
    const std::shared_ptr<const TenantContext> tenant =
        invocation.tenant ? invocation.tenant : impl_->default_tenant;
    const Limits limits = runner::effective_limits(invocation, *tenant);
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::milliseconds(limits.timeout_ms);
    if (invocation.cancel.cancelled())
      return failure(Outcome::cancelled, "Cancelled",
                     "the run was cancelled by its caller before it started");
    if (auto refused = runner::refuse_before_start(invocation, *tenant)) return *std::move(refused);
    const Skill& skill = invocation.skill;
    auto sources = impl_->source_cache.read(skill.dir(), skill.manifest().entry, limits.memory_bytes);
    if (!sources) return failure(Outcome::invalid, "InvalidSkill", sources.error().message);
    Result<Worker, std::string> worker = impl_->acquire();
    if (!worker) return isolation_unavailable(worker.error());
    if (invocation.observer.empty())
      return impl_->supervise(*worker, invocation, limits, start, deadline, std::move(*sources));
    // Observer callbacks never run on the caller's thread (skillbox.h): supervise on a pool thread and
    // wait. supervise() returns by the deadline plus bounded waits, so nothing is ever abandoned.
    std::mutex m;
    std::condition_variable done_cv;
    std::optional<RunResult> result;
    const bool started = impl_->observer_threads.submit([&] {
      RunResult r = impl_->supervise(*worker, invocation, limits, start, deadline, std::move(*sources));
      std::lock_guard<std::mutex> lock(m);
      result = std::move(r);
      done_cv.notify_all();
    });
    if (!started) {
      worker->kill();
      return failure(Outcome::internal, "InternalError", "could not start a thread to supervise the worker");
    }
    std::unique_lock<std::mutex> lock(m);
    done_cv.wait(lock, [&] { return result.has_value(); });
    return std::move(*result);
  } catch (const std::exception& e) {
    return failure(Outcome::internal, "InternalError",
                   std::string("skillbox failed to run the skill: ") + e.what());
  }
}

Result<void> WorkerRunner::check_support(const HostOptions& options) {
  const std::filesystem::path path = find_worker(options);
  if (access(path.c_str(), X_OK) != 0) {
    return Error{"process isolation: the worker executable " + path.string() + " is missing (" +
                 base::errno_text(errno) +
                 "); set HostOptions::worker_path (with CMake: $<TARGET_FILE:skillbox::worker>), or "
                 "choose in-process isolation explicitly (InProcessRunner; --isolation=inprocess)"};
  }
  isolation::Result<isolation::PreparedSandbox> prepared = isolation::prepare_sandbox();
  if (!prepared) return Error{isolation::describe(prepared.error())};
  return {};
}

std::vector<int> WorkerRunner::pooled_worker_pids() const {
  base::MutexLock lock(impl_->mu);
  std::vector<int> out;
  for (const Worker& w : impl_->pool) out.push_back(w.pid);
  return out;
}

int WorkerRunner::zygote_pid() const {
  base::MutexLock lock(impl_->mu);
  return impl_->zygote_pid;
}

}  // namespace skillbox
