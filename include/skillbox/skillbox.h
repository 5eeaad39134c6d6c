// skillbox/skillbox.h — the public C++ API of libskillbox.
//
// Embedding in a few lines:
//
//   auto skill = skillbox::Skill::load("examples/skills/hello");
//   if (!skill) { std::cerr << skill.error().message << "\n"; return 2; }
//   skillbox::InProcessRunner runner;
//   skillbox::RunResult r = runner.run({.skill = *skill, .input_json = R"({"name":"Ada"})"});
//   std::cout << skillbox::to_string(r.outcome) << " " << r.value_json << "\n";
//
// Each call of Runner::run builds a fresh QuickJS runtime and context, installs the limits and the host
// API granted by the skill's manifest, runs the requested export and disposes of everything; nothing is
// reused between invocations. The contract (outcomes, exit codes, usage fields) is in docs/architecture.md
// "Contracts".
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skillbox/credentials.h"
#include "skillbox/policy.h"
#include "skillbox/result.h"
#include "skillbox/tenant.h"
#include "skillbox/version.h"

namespace skillbox {

/// How an invocation ended. Exit codes of the CLI are given beside each value (docs/architecture.md
/// "Contracts").
enum class Outcome : uint8_t {
  ok,              // 0: the export's promise fulfilled with a JSON-representable value
  error,           // 1: the skill threw or rejected (or returned a value JSON cannot represent)
  invalid,         // 2: bad manifest, bad CLI input, unreadable skill, missing export, code that does not
                   //    compile or a static import that cannot be loaded (no skill code ran)
  memory_limit,    // 10: the heap limit was hit
  step_limit,      // 11: the step budget ran out
  timeout,         // 12: the wall-clock deadline passed
  stack_overflow,  // 13: the JS stack limit was hit
  crashed,         // 20: the worker process died (worker mode only)
  internal,        // 70: a bug or host failure in skillbox itself
  cancelled,       // 130: the caller cancelled the run (CancelToken::cancel; the CLI on Ctrl-C or SIGTERM)
};

/// Stable lower-case name of an outcome ("ok", "memory_limit", ...).
[[nodiscard]] std::string_view to_string(Outcome outcome);
/// Process exit code of an outcome, per docs/architecture.md "Contracts".
[[nodiscard]] int exit_code(Outcome outcome);

/// How Skill::load treats a folder.
struct SkillLoadOptions {
  /// The skill's id, chosen by the embedder instead of the manifest's `id` (which must still be a
  /// valid manifest). Empty: the manifest's. Must follow the id rule of docs/manifest.md. Either way
  /// the id is bound to the folder by the rule of docs/manifest.md "Identity".
  std::string id;
};

/// A loaded, validated skill: its folder and manifest. Cheap to copy.
class Skill {
 public:
  /// Reads `dir/skill.json`, validates the whole schema (docs/manifest.md) and checks that the entry
  /// file exists inside `dir`. Errors name the key path and what was expected, e.g.
  /// "skill.json: limits.memory_mb: expected an integer between 1 and 4096, got \"lots\"". With
  /// `options.id` set, manifest().id is that id (an invalid one is an error naming the rule).
  static Result<Skill> load(const std::filesystem::path& dir, const SkillLoadOptions& options = {});

  /// Validates manifest JSON text without touching the disk (used by tests and embedders).
  static Result<Manifest> parse_manifest(std::string_view json_text);

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] const Manifest& manifest() const { return manifest_; }

  Skill(std::filesystem::path dir, Manifest manifest)
      : dir_(std::move(dir)), manifest_(std::move(manifest)) {}

 private:
  std::filesystem::path dir_;  // absolute, canonical
  Manifest manifest_;
};

/// Loads a skill folder of either format: an OpenHuman bundle when the folder holds manifest.json
/// (docs/openhuman.md "Loading a bundle": a skill.json beside it holds only the operator's `limits`
/// and `permissions`), else a skillbox skill through Skill::load. Errors name the file and key.
Result<Skill> load_skill(const std::filesystem::path& dir);

/// Resource use of one invocation (docs/architecture.md "Contracts").
struct Usage {
  uint64_t wall_ms = 0;          // wall-clock time from runtime creation to disposal
  uint64_t cpu_ms = 0;           // CPU time of the thread that ran the skill
  uint64_t steps = 0;            // steps counted, see docs/limits.md
  uint64_t heap_peak_bytes = 0;  // peak bytes the runtime held: its arena's footprint (docs/limits.md "Heap")
  uint64_t host_peak_bytes = 0;  // peak host buffers held for the run (docs/limits.md "Host memory")
  uint64_t host_calls = 0;       // requests sent on the bus (log, fs, http, store, env)
  uint64_t http_bytes_in = 0;    // response body bytes received (after decoding)
  uint64_t http_bytes_out = 0;   // request body bytes sent
  uint64_t timers_dropped = 0;   // timers still pending when the run ended
  // Promises rejected with no handler once the jobs queued at that point had run (the export's own
  // promise aside: its rejection is the run's error). Each also gets a warn log line (docs/limits.md).
  uint64_t unhandled_rejections = 0;
};

/// A skill error: an uncaught exception or rejection, or a host-side description of a limit.
struct ErrorInfo {
  std::string name;     // e.g. "TypeError", "PermissionDenied", "InternalError"
  std::string message;  // the error's message
  std::string stack;    // stack trace with skill-relative file names; never a host path
  std::string code;     // host error code ("EACCES", ...) when the error is one a host function made
                        // in this run (rethrown or not); never a `code` property the skill wrote
};

/// One line of skill output from `log`/`console.*`, already escaped and truncated.
struct LogEntry {
  enum class Level : uint8_t { debug, info, warn, error };
  Level level = Level::info;
  std::string message;
};
[[nodiscard]] std::string_view to_string(LogEntry::Level level);

/// Something a skill reported that is neither a log line nor its result (OpenHuman bundles:
/// `platform.notify`, `memory.insert`, `oauth.revoke`, the inert `cron` registrations; see
/// docs/openhuman.md "Events"). In the order the skill made them.
/// Also streamed to the Observer as it happens (RunEvent::Kind::skill_event).
struct Event {
  /// "notify", "memory.insert", "oauth.revoke", "cron.register" or "cron.unregister" (the host refuses
  /// any other type, InvalidArgument).
  std::string type;
  /// The event's fields as one JSON object (text, valid UTF-8; the host refuses anything else), e.g.
  /// {"title":"t","body":"b"}. A run's events hold at most 1 MiB of data_json in total.
  std::string data_json;
};

/// What a worker process left behind when it was killed or died (WorkerRunner only): set with
/// outcome `crashed`, and with `timeout` when the worker was killed at the deadline. The counters are
/// the worker's own last report (sent before each host request), so they lag behind a worker that
/// spent its time without calling the host.
struct CrashInfo {
  std::string signal;            // "SIGSEGV", "SIGSYS", "SIGKILL", ...; empty when it exited by itself
  int exit_code = -1;            // its exit status when it exited by itself, else -1
  bool core_dumped = false;      // the kernel reported a core dump (RLIMIT_CORE is 0, so none was written)
  uint64_t steps = 0;            // steps as last reported
  uint64_t heap_peak_bytes = 0;  // heap peak as last reported
  std::string last_request;      // type of the last host request it sent ("FsReadFileRequest"), or empty
};

/// The result of one invocation.
struct RunResult {
  Outcome outcome = Outcome::internal;
  /// The export's result as JSON text when outcome == ok ("null" for undefined), else empty. One
  /// exception: an OpenHuman bundle whose tool call threw or rejected ends with outcome `error`, the
  /// error in `error`, and here the failing tool's ToolResult
  /// {"content":[{"type":"text","text":MESSAGE}],"is_error":true} (MESSAGE = error->message); for a
  /// sequence, the array of the results of the calls before it followed by that ToolResult (a failing
  /// hook adds no entry, and a hook called alone leaves this empty). A failure outside the calls
  /// (the bundle's evaluation, init, start, stop) or a limit leaves it empty (docs/openhuman.md
  /// "The lifecycle").
  std::string value_json;
  /// Set for every outcome except ok.
  std::optional<ErrorInfo> error;
  std::vector<LogEntry> logs;
  /// Events of the run (see Event), also for outcomes other than ok.
  std::vector<Event> events;
  Usage usage;
  /// WorkerRunner only: the post-mortem of a worker that crashed or was killed (see CrashInfo).
  std::optional<CrashInfo> crash;
};

/// Host environment of invocations: where data lives and which environment values `env.get` sees.
struct HostOptions {
  /// Data directory (workspaces, store). Empty: $SKILLBOX_HOME, else $XDG_DATA_HOME/skillbox, else
  /// ~/.local/share/skillbox.
  std::filesystem::path data_dir;
  /// Values offered to `env.get` (still filtered by the manifest's `permissions.env`). When unset,
  /// the process environment is used.
  std::optional<std::map<std::string, std::string>> env;
  /// Extra CA certificate file (PEM) trusted in addition to the system bundle. Tests only.
  std::filesystem::path extra_ca_file;
  /// InProcessRunner only: how many abandoned runs (see InProcessRunner::abandoned_runs) may still be
  /// executing before run() refuses to start another. Each one keeps a core busy and its heap (up to
  /// its memory limit) allocated until its native call returns, so the default of 2 bounds that stray
  /// use to two cores while tolerating a rare abandoned run. Values below 1 count as 1.
  size_t max_abandoned_runs = 2;
  /// Credentials of OpenHuman bundles by skill id (`--credentials FILE`, load_credentials_file()).
  /// Secret values stay on the host side: the bundle sees placeholders, and the http capability puts
  /// the real value into header values of requests to the hosts the credential is bound to
  /// (docs/openhuman.md "Secrets").
  std::map<std::string, SkillCredentials> credentials;
  /// Origins mapped to others, for testing bundles that hard-code origins against local servers
  /// (`--map-origin https://api.notion.com=http://127.0.0.1:8080`, docs/openhuman.md "Origin map"):
  /// {from, to}, each "scheme://host[:port]". Policy (the allowlist, credential bindings) is checked
  /// against the original URL; the request then goes to `to` with the same path and query, and the
  /// connect-time address checks apply to `to` unless permissions.http.allow_private_addresses. Only
  /// the operator sets these; a skill cannot.
  std::vector<std::pair<std::string, std::string>> origin_map;
  /// Lets the skill connect to origin_map targets whose host is a literal loopback address
  /// (127.0.0.0/8, [::1]) without permissions.http.allow_private_addresses: for fixture servers and
  /// mocks the operator runs on this machine (`skillbox test` sets it, docs/cli.md). Only the exact
  /// endpoints (address and port) of such targets are exempt; every other address keeps the
  /// connect-time check. Default off.
  bool trust_loopback_origin_map_targets = false;
  /// WorkerRunner only: the `skillbox-worker` executable. Empty: `skillbox-worker` in the directory
  /// of the running executable, then `bin/skillbox-worker` under the install prefix skillbox was
  /// configured with (CMAKE_INSTALL_PREFIX; `cmake --install --prefix P` does not move it). Embedders
  /// using CMake pass `$<TARGET_FILE:skillbox::worker>` (docs/embedding.md, "Worker mode").
  std::filesystem::path worker_path;
  /// WorkerRunner only: how many forked, sandboxed workers wait for invocations, refilled in the
  /// background. 0 forks each worker on demand (slower by one fork and sandbox setup per call).
  size_t worker_pool_size = 2;
};

/// A point on the monotonic clock (std::chrono::steady_clock) of this process: comparable between the
/// callbacks of one run and across runs, never a wall-clock time.
using Timestamp = std::chrono::steady_clock::time_point;

/// Something that happened during a run, other than a log line (Observer::on_event).
struct RunEvent {
  enum class Kind : uint8_t {
    /// The skill's sources were read and its runtime is being built. `detail`: the export asked for
    /// (empty for the default: `default`, then `run`).
    started,
    /// The skill called a host function other than `log`/`console.*`, and the host received the call.
    /// `detail`: the function and its main argument, e.g. "http GET https://api.example.com/v1",
    /// "fs.writeFile notes.txt", "store.set counter", "env.get API_KEY"; a call refused at once ends
    /// with its error name, e.g. "fs.writeFile notes.txt -> PermissionDenied". Escaped to one line
    /// of printable text (as log messages are) and at most 512 bytes.
    host_call,
    /// The run's CancelToken was triggered while the run was going; it is being stopped.
    cancel_requested,
    /// An OpenHuman bundle reported an Event (`platform.notify`, `memory.insert`, `oauth.revoke`, a
    /// `cron` registration; docs/openhuman.md "Events"), streamed the moment the host accepted it, so
    /// the same event is also in RunResult::events, in the same order. `detail`: the event's type
    /// (Event::type, one of the names listed there); `data_json`: its fields (Event::data_json). An
    /// event refused by the run's event budget is not streamed (its host_call event ends with
    /// "-> QuotaExceeded"). It comes right after the host_call event "event TYPE" of the same call.
    skill_event,
  };
  Kind kind = Kind::started;
  std::string detail;
  /// skill_event only: the event's fields as one JSON object (text, valid UTF-8), exactly as in
  /// Event::data_json: up to 1 MiB, made by the skill (its content is the skill's, not checked against
  /// any schema; not escaped for a terminal, unlike `detail`). Empty for every other kind.
  std::string data_json{};
};
/// Stable lower-case name of an event kind ("started", "host_call", "cancel_requested", "skill_event").
[[nodiscard]] std::string_view to_string(RunEvent::Kind kind);

/// Live view of one run: each log line and each event as it happens, with the time it happened.
/// Either function may be empty. Every line also ends up in RunResult::logs as before.
///
/// Threading: the callbacks are called on a thread of the runner, never on the caller's own thread
/// and never two at once for one run (InProcessRunner: the JS thread running the skill; a worker
/// runner: its supervisor thread). They are called only while Runner::run() of that invocation is
/// executing, never after it returned. The skill waits while a callback runs, and its wall-clock
/// deadline keeps counting: a callback must not block long (hand the line to a queue, print it, no
/// network round trip). A callback must not throw (an exception is caught and dropped) and must not
/// call run() of the same runner.
struct Observer {
  std::function<void(const LogEntry& entry, Timestamp at)> on_log;
  std::function<void(const RunEvent& event, Timestamp at)> on_event;

  [[nodiscard]] bool empty() const { return !on_log && !on_event; }
};

/// Lets an embedder stop a run from another thread. A CancelToken is a handle: copies share one state,
/// so the copy inside an Invocation and the embedder's copy are the same token. Cancelling is
/// idempotent and never undone; one token may serve several runs (all of them stop).
///
///   skillbox::CancelToken cancel;
///   std::thread stopper([cancel] { std::this_thread::sleep_for(2s); cancel.cancel(); });
///   auto r = runner.run({.skill = *skill, .cancel = cancel});   // r.outcome == Outcome::cancelled
///
/// A run whose token is triggered ends with outcome `cancelled` (exit code 130), error name
/// "Cancelled", and the log lines written until then. A token cancelled before run() is called makes
/// run() return `cancelled` at once without starting the skill. Like a deadline, cancelling interrupts
/// the skill at its next step or allocation; a native operation that does neither is abandoned 1 s
/// later (InProcessRunner::run).
class CancelToken {
  struct State;
  struct Link;

 public:
  /// A fresh token, not cancelled.
  CancelToken();

  /// Marks the token cancelled and stops every run using it. Any thread; idempotent. Not
  /// async-signal-safe (it takes a mutex): from a signal handler, wake a thread that calls it.
  void cancel() const;
  /// True once cancel() was called on any copy. Any thread.
  [[nodiscard]] bool cancelled() const;

  /// For Runner implementations: the registration made by subscribe(). Destroying or resetting it
  /// unsubscribes.
  class Subscription {
   public:
    Subscription() = default;
    ~Subscription() { reset(); }
    Subscription(Subscription&& other) noexcept = default;
    Subscription& operator=(Subscription&& other) noexcept;
    Subscription(const Subscription&) = delete;
    Subscription& operator=(const Subscription&) = delete;
    /// Unsubscribes; after it returns, the callback is not running and never runs again. Must not
    /// be called from inside the callback.
    void reset();

   private:
    friend class CancelToken;
    std::shared_ptr<Link> link_;
  };

  /// For Runner implementations: calls `on_cancel` once when the token is cancelled (at once, on this
  /// thread, if it already is), until the returned Subscription is destroyed or reset. `on_cancel`
  /// runs on the thread that calls cancel(), under the token's lock: it must only signal (raise a
  /// flag, notify a condition variable), never wait, and must not touch this token.
  [[nodiscard]] Subscription subscribe(std::function<void()> on_cancel) const;

 private:
  std::shared_ptr<State> state_;
};

/// A problem check_code() found in a skill's JavaScript.
struct CodeProblem {
  std::string file;   // skill-relative name of the file at fault ("index.js", "lib/util.js")
  uint32_t line = 0;  // 1-based line, 0 when the engine did not say
  std::string message;
};

/// What check_code() found in a skill's JavaScript.
struct CodeCheck {
  /// Every problem found: a syntax error, an import that does not resolve, a file that cannot be read.
  /// Empty when the code is fine.
  std::vector<CodeProblem> problems;
  /// True when the entry is an ES module (false: a classic script, whose exports are the functions it
  /// defines at top level, known only when it runs).
  bool entry_is_module = false;
  /// The entry module's export names, sorted ("default" among them when it has one), as a run would
  /// find them: its own and those of `export * from`. Empty for a script or when there are problems.
  std::vector<std::string> exports;
};

/// Compiles the skill's entry and every importable file (.js, .mjs, .cjs in the folder) the way a run
/// would, in a throwaway runtime under the skill's heap and stack limits, resolves the import
/// specifiers of every module (only relative specifiers of files in the folder resolve) and lists the
/// entry's exports. None of the skill's code runs. Named imports are not matched against the exports
/// of the imported module (a run does that when it links them). Thread-safe; takes a thread of its
/// own for the compile (8 MiB stack), so it may be called from any thread.
[[nodiscard]] CodeCheck check_code(const Skill& skill);

/// Checks one origin-map entry "FROM=TO" (HostOptions::origin_map) and returns it split, or why not.
Result<std::pair<std::string, std::string>> parse_origin_mapping(std::string_view text);

/// Returns the data directory `options` resolves to (see HostOptions::data_dir), as an absolute path.
/// Empty only when none can be found (no $HOME and no password-database entry for the user).
[[nodiscard]] std::filesystem::path resolve_data_dir(const HostOptions& options);

/// Which skill folder owns a skill id in a data directory (docs/manifest.md "Identity"). The first
/// invocation of an id binds it to its folder's canonical path; an invocation of the same id from any
/// other folder then ends `invalid` (before any skill code or capability runs) until the id is rebound.
struct SkillBinding {
  std::string id;
  std::filesystem::path dir;  // the owning folder, absolute and canonical; empty when `problem` is set
  std::string problem;        // skill_bindings() only: why this id's owner cannot be read, else empty
};

/// Binds `id` to the folder `dir` (symbolic links resolved) in the data directory of `options`, as the
/// first invocation would, unless the id already has an owner. Returns the binding when `dir` owns the
/// id (now or already). Errors, with a message saying what to do: an invalid id, `dir` missing or not
/// a folder, the id owned by another folder, a damaged owner file, an unwritable data directory.
/// Concurrent first bindings (threads or processes) produce exactly one owner.
[[nodiscard]] Result<SkillBinding> bind_skill(const HostOptions& options, std::string_view id,
                                              const std::filesystem::path& dir);

/// Makes the folder `dir` the owner of `id` in the data directory of `options`, replacing any owner
/// (also a damaged owner file) atomically: what the operator does after moving a skill folder or to
/// hand an id to another folder (`skillbox skills rebind`). The id's store, workspace and granted
/// secrets then belong to `dir`; the previous folder is refused. Errors: an invalid id, `dir` missing
/// or not a folder, an unwritable data directory.
[[nodiscard]] Result<SkillBinding> rebind_skill(const HostOptions& options, std::string_view id,
                                                const std::filesystem::path& dir);

/// Every bound id of the data directory of `options`, sorted by id; an id whose owner file is damaged
/// or unreadable is listed with `problem` set. No data directory yet: an empty list. Changes nothing.
[[nodiscard]] Result<std::vector<SkillBinding>> skill_bindings(const HostOptions& options);

/// One call of a skill's export.
///
/// For an OpenHuman bundle (SkillFormat::openhuman) the export name chooses what runs after the
/// bundle, `init()` and `start({oauth, auth})`, and before `stop()` (docs/openhuman.md "Lifecycle"):
/// "tool:NAME" runs that tool's execute(input), "hook:NAME" the hook NAME(input), "tools" lists the
/// tools without calling any hook; an empty name reads the input as a sequence, a JSON array of
/// {"tool": NAME, "args": ...} and {"hook": NAME, "args": ...}, run in order in one runtime.
struct Invocation {
  Skill skill;
  /// Export to call. Empty: `default`, then `run`. For a bundle, see above.
  std::string export_name{};
  /// Input as JSON text, passed to the export parsed. Default `null`.
  std::string input_json = "null";
  /// Host lowering of the manifest's limits.
  LimitOverrides overrides{};
  /// Per-run narrowing of the manifest's permissions (PolicyNarrowing: it only takes away). An
  /// invalid `allow_http` entry makes the run `invalid` before anything starts.
  PolicyNarrowing narrowing{};
  /// Live log lines and events of the run (see Observer for the thread and the rules). Default: none.
  Observer observer{};
  /// Trigger from another thread to stop the run with outcome `cancelled` (see CancelToken).
  CancelToken cancel{};
  /// Whose invocation this is: the tenant's state backends, env values, origin map and ceilings
  /// (skillbox/tenant.h). Null: the runner's default tenant, built once from its HostOptions.
  std::shared_ptr<const TenantContext> tenant{};
};

/// Runs invocations. Implementations: InProcessRunner (the engine's wall only) and WorkerRunner (each
/// invocation in its own sandboxed process), with the same contract and results.
class Runner {
 public:
  virtual ~Runner() = default;
  /// Runs one invocation to completion. Never throws; every failure is reported as an Outcome.
  /// Thread-safe: several threads may call run() on one Runner at once.
  virtual RunResult run(const Invocation& invocation) = 0;
};

/// Runs skill code on a dedicated thread of the calling process (so the JS stack limit always sits
/// below a known real stack), with a watchdog for native loops that never reach the interrupt handler.
class InProcessRunner final : public Runner {
 public:
  explicit InProcessRunner(HostOptions options = {});
  ~InProcessRunner() override;
  InProcessRunner(const InProcessRunner&) = delete;
  InProcessRunner& operator=(const InProcessRunner&) = delete;

  /// Runs one invocation (Runner::run). If the deadline passes and the JS thread has still not
  /// stopped 1 s later (a native operation that cannot be interrupted, docs/limits.md), returns
  /// `timeout` without it: the run is *abandoned* and keeps executing on its thread until that
  /// operation returns. While abandoned_runs() is at least HostOptions::max_abandoned_runs, returns at
  /// once, without starting the skill, outcome `internal` with error name "TooManyAbandonedRuns" and a
  /// message naming the limit; runs work again as soon as an abandoned run finishes. (Runs already
  /// started may still be abandoned, so the count can exceed the limit by the number of concurrent
  /// run() calls.)
  RunResult run(const Invocation& invocation) override;

  /// Abandoned runs of this runner still executing (a count, thread-safe). Drops when their native
  /// operation returns and they free their runtime.
  [[nodiscard]] size_t abandoned_runs() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Runs each invocation in a one-shot worker process: forked from a zygote (a `skillbox-worker` the
/// runner starts on first use), sandboxed before it reads any input (no file descriptor but its
/// socket, rlimits, no_new_privs, Landlock with no rights, a seccomp allowlist), answered by the same
/// capabilities and policy as in-process, killed at the deadline (docs/isolation.md).
///
/// Outcomes are those of InProcessRunner, plus `crashed` (with RunResult::crash) when the worker dies,
/// is killed for a forbidden system call or sends a frame it must not; a late worker is killed, so no
/// run is ever abandoned. Where the kernel lacks seccomp or Landlock, or the worker executable cannot
/// be started, run() fails closed: outcome `internal`, error name "IsolationUnavailable", a message
/// naming what is missing and that in-process isolation must then be chosen explicitly.
class WorkerRunner final : public Runner {
 public:
  explicit WorkerRunner(HostOptions options = {});
  /// Stops the zygote, which kills and reaps every worker. No run() may be in progress.
  ~WorkerRunner() override;
  WorkerRunner(const WorkerRunner&) = delete;
  WorkerRunner& operator=(const WorkerRunner&) = delete;

  /// Runner::run. Thread-safe; each call supervises its worker on the calling thread.
  RunResult run(const Invocation& invocation) override;

  /// Whether process isolation can run here: the worker executable is found and the kernel has what
  /// the sandbox needs (probed in this process; nothing is started). The error says what is missing.
  static Result<void> check_support(const HostOptions& options = {});

  /// Process ids of the workers waiting in the pool (diagnostics and tests).
  [[nodiscard]] std::vector<int> pooled_worker_pids() const;
  /// Process id of the zygote, or -1 while none runs (diagnostics and tests).
  [[nodiscard]] int zygote_pid() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox
